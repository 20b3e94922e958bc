#include "pulse/adapters/http_client/url.h"

#include <cstdint>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/types/optional.h"
#include "pulse/core/string_view.h"

namespace pulse::http_client {
namespace {

constexpr char kUrlErrorPayload[] = "type.pulse/http_client.url_error";

using core::ToAbsl;

absl::Status Invalid(std::string_view what, std::string_view code, std::string_view why) {
  absl::Status status = absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), " ", ToAbsl(why)));
  status.SetPayload(kUrlErrorPayload, absl::Cord(ToAbsl(code)));
  return status;
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
  return std::string_view("-._~!$&'()*+,;=:@/%").find(c) != std::string_view::npos;
}

bool IsLoopbackIpv4(std::string_view host) {
  std::vector<absl::string_view> parts = absl::StrSplit(ToAbsl(host), '.');
  if (parts.size() != 4 || parts[0] != "127") {
    return false;
  }
  for (absl::string_view part : parts) {
    std::uint32_t value = 0;
    if (part.empty() || part.size() > 3 || !absl::SimpleAtoi(part, &value) || value > 255) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string Url::Origin() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return absl::StrCat(https ? "https://" : "http://", ipv6 ? "[" : "", host, ipv6 ? "]" : "", ":",
                      port);
}

std::string Url::Target(std::string_view path) const {
  return absl::StrCat(path_prefix, ToAbsl(path));
}

bool Url::IsLoopback() const {
  return host == "localhost" || absl::EndsWith(host, ".localhost") || host == "::1" ||
         host == "0:0:0:0:0:0:0:1" || IsLoopbackIpv4(host);
}

absl::StatusOr<Url> ParseUrl(std::string_view text, std::string_view what) {
  if (text.empty()) {
    return Invalid(what, kUrlEmpty, "is empty");
  }
  if (text.size() > kMaxUrlBytes) {
    return Invalid(what, kUrlTooLong, absl::StrCat("is longer than ", kMaxUrlBytes, " bytes"));
  }
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return Invalid(what, kUrlBadCharacters,
                     "must not contain whitespace, control or non-ASCII characters");
    }
  }
  Url url;
  const std::size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) {
    return Invalid(what, kUrlNoScheme, "must start with http:// or https://");
  }
  const std::string scheme = absl::AsciiStrToLower(ToAbsl(text.substr(0, scheme_end)));
  if (scheme == "https") {
    url.https = true;
    url.port = 443;
  } else if (scheme == "http") {
    url.https = false;
    url.port = 80;
  } else {
    return Invalid(what, kUrlBadScheme, "must use http or https");
  }
  std::string_view rest = text.substr(scheme_end + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Invalid(what, kUrlQueryOrFragment, "must not have a query or fragment");
  }
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    return Invalid(what, kUrlUserInfo,
                   "must not contain user credentials; configure the credential instead");
  }
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    std::string_view host =
        close == std::string_view::npos ? std::string_view() : authority.substr(1, close - 1);
    bool ok = !host.empty() && host.find(':') != std::string_view::npos;
    for (char c : host) {
      ok = ok && IsIpv6Char(c);
    }
    if (!ok) {
      return Invalid(what, kUrlBadHost, "has a malformed IPv6 host");
    }
    url.host = std::string(host);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Invalid(what, kUrlBadHost, "has a malformed host");
      }
      port_text = after.substr(1);
      has_port = true;
    }
  } else {
    const std::size_t colon = authority.find(':');
    std::string_view host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
    if (host.empty()) {
      return Invalid(what, kUrlBadHost, "has no host");
    }
    for (char c : host) {
      if (!IsHostNameChar(c)) {
        return Invalid(what, kUrlBadHost, "has a malformed host");
      }
    }
    if (host.front() == '.' || host.front() == '-') {
      return Invalid(what, kUrlBadHost, "has a malformed host");
    }
    url.host = absl::AsciiStrToLower(ToAbsl(host));
  }
  if (has_port) {
    if (port_text.empty()) {
      return Invalid(what, kUrlBadPort, "has an empty port");
    }
    for (char c : port_text) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
        return Invalid(what, kUrlBadPort, "has a malformed port");
      }
    }
    std::int32_t port = 0;
    if (port_text.size() > 5 || !absl::SimpleAtoi(ToAbsl(port_text), &port) || port < 1 ||
        port > 65535) {
      return Invalid(what, kUrlBadPort, "has a port outside 1..65535");
    }
    url.port = port;
  }
  for (char c : path) {
    if (!IsPathChar(c)) {
      return Invalid(what, kUrlBadPath, "has a path with characters that must be percent-encoded");
    }
  }
  while (!path.empty() && path.back() == '/') {
    path.remove_suffix(1);
  }
  url.path_prefix = std::string(path);
  return url;
}

std::string UrlErrorCode(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kUrlErrorPayload);
  return payload.has_value() ? std::string(*payload) : std::string();
}

}  // namespace pulse::http_client
