#include "pulse/core/model/resource_id.h"

namespace pulse::core {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool IsLocalChar(char c) {
  return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '@' ||
         c == '/' || c == '-';
}

}  // namespace

std::optional<CanonicalResourceId> ParseCanonicalResourceId(std::string_view text) {
  if (text.empty() || text.size() > kMaxResourceIdBytes) {
    return std::nullopt;
  }
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 32) {
    return std::nullopt;
  }
  const std::string_view type = text.substr(0, colon);
  const std::string_view local = text.substr(colon + 1);
  if (!(type[0] >= 'a' && type[0] <= 'z')) {
    return std::nullopt;
  }
  for (char c : type) {
    if (!IsLowerAlnum(c) && c != '-') {
      return std::nullopt;
    }
  }
  if (local.empty()) {
    return std::nullopt;
  }
  for (char c : local) {
    if (!IsLocalChar(c)) {
      return std::nullopt;
    }
  }
  // '/' separates path-like segments (service:pve1/nginx); each must be a real name.
  std::size_t start = 0;
  while (start <= local.size()) {
    const std::size_t slash = local.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? local.size() : slash;
    const std::string_view segment = local.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..") {
      return std::nullopt;
    }
    if (slash == std::string_view::npos) {
      break;
    }
    start = slash + 1;
  }
  return CanonicalResourceId{std::string(type), std::string(local)};
}

bool IsCanonicalResourceId(std::string_view text) {
  return ParseCanonicalResourceId(text).has_value();
}

}  // namespace pulse::core
