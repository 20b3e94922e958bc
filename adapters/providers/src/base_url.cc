#include "pulse/adapters/providers/base_url.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace pulse::adapters::providers {
namespace {

absl::Status Invalid(std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("base URL ", absl::string_view(why.data(), why.size())));
}

bool IsHostNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

bool IsIpv6Char(char c) {
  return absl::ascii_isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
}

// RFC 3986 path characters we accept (unreserved, sub-delims, ':', '@', '/', '%').
bool IsPathChar(char c) {
  if (absl::ascii_isalnum(static_cast<unsigned char>(c))) {
    return true;
  }
  switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case ';':
    case '=':
    case ':':
    case '@':
    case '/':
    case '%':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string BaseUrl::Origin() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return absl::StrCat(https ? "https://" : "http://", ipv6 ? "[" : "", host, ipv6 ? "]" : "", ":",
                      port);
}

std::string BaseUrl::Target(std::string_view path) const {
  return absl::StrCat(path_prefix, absl::string_view(path.data(), path.size()));
}

absl::StatusOr<BaseUrl> ParseBaseUrl(std::string_view text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return Invalid("must not contain whitespace, control or non-ASCII characters");
    }
  }
  BaseUrl url;
  const std::size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) {
    return Invalid("must start with http:// or https://");
  }
  const std::string scheme = absl::AsciiStrToLower(absl::string_view(text.data(), scheme_end));
  if (scheme == "https") {
    url.https = true;
    url.port = 443;
  } else if (scheme == "http") {
    url.https = false;
    url.port = 80;
  } else {
    return Invalid("must use http or https");
  }
  std::string_view rest = text.substr(scheme_end + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Invalid("must not have a query or fragment");
  }
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    return Invalid("must not contain user credentials; configure the API key instead");
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Invalid("has a malformed IPv6 host");
    }
    std::string_view host = authority.substr(1, close - 1);
    if (host.empty() || host.find(':') == std::string_view::npos) {
      return Invalid("has a malformed IPv6 host");
    }
    for (char c : host) {
      if (!IsIpv6Char(c)) {
        return Invalid("has a malformed IPv6 host");
      }
    }
    url.host = std::string(host);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Invalid("has a malformed host");
      }
      port_text = after.substr(1);
      if (port_text.empty()) {
        return Invalid("has an empty port");
      }
    }
  } else {
    const std::size_t colon = authority.find(':');
    std::string_view host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) {
        return Invalid("has an empty port");
      }
    }
    if (host.empty()) {
      return Invalid("has no host");
    }
    for (char c : host) {
      if (!IsHostNameChar(c)) {
        return Invalid("has a malformed host");
      }
    }
    if (host.front() == '.' || host.front() == '-') {
      return Invalid("has a malformed host");
    }
    url.host = absl::AsciiStrToLower(absl::string_view(host.data(), host.size()));
  }
  if (!port_text.empty()) {
    std::int32_t port = 0;
    for (char c : port_text) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
        return Invalid("has a malformed port");
      }
    }
    if (port_text.size() > 5 ||
        !absl::SimpleAtoi(absl::string_view(port_text.data(), port_text.size()), &port) ||
        port < 1 || port > 65535) {
      return Invalid("has a port outside 1..65535");
    }
    url.port = port;
  }
  for (char c : path) {
    if (!IsPathChar(c)) {
      return Invalid("has a path with characters that must be percent-encoded");
    }
  }
  while (!path.empty() && path.back() == '/') {
    path.remove_suffix(1);
  }
  url.path_prefix = std::string(path);
  return url;
}

}  // namespace pulse::adapters::providers
