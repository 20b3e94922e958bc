// Internal to the secret redactor (pulse/core/auth/secret_redactor.h): the span type and the
// character helpers its two files share, and the detectors of credential-file lines
// (secret_file_shapes.cc). Each detector looks at one position and does bounded work there, so
// the scan stays linear. Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace pulse::core::redact_internal {

// One recognised secret: [begin, end) is replaced; the text before `begin` is kept.
struct Secret {
  std::size_t begin = 0;
  std::size_t end = 0;
};

inline bool IsAlnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
inline bool IsUpperOrDigit(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
// Characters of an assignment key or flag name: `db.password`, `--api-key`, `X-API-Token`.
inline bool IsKeyChar(char c) { return IsAlnum(c) || c == '_' || c == '-' || c == '.'; }
// Characters of provider key bodies (base64url plus the separators vendors use).
inline bool IsKeyBodyChar(char c) { return IsAlnum(c) || c == '_' || c == '-'; }
// Characters of a bearer credential (RFC 6750 b64token, plus JWT dots).
inline bool IsBearerChar(char c) {
  return IsAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
         c == '=';
}
inline bool IsSpace(char c) { return c == ' ' || c == '\t'; }
inline bool IsWhitespace(char c) {
  return IsSpace(c) || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
inline char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool StartsWithAt(std::string_view text, std::size_t i, std::string_view prefix) {
  return text.size() - i >= prefix.size() && text.substr(i, prefix.size()) == prefix;
}

// Case-insensitive: `lower_prefix` must be lowercase.
inline bool StartsWithNoCase(std::string_view text, std::size_t i, std::string_view lower_prefix) {
  if (text.size() - i < lower_prefix.size()) {
    return false;
  }
  for (std::size_t k = 0; k < lower_prefix.size(); ++k) {
    if (Lower(text[i + k]) != lower_prefix[k]) {
      return false;
    }
  }
  return true;
}

inline std::size_t SkipWhile(std::string_view text, std::size_t i, bool (*pred)(char)) {
  while (i < text.size() && pred(text[i])) {
    ++i;
  }
  return i;
}

inline bool IsBase64Char(char c) { return IsAlnum(c) || c == '+' || c == '/' || c == '='; }

// The value span starting at `k` (quoted or bare); nullopt when empty.
std::optional<Secret> ValueAt(std::string_view text, std::size_t k);

// ---- credential files (secret_file_shapes.cc) ------------------------------------------------

// A crypt(3) password hash at `i` (a '$').
std::optional<Secret> CryptHash(std::string_view text, std::size_t i);
// A Ceph secret (`AQ` + 36 base64 characters + `==`) at `i`.
std::optional<Secret> CephSecret(std::string_view text, std::size_t i);
// A line starts at `i`: the text's start, after a newline, after an escaped newline (`\n`
// inside a JSON string) or at a JSON string's opening quote.
bool IsLineStart(std::string_view text, std::size_t i);
// The password of a .netrc `password` keyword at `i`.
std::optional<Secret> NetrcPassword(std::string_view text, std::size_t i);
// The password of a postfix sasl_passwd line starting at `i`.
std::optional<Secret> SaslPassword(std::string_view text, std::size_t i);
// The password of a .pgpass line starting at `i`.
std::optional<Secret> PgpassPassword(std::string_view text, std::size_t i);

}  // namespace pulse::core::redact_internal
