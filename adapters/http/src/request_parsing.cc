#include "request_parsing.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "pulse/adapters/http/token_authenticator.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::http::internal {
namespace {

absl::StatusOr<std::string> DecodeQueryPart(std::string_view raw) {
  std::string plus_as_space(raw);
  std::replace(plus_as_space.begin(), plus_as_space.end(), '+', ' ');
  absl::StatusOr<std::string> decoded = core::PercentDecode(plus_as_space);
  if (!decoded.ok()) {
    return absl::InvalidArgumentError("the query string has a malformed escape");
  }
  if (!core::IsValidUtf8(*decoded)) {
    return absl::InvalidArgumentError("the query string is not valid UTF-8");
  }
  return decoded;
}

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
    return true;
  }
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

}  // namespace

std::pair<std::string_view, std::string_view> SplitTarget(std::string_view target) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) {
    return {target, std::string_view()};
  }
  return {target.substr(0, q), target.substr(q + 1)};
}

absl::StatusOr<QueryParams> ParseQuery(std::string_view raw_query) {
  QueryParams params;
  std::size_t start = 0;
  while (start <= raw_query.size()) {
    std::size_t end = raw_query.find('&', start);
    if (end == std::string_view::npos) {
      end = raw_query.size();
    }
    const std::string_view piece = raw_query.substr(start, end - start);
    start = end + 1;
    if (piece.empty()) {
      continue;
    }
    if (params.size() >= kMaxQueryParams) {
      return absl::InvalidArgumentError("the query string has too many parameters");
    }
    const std::size_t eq = piece.find('=');
    absl::StatusOr<std::string> name = DecodeQueryPart(piece.substr(0, eq));
    if (!name.ok()) {
      return name.status();
    }
    std::string value;
    if (eq != std::string_view::npos) {
      absl::StatusOr<std::string> decoded = DecodeQueryPart(piece.substr(eq + 1));
      if (!decoded.ok()) {
        return decoded.status();
      }
      value = *std::move(decoded);
    }
    params.emplace(*std::move(name), std::move(value));
  }
  return params;
}

BodyFraming ExamineFraming(const RawRequest& req) {
  BodyFraming framing;
  const std::vector<std::string> lengths = HeaderValues(req, "Content-Length");
  const std::vector<std::string> encodings = HeaderValues(req, "Transfer-Encoding");
  if (lengths.size() > 1 || encodings.size() > 1 || (!lengths.empty() && !encodings.empty())) {
    framing.kind = BodyFraming::Kind::kInvalid;
    return framing;
  }
  if (!encodings.empty()) {
    const absl::string_view te = absl::StripAsciiWhitespace(encodings.front());
    framing.kind = absl::EqualsIgnoreCase(te, "chunked") ? BodyFraming::Kind::kChunked
                                                         : BodyFraming::Kind::kInvalid;
    return framing;
  }
  if (lengths.empty()) {
    return framing;
  }
  const absl::string_view text = absl::StripAsciiWhitespace(lengths.front());
  if (text.empty() || text.size() > 18 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    framing.kind = BodyFraming::Kind::kInvalid;
    return framing;
  }
  std::uint64_t n = 0;
  for (char c : text) {
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  framing.kind = n == 0 ? BodyFraming::Kind::kNone : BodyFraming::Kind::kLength;
  framing.length = n;
  return framing;
}

bool IsJsonContentType(const RawRequest& req) {
  const std::vector<std::string> types = HeaderValues(req, "Content-Type");
  if (types.size() != 1) {
    return false;
  }
  const absl::string_view value = types.front();
  const std::size_t semicolon = value.find(';');
  const absl::string_view media = absl::StripAsciiWhitespace(value.substr(0, semicolon));
  if (!absl::EqualsIgnoreCase(media, "application/json")) {
    return false;
  }
  if (semicolon == absl::string_view::npos) {
    return true;
  }
  // One parameter at most, and only the charset JSON has anyway (RFC 8259: UTF-8).
  absl::string_view parameter = absl::StripAsciiWhitespace(value.substr(semicolon + 1));
  if (parameter.empty()) {
    return true;
  }
  const std::size_t eq = parameter.find('=');
  if (eq == absl::string_view::npos ||
      !absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(parameter.substr(0, eq)), "charset")) {
    return false;
  }
  absl::string_view charset = absl::StripAsciiWhitespace(parameter.substr(eq + 1));
  if (charset.size() >= 2 && charset.front() == '"' && charset.back() == '"') {
    charset = charset.substr(1, charset.size() - 2);
  }
  return absl::EqualsIgnoreCase(charset, "utf-8");
}

std::vector<std::string> HeaderValues(const RawRequest& req, std::string_view name) {
  std::vector<std::string> values;
  for (const auto& [key, value] : req.headers) {
    if (absl::EqualsIgnoreCase(key, core::ToAbsl(name))) {
      values.push_back(value);
    }
  }
  return values;
}

bool RawRequest::HasHeader(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(), [name](const auto& field) {
    return absl::EqualsIgnoreCase(field.first, core::ToAbsl(name));
  });
}

bool ExpectsContent(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

std::vector<std::pair<std::string, std::string>> HandlerHeaders(const RawRequest& req) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : req.headers) {
    std::string lower = absl::AsciiStrToLower(name);
    if (lower == absl::AsciiStrToLower(std::string(kApiTokenHeader)) ||
        lower == absl::AsciiStrToLower(std::string(kAuthorizationHeader))) {
      continue;
    }
    out.emplace_back(std::move(lower), value);
  }
  return out;
}

bool IsSafeHeader(std::string_view name, std::string_view value) {
  if (name.empty() || !std::all_of(name.begin(), name.end(), IsTokenChar)) {
    return false;
  }
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

void AddSecurityHeaders(HttpReply& reply) {
  const auto has = [&reply](std::string_view name) {
    return std::any_of(reply.headers.begin(), reply.headers.end(), [name](const auto& header) {
      return absl::EqualsIgnoreCase(header.first, core::ToAbsl(name));
    });
  };
  static constexpr std::pair<std::string_view, std::string_view> kDefaults[] = {
      {"Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-store"},
  };
  for (const auto& [name, value] : kDefaults) {
    if (!has(name)) {
      reply.headers.emplace_back(std::string(name), std::string(value));
    }
  }
}

}  // namespace pulse::adapters::http::internal
