// The secret redactor's detectors of credential-file lines (redactor_scan.h): password hashes,
// Ceph secrets, .netrc, .pgpass and postfix sasl_passwd lines.
#include <algorithm>
#include <array>
#include <string_view>

#include "redactor_scan.h"

namespace pulse::core::redact_internal {

// ---- credential files --------------------------------------------------------------------

// A password hash of crypt(3) (/etc/shadow, opasswd, htpasswd): `$6$salt$hash`, `$y$j9T$...`,
// `$2b$12$...`, `$argon2id$v=19$...`. The whole hash goes. `i` is at the '$'.
std::optional<Secret> CryptHash(std::string_view text, std::size_t i) {
  constexpr std::array<std::string_view, 15> kIds = {
      "1", "2a", "2b",   "2x",  "2y",      "5",       "6",       "7",
      "y", "gy", "sha1", "md5", "argon2i", "argon2d", "argon2id"};
  std::size_t k = i + 1;
  const std::size_t id_end = text.find('$', k);
  if (id_end == std::string_view::npos || id_end - k > 8) {
    return std::nullopt;
  }
  const std::string_view id = text.substr(k, id_end - k);
  if (std::find(kIds.begin(), kIds.end(), id) == kIds.end()) {
    return std::nullopt;
  }
  k = id_end + 1;
  if (k >= text.size() || text[k] == '$') {
    return std::nullopt;  // no salt (or cost, or parameters): `$6$$...` is not a hash
  }
  bool salt_separator = false;
  std::size_t last_segment = k;
  const std::size_t start = k;
  // Hashes are far shorter; a longer run is not one (and the bound keeps the scan linear).
  constexpr std::size_t kMaxHashBytes = 256;
  while (k < text.size() && k - start <= kMaxHashBytes &&
         (IsAlnum(text[k]) || text[k] == '.' || text[k] == '/' || text[k] == '$' ||
          text[k] == '=' || text[k] == ',')) {
    if (text[k] == '$') {
      salt_separator = true;
      last_segment = k + 1;
    }
    ++k;
  }
  // The hash itself, after the last '$', is never short.
  if (k - start < 16 || k - start > kMaxHashBytes || !salt_separator || k - last_segment < 8) {
    return std::nullopt;
  }
  return Secret{i, k};
}

// A Ceph secret: base64 of 28 bytes starting with type 1, so `AQ` + 36 characters + `==`.
std::optional<Secret> CephSecret(std::string_view text, std::size_t i) {
  constexpr std::size_t kLength = 40;
  if (!StartsWithAt(text, i, "AQ") || text.size() - i < kLength) {
    return std::nullopt;
  }
  for (std::size_t k = i + 2; k < i + kLength - 2; ++k) {
    if (!IsAlnum(text[k]) && text[k] != '+' && text[k] != '/') {
      return std::nullopt;
    }
  }
  if (text[i + kLength - 2] != '=' || text[i + kLength - 1] != '=' ||
      (i + kLength < text.size() && IsBase64Char(text[i + kLength]))) {
    return std::nullopt;
  }
  return Secret{i, i + kLength};
}

bool IsLineStart(std::string_view text, std::size_t i) {
  return i == 0 || text[i - 1] == '\n' || text[i - 1] == '"' ||
         (i >= 2 && text[i - 2] == '\\' && text[i - 1] == 'n');
}

namespace {

// Where the line holding `i` starts, looking back at most `bound` bytes; npos when further.
std::size_t LineStartBefore(std::string_view text, std::size_t i, std::size_t bound) {
  for (std::size_t k = i; k + bound > i; --k) {
    if (IsLineStart(text, k)) {
      return k;
    }
    if (k == 0) {
      break;
    }
  }
  return std::string_view::npos;
}

bool IsNetrcWordChar(char c) { return !IsWhitespace(c) && c != '"' && c != '\\'; }

// Whether the words from `start` to `stop` are netrc syntax: keyword/value pairs (machine,
// login, account, macdef take a value; default none), `stop` being where the next keyword
// starts or the end of the line. `any` is set when there was at least one word.
bool NetrcPairsUpTo(std::string_view text, std::size_t start, std::size_t stop, bool* any) {
  std::size_t k = SkipWhile(text, start, IsSpace);
  while (k < stop) {
    const std::size_t end = SkipWhile(text, k, IsNetrcWordChar);
    const std::string_view word = text.substr(k, end - k);
    if (word.empty()) {
      return false;
    }
    *any = true;
    k = SkipWhile(text, end, IsSpace);
    if (word == "default") {
      continue;
    }
    if (word != "machine" && word != "login" && word != "account" && word != "macdef") {
      return false;
    }
    const std::size_t value_end = SkipWhile(text, k, IsNetrcWordChar);
    if (value_end == k) {
      return false;
    }
    k = SkipWhile(text, value_end, IsSpace);
  }
  return k == stop;
}

// The end of the line holding `k` (a raw or escaped newline, or a JSON string's end).
std::size_t LineEndAfter(std::string_view text, std::size_t k) {
  while (k < text.size() && text[k] != '\n' && text[k] != '"' &&
         !(text[k] == '\\' && k + 1 < text.size() && text[k + 1] == 'n')) {
    ++k;
  }
  return k;
}

}  // namespace

// `.netrc`: `machine HOST login USER password SECRET`, also one keyword a line. The word after
// `password` goes when everything before it on its line is netrc keyword/value pairs, or it
// opens its line and the line before is netrc pairs, so prose such as "the password is wrong"
// or "machine learning: the password rotation" keeps its words.
std::optional<Secret> NetrcPassword(std::string_view text, std::size_t i) {
  constexpr std::size_t kMaxLookBack = 512;
  if (!StartsWithAt(text, i, "password") || text.size() - i < 10 || !IsSpace(text[i + 8])) {
    return std::nullopt;
  }
  const std::size_t line = LineStartBefore(text, i, kMaxLookBack);
  if (line == std::string_view::npos) {
    return std::nullopt;
  }
  bool any = false;
  if (!NetrcPairsUpTo(text, line, i, &any)) {
    return std::nullopt;
  }
  if (!any) {
    // `password` opens its line: the line before must name the machine or the login.
    if (line == 0 || text[line - 1] == '"') {
      return std::nullopt;
    }
    const std::size_t before = line - (text[line - 1] == '\n' ? 1 : 2);
    const std::size_t previous = LineStartBefore(text, before, kMaxLookBack);
    if (previous == std::string_view::npos ||
        !NetrcPairsUpTo(text, previous, LineEndAfter(text, previous), &any) || !any) {
      return std::nullopt;
    }
  }
  return ValueAt(text, SkipWhile(text, i + 8, IsSpace));
}

// Postfix `sasl_passwd`: `[relay.example.com]:587 user:password`. The password goes. `i` is at
// a line start.
std::optional<Secret> SaslPassword(std::string_view text, std::size_t i) {
  constexpr std::size_t kMaxHostBytes = 256;
  if (text[i] != '[') {
    return std::nullopt;
  }
  std::size_t k = i + 1;
  while (k < text.size() && k - i < kMaxHostBytes && text[k] != ']' && !IsWhitespace(text[k])) {
    ++k;
  }
  if (k >= text.size() || text[k] != ']' || k == i + 1) {
    return std::nullopt;
  }
  ++k;
  if (k < text.size() && text[k] == ':') {
    const std::size_t port = k + 1;
    k = SkipWhile(text, port, [](char c) { return c >= '0' && c <= '9'; });
    if (k == port) {
      return std::nullopt;
    }
  }
  const std::size_t user = SkipWhile(text, k, IsSpace);
  if (user == k) {
    return std::nullopt;
  }
  const std::size_t end = SkipWhile(text, user, IsNetrcWordChar);
  const std::size_t colon = text.substr(user, end - user).find(':');
  if (colon == std::string_view::npos || colon == 0 || user + colon + 1 == end) {
    return std::nullopt;
  }
  return Secret{user + colon + 1, end};
}

// A `.pgpass` line, `host:port:database:user:password` (port digits or `*`): the password,
// to the end of the line, goes. `i` is at a line start.
std::optional<Secret> PgpassPassword(std::string_view text, std::size_t i) {
  constexpr std::size_t kMaxFieldBytes = 256;
  std::size_t k = i;
  std::size_t field_start = i;
  for (int field = 0; field < 4; ++field) {
    while (k < text.size() && k - i < 4 * kMaxFieldBytes && text[k] != ':') {
      if (IsWhitespace(text[k]) || text[k] == '"' || text[k] == '\'' ||
          (text[k] == '\\' && (k + 1 >= text.size() || text[k + 1] != ':'))) {
        return std::nullopt;
      }
      k += text[k] == '\\' ? 2 : 1;
    }
    if (k >= text.size() || text[k] != ':' || k == field_start) {
      return std::nullopt;
    }
    const std::string_view value = text.substr(field_start, k - field_start);
    if (field == 1 && value != "*" &&
        (value.size() > 5 ||
         !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))) {
      return std::nullopt;
    }
    field_start = ++k;
  }
  // The password runs to the end of the line (a raw or an escaped newline, or the end of a
  // JSON string); an unescaped ':' means a line of another format.
  std::size_t end = k;
  while (end < text.size() && text[end] != '\n' && text[end] != '\r' && text[end] != '"') {
    if (text[end] == '\\' && end + 1 < text.size() &&
        (text[end + 1] == 'n' || text[end + 1] == 'r' || text[end + 1] == '"')) {
      break;
    }
    if (text[end] == ':') {
      return std::nullopt;
    }
    end += (text[end] == '\\' && end + 1 < text.size()) ? 2 : 1;
  }
  end = end > text.size() ? text.size() : end;
  if (end == k) {
    return std::nullopt;
  }
  return Secret{k, end};
}

}  // namespace pulse::core::redact_internal
