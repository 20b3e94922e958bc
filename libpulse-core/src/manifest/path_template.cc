#include "pulse/core/manifest/path_template.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/resource_id.h"

namespace pulse::core {
namespace {

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

bool IsUnreserved(char c) {
  return IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

bool IsLiteralChar(char c) {
  return IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '-' || c == '.' || c == '_';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

bool IsPlaceholderName(std::string_view name) {
  if (name.empty() || !IsAsciiAlpha(name.front())) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return IsAsciiAlpha(c) || IsAsciiDigit(c); });
}

absl::Status TemplateError(std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("path template \"", std::string(path), "\" ", std::string(what)));
}

}  // namespace

absl::StatusOr<std::vector<PathSegment>> ParsePathTemplate(std::string_view path) {
  if (path == "/") {
    return std::vector<PathSegment>{};  // the root: no segment
  }
  if (path.size() < 2 || path.front() != '/') {
    return TemplateError(path, "must start with \"/\"");
  }
  std::vector<PathSegment> segments;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    const std::string_view text = path.substr(start, end - start);
    if (text.empty()) {
      return TemplateError(path, "has an empty segment");
    }
    if (text.front() == '{') {
      if (text.size() < 3 || text.back() != '}' ||
          !IsPlaceholderName(text.substr(1, text.size() - 2))) {
        return TemplateError(path, "has a malformed placeholder");
      }
      const std::string name(text.substr(1, text.size() - 2));
      for (const PathSegment& s : segments) {
        if (s.placeholder && s.text == name) {
          return TemplateError(path, absl::StrCat("repeats the placeholder {", name, "}"));
        }
      }
      segments.push_back(PathSegment{name, true});
    } else {
      if (!std::all_of(text.begin(), text.end(), IsLiteralChar)) {
        return TemplateError(path, "has a literal segment outside [A-Za-z0-9._-]");
      }
      segments.push_back(PathSegment{std::string(text), false});
    }
    start = end + 1;
  }
  return segments;
}

std::vector<std::string> PathPlaceholders(std::string_view path) {
  std::vector<std::string> names;
  absl::StatusOr<std::vector<PathSegment>> segments = ParsePathTemplate(path);
  if (!segments.ok()) {
    return names;
  }
  for (const PathSegment& s : *segments) {
    if (s.placeholder) {
      names.push_back(s.text);
    }
  }
  return names;
}

std::string PercentEncode(std::string_view raw) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(raw.size());
  for (char ch : raw) {
    if (IsUnreserved(ch)) {
      out.push_back(ch);
      continue;
    }
    const auto c = static_cast<unsigned char>(ch);
    out.push_back('%');
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  return out;
}

absl::StatusOr<std::string> PercentDecode(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      out.push_back(encoded[i]);
      continue;
    }
    const int hi = i + 1 < encoded.size() ? HexValue(encoded[i + 1]) : -1;
    const int lo = i + 2 < encoded.size() ? HexValue(encoded[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError("a percent escape is not followed by two hex digits");
    }
    const int value = hi * 16 + lo;
    if (value == 0) {
      return absl::InvalidArgumentError("a percent escape decodes to NUL");
    }
    out.push_back(static_cast<char>(value));
    i += 2;
  }
  return out;
}

absl::Status CheckPathParamValue(std::string_view value) {
  if (value.empty()) {
    return absl::InvalidArgumentError("a path parameter is empty");
  }
  if (value.size() > kMaxPathParamBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a path parameter is longer than ", kMaxPathParamBytes, " bytes"));
  }
  if (!IsValidUtf8(value)) {
    return absl::InvalidArgumentError("a path parameter is not valid UTF-8");
  }
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F) {
      return absl::InvalidArgumentError("a path parameter contains a control character");
    }
    if (ch == '/' || ch == '\\') {
      return absl::InvalidArgumentError("a path parameter contains a slash");
    }
  }
  if (value == "." || value == "..") {
    return absl::InvalidArgumentError("a path parameter is a dot segment");
  }
  return absl::OkStatus();
}

absl::Status CheckPathParam(std::string_view name, std::string_view value) {
  if (name != kResourceIdPathParam) {
    return CheckPathParamValue(value);
  }
  // The canonical rule admits only printable ASCII from a closed set, at most
  // kMaxResourceIdBytes, with no empty, "." or ".." segment around a "/".
  if (!IsCanonicalResourceId(value)) {
    return absl::InvalidArgumentError("not a canonical resource id (type:local)");
  }
  return absl::OkStatus();
}

}  // namespace pulse::core
