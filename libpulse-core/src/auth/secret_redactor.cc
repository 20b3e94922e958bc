#include "pulse/core/auth/secret_redactor.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>

#include "redactor_scan.h"

namespace pulse::core {
namespace redact_internal {
namespace {

// ---- fixed-format credentials -------------------------------------------------------------

struct TokenFormat {
  std::string_view prefix;
  std::size_t min_body;  // characters after the prefix
  std::size_t max_body;  // 0 = unbounded
  bool upper_alnum_body;
};

constexpr std::array<TokenFormat, 17> kTokenFormats = {{
    {"pulse_", 43, 43, false},
    {"sk-", 16, 0, false},
    {"sk_", 16, 0, false},
    {"gsk_", 16, 0, false},
    {"xai-", 16, 0, false},
    {"AIza", 30, 0, false},
    {"ghp_", 20, 0, false},
    {"gho_", 20, 0, false},
    {"ghu_", 20, 0, false},
    {"ghs_", 20, 0, false},
    {"ghr_", 20, 0, false},
    {"github_pat_", 20, 0, false},
    {"glpat-", 20, 0, false},
    {"xoxb-", 10, 0, false},
    {"xoxp-", 10, 0, false},
    {"AKIA", 16, 16, true},
    {"ASIA", 16, 16, true},
}};

// Which bytes start a prefix of the table: most positions of a text start none, and are passed
// over without comparing every prefix (this scan runs at each word start of every tool result).
constexpr std::array<bool, 256> kTokenFormatStarts = [] {
  std::array<bool, 256> starts{};
  for (const TokenFormat& format : kTokenFormats) {
    starts[static_cast<unsigned char>(format.prefix.front())] = true;
  }
  return starts;
}();

std::optional<Secret> FixedFormatToken(std::string_view text, std::size_t i) {
  if (i >= text.size() || !kTokenFormatStarts[static_cast<unsigned char>(text[i])]) {
    return std::nullopt;
  }
  for (const TokenFormat& format : kTokenFormats) {
    if (!StartsWithAt(text, i, format.prefix)) {
      continue;
    }
    const std::size_t body = i + format.prefix.size();
    const std::size_t end =
        SkipWhile(text, body, format.upper_alnum_body ? IsUpperOrDigit : IsKeyBodyChar);
    const std::size_t len = end - body;
    if (len < format.min_body || (format.max_body != 0 && len != format.max_body)) {
      continue;
    }
    return Secret{i, end};
  }
  return std::nullopt;
}

// Slack tokens: xox[abposr]- (the two most common are in the table; this covers the rest).
std::optional<Secret> SlackToken(std::string_view text, std::size_t i) {
  if (!StartsWithAt(text, i, "xox") || text.size() - i < 5 || text[i + 4] != '-') {
    return std::nullopt;
  }
  const char kind = text[i + 3];
  if (kind != 'a' && kind != 'o' && kind != 's' && kind != 'r') {
    return std::nullopt;
  }
  const std::size_t end = SkipWhile(text, i + 5, IsKeyBodyChar);
  if (end - (i + 5) < 10) {
    return std::nullopt;
  }
  return Secret{i, end};
}

// `Bearer <credential>`: the credential goes, the word stays.
std::optional<Secret> BearerCredential(std::string_view text, std::size_t i) {
  if (!StartsWithNoCase(text, i, "bearer")) {
    return std::nullopt;
  }
  std::size_t k = i + 6;
  const std::size_t after_word = k;
  k = SkipWhile(text, k, IsSpace);
  if (k == after_word) {
    return std::nullopt;
  }
  const std::size_t end = SkipWhile(text, k, IsBearerChar);
  if (end - k < 8) {
    return std::nullopt;
  }
  return Secret{k, end};
}

// `-----BEGIN ... PRIVATE KEY-----` through the matching END line (or the end of the text).
std::optional<Secret> PrivateKeyBlock(std::string_view text, std::size_t i) {
  constexpr std::string_view kBegin = "-----BEGIN ";
  constexpr std::string_view kPrivate = "PRIVATE KEY-----";
  constexpr std::string_view kEnd = "-----END ";
  constexpr std::size_t kMaxHeader = 80;
  if (!StartsWithAt(text, i, kBegin)) {
    return std::nullopt;
  }
  const std::string_view header = text.substr(i, kMaxHeader);
  const std::size_t marker = header.find(kPrivate);
  const std::size_t newline = header.find('\n');
  if (marker == std::string_view::npos || (newline != std::string_view::npos && newline < marker)) {
    return std::nullopt;
  }
  const std::size_t body = i + marker + kPrivate.size();
  std::size_t end = text.size();
  const std::size_t end_line = text.find(kEnd, body);
  if (end_line != std::string_view::npos) {
    const std::size_t close = text.substr(end_line, kMaxHeader).find(kPrivate);
    if (close != std::string_view::npos) {
      end = end_line + close + kPrivate.size();
    }
  }
  return Secret{i, end};
}

// ---- assignments and flags ---------------------------------------------------------------

constexpr std::array<std::string_view, 23> kSensitiveKeySuffixes = {
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "accesskey",
    "secret_key",
    "private_key",
    "credential",
    "credentials",
    "_pwd",  // MYSQL_PWD, DB_PWD (a bare PWD is the working directory)
    "psk",   // wpa_supplicant and NetworkManager Wi-Fi keys: psk=, wpa-psk
    "wep_key0",
    "wep_key1",
    "wep_key2",
    "wep_key3",          // NetworkManager wep-key0..3
    "key_data",          // kubeconfig client-key-data
    "certificate_data",  // kubeconfig client-certificate-data (the pair of the key)
    "identitytoken",     // docker config.json (also ends in token; listed for the docs)
    "authorization",     // only as a header name, see IsAuthorizationKey
};

// The key's lowercase form with '-' and '.' read as '_'.
char Normalized(char c) {
  c = Lower(c);
  return (c == '-' || c == '.') ? '_' : c;
}

bool EndsWithNormalized(std::string_view key, std::string_view suffix) {
  if (key.size() < suffix.size()) {
    return false;
  }
  const std::string_view tail = key.substr(key.size() - suffix.size());
  for (std::size_t k = 0; k < suffix.size(); ++k) {
    if (Normalized(tail[k]) != suffix[k]) {
      return false;
    }
  }
  return true;
}

// `Authorization` and the header names that carry it (`Proxy-Authorization`,
// `HTTP_AUTHORIZATION`, `X-Authorization`) name credentials; a policy field such as
// `auto_authorization` / `autoAuthorization` names a class of approval the model must see.
bool IsAuthorizationKey(std::string_view key) {
  constexpr std::string_view kWord = "authorization";
  std::string prefix;
  for (const char c : key.substr(0, key.size() - kWord.size())) {
    prefix.push_back(Normalized(c));
  }
  while (!prefix.empty() && prefix.back() == '_') {
    prefix.pop_back();
  }
  while (!prefix.empty() && prefix.front() == '_') {
    prefix.erase(0, 1);  // --authorization, _authorization
  }
  constexpr std::array<std::string_view, 7> kHeaderPrefixes = {
      "", "proxy", "http", "x", "http_proxy", "x_proxy", "upstream"};
  for (std::string_view allowed : kHeaderPrefixes) {
    if (prefix == allowed) {
      return true;
    }
  }
  return false;
}

// The key ends with a sensitive suffix. Only the ending counts: `PGPASSWORD` and
// `clientSecret` are keys of secrets, `max_tokens` is not.
bool IsSensitiveKey(std::string_view key) {
  for (std::string_view suffix : kSensitiveKeySuffixes) {
    if (EndsWithNormalized(key, suffix)) {
      return suffix != "authorization" || IsAuthorizationKey(key);
    }
  }
  return false;
}

bool EndsWithNoCase(std::string_view text, std::string_view lower_suffix) {
  return text.size() >= lower_suffix.size() &&
         StartsWithNoCase(text, text.size() - lower_suffix.size(), lower_suffix);
}

// A bare value runs to whitespace or a quote: a password may hold any other character, and
// cutting it short at `&` or `;` would leak its tail (over-redacting a query string's next
// parameter is the cheaper mistake).
bool IsNotQuoteOrSpace(char c) { return !IsWhitespace(c) && c != '"' && c != '\''; }

// `{` or `[` that opens JSON structure (`{"`, `{}`, `[{`, `["`, `[]`, or a line break or space
// after it): the key names an object or array, such as a schema property or a nested record,
// whose own string members are redacted where they are secrets. `password={abc}` is not JSON
// structure and stays a bare value.
bool OpensJsonStructure(std::string_view text, std::size_t k) {
  if (k + 1 >= text.size() || (text[k] != '{' && text[k] != '[')) {
    return false;
  }
  const char next = text[k + 1];
  if (IsWhitespace(next) || next == '"') {
    return true;
  }
  return text[k] == '{' ? next == '}' : (next == '{' || next == '[' || next == ']');
}

}  // namespace

std::optional<Secret> ValueAt(std::string_view text, std::size_t k) {
  if (k >= text.size()) {
    return std::nullopt;
  }
  if (text[k] == '\\' && k + 1 < text.size() && text[k + 1] == '"') {
    // JSON inside a JSON string. Outer escapes are decoded on the fly; a decoded backslash
    // protects the next decoded character (an inner escape); the value ends at the first
    // unprotected decoded quote.
    std::size_t c = k + 2;
    std::size_t end = text.size();
    bool inner_escape = false;
    while (c < text.size()) {
      const std::size_t at = c;
      char ch = text[c];
      if (ch == '\\' && c + 1 < text.size()) {
        ch = text[c + 1];
        c += 2;
      } else {
        ++c;
      }
      if (inner_escape) {
        inner_escape = false;
      } else if (ch == '\\') {
        inner_escape = true;
      } else if (ch == '"' || ch == '\n') {
        end = at;
        break;
      }
    }
    if (end == k + 2) {
      return std::nullopt;
    }
    return Secret{k + 2, end};
  }
  const char q = text[k];
  if (q == '"' || q == '\'') {
    std::size_t close = k + 1;
    while (close < text.size() && text[close] != q && text[close] != '\n') {
      close += (text[close] == '\\' && close + 1 < text.size() && text[close + 1] != '\n') ? 2 : 1;
    }
    close = close > text.size() ? text.size() : close;
    if (close == k + 1) {
      return std::nullopt;
    }
    return Secret{k + 1, close};
  }
  if (OpensJsonStructure(text, k)) {
    return std::nullopt;  // a JSON object or array under a secret-like key, e.g. a schema
  }
  const std::size_t end = SkipWhile(text, k, IsNotQuoteOrSpace);
  if (end == k) {
    return std::nullopt;
  }
  return Secret{k, end};
}

namespace {

bool IsAuthScheme(std::string_view word) {
  constexpr std::array<std::string_view, 7> kSchemes = {"bearer",    "basic",  "token", "digest",
                                                        "negotiate", "apikey", "ntlm"};
  for (std::string_view scheme : kSchemes) {
    if (word.size() == scheme.size() && StartsWithNoCase(word, 0, scheme)) {
      return true;
    }
  }
  return false;
}

// For Authorization values, keep a leading scheme word and redact the credential after it.
Secret SkipAuthScheme(std::string_view text, Secret value) {
  const std::size_t word_end = SkipWhile(text, value.begin, IsNotQuoteOrSpace);
  if (word_end >= value.end && text.size() > word_end && IsSpace(text[word_end]) &&
      IsAuthScheme(text.substr(value.begin, word_end - value.begin))) {
    // A bare value stopped at the space after the scheme: take the next word.
    const std::size_t cred = SkipWhile(text, word_end, IsSpace);
    const std::size_t cred_end = SkipWhile(text, cred, IsNotQuoteOrSpace);
    if (cred_end > cred) {
      return Secret{cred, cred_end};
    }
    return value;
  }
  if (word_end < value.end && IsAuthScheme(text.substr(value.begin, word_end - value.begin))) {
    const std::size_t cred = SkipWhile(text, word_end, IsSpace);
    if (cred < value.end) {
      return Secret{cred, value.end};
    }
  }
  return value;
}

bool EqualsNoCase(std::string_view text, std::string_view lower) {
  return text.size() == lower.size() && StartsWithNoCase(text, 0, lower);
}

// Keys too generic to name a secret by themselves, whose value is one when it has a
// secret's shape: Ceph keyrings' `key = AQB...==`, docker config.json's `"auth": "<base64>"`.
enum class ShapedKey { kNone, kCephKey, kDockerAuth };

ShapedKey ShapedKeyOf(std::string_view key) {
  if (EqualsNoCase(key, "key")) {
    return ShapedKey::kCephKey;
  }
  if (EqualsNoCase(key, "auth")) {
    return ShapedKey::kDockerAuth;
  }
  return ShapedKey::kNone;
}

// Base64 of at least `min` characters; `mixed` also asks for an upper, a lower and a digit
// (so a long plain word such as ActiveEnterTimestamp is not taken for a key).
bool LooksLikeBase64Secret(std::string_view value, std::size_t min, bool mixed) {
  if (value.size() < min) {
    return false;
  }
  bool upper = false;
  bool lower = false;
  bool digit = false;
  for (const char c : value) {
    if (!IsBase64Char(c)) {
      return false;
    }
    upper = upper || (c >= 'A' && c <= 'Z');
    lower = lower || (c >= 'a' && c <= 'z');
    digit = digit || (c >= '0' && c <= '9');
  }
  return !mixed || (upper && lower && digit);
}

// `key=value`, `key: value`, `"key": "value"`, `--flag value`, `--flag=value` where the key
// names a secret. `key_end` receives the end of the key run (to skip re-scanning it).
std::optional<Secret> SensitiveAssignment(std::string_view text, std::size_t i,
                                          std::size_t& key_end) {
  key_end = SkipWhile(text, i, IsKeyChar);
  const std::string_view key = text.substr(i, key_end - i);
  if (key.empty()) {
    return std::nullopt;
  }
  const ShapedKey shaped = IsSensitiveKey(key) ? ShapedKey::kNone : ShapedKeyOf(key);
  if (shaped == ShapedKey::kNone && !IsSensitiveKey(key)) {
    return std::nullopt;
  }
  std::size_t k = key_end;
  if (k < text.size() && (text[k] == '"' || text[k] == '\'')) {
    ++k;  // the closing quote of a quoted key
  } else if (StartsWithAt(text, k, "\\\"")) {
    k += 2;  // an escaped closing quote: {\"password\":\"x\"}
  }
  const std::size_t before_space = k;
  k = SkipWhile(text, k, IsSpace);
  std::optional<Secret> value;
  // The last two cases read the value in the same way; each keeps its own condition and example.
  // NOLINTBEGIN(bugprone-branch-clone)
  if (k < text.size() && (text[k] == '=' || text[k] == ':')) {
    value = ValueAt(text, SkipWhile(text, k + 1, IsSpace));
  } else if (key.front() == '-' && k > before_space && k < text.size() && text[k] != '-') {
    value = ValueAt(text, k);  // `--password hunter2`
  } else if (k > before_space && k < text.size() && (text[k] == '\'' || text[k] == '"') &&
             key.size() == 8 && StartsWithNoCase(key, 0, "password")) {
    value = ValueAt(text, k);  // SQL: `ALTER ROLE app WITH PASSWORD 'hunter2'`
  }
  // NOLINTEND(bugprone-branch-clone)
  if (!value.has_value()) {
    return std::nullopt;
  }
  const std::string_view shown = text.substr(value->begin, value->end - value->begin);
  if (shaped == ShapedKey::kCephKey && !LooksLikeBase64Secret(shown, 16, true)) {
    return std::nullopt;
  }
  if (shaped == ShapedKey::kDockerAuth && (value->begin == 0 || text[value->begin - 1] != '"' ||
                                           !LooksLikeBase64Secret(shown, 8, false))) {
    return std::nullopt;  // only a quoted string: `"auth": {...}` is structure, not a secret
  }
  if (EndsWithNoCase(key, "authorization")) {
    return SkipAuthScheme(text, *value);
  }
  return value;
}

// ---- command-line password flags ---------------------------------------------------------

// Clients whose short flag carries a password: `mysql -pSECRET` (attached only: a separate
// word after -p is the database name), `sshpass -p SECRET`, `redis-cli -a SECRET`.
struct PasswordFlag {
  std::string_view command;
  char flag;
  bool attached_only;
};

constexpr std::array<PasswordFlag, 11> kPasswordFlags = {{
    {"mysql", 'p', true},
    {"mysqldump", 'p', true},
    {"mysqladmin", 'p', true},
    {"mysqlimport", 'p', true},
    {"mysqlcheck", 'p', true},
    {"mysqlshow", 'p', true},
    {"mariadb", 'p', true},
    {"mariadb-dump", 'p', true},
    {"mariadb-admin", 'p', true},
    {"sshpass", 'p', false},
    {"redis-cli", 'a', false},
}};

// Ends the command a password flag belongs to.
bool IsCommandSeparator(char c) { return c == '\n' || c == ';' || c == '|' || c == '&'; }

// The client named by the word at `i` (a word start), or nullptr.
const PasswordFlag* PasswordFlagCommand(std::string_view text, std::size_t i) {
  const std::size_t word_end = SkipWhile(text, i, IsKeyChar);
  const std::string_view word = text.substr(i, word_end - i);
  for (const PasswordFlag& entry : kPasswordFlags) {
    if (word == entry.command) {
      return &entry;
    }
  }
  return nullptr;
}

// The password of `command`'s flag at `i` (a word start after whitespace), or nullopt.
std::optional<Secret> PasswordFlagValue(std::string_view text, std::size_t i,
                                        const PasswordFlag& command) {
  if (i == 0 || !IsSpace(text[i - 1]) || text.size() - i < 3 || text[i] != '-' ||
      text[i + 1] != command.flag) {
    return std::nullopt;
  }
  const std::size_t k = i + 2;
  if (!IsWhitespace(text[k])) {
    return ValueAt(text, k);  // -pSECRET, -p'SECRET'
  }
  if (command.attached_only || text[k] == '\n') {
    return std::nullopt;
  }
  const std::size_t value = SkipWhile(text, k, IsSpace);
  if (value >= text.size() || text[value] == '-') {
    return std::nullopt;
  }
  return ValueAt(text, value);  // -p SECRET
}

// `IDENTIFIED BY 'secret'` (MySQL account statements): the quoted literal goes.
std::optional<Secret> IdentifiedBy(std::string_view text, std::size_t i) {
  if (!StartsWithNoCase(text, i, "identified")) {
    return std::nullopt;
  }
  std::size_t k = i + 10;
  const std::size_t after_word = k;
  k = SkipWhile(text, k, IsSpace);
  if (k == after_word || !StartsWithNoCase(text, k, "by")) {
    return std::nullopt;
  }
  const std::size_t after_by = k + 2;
  k = SkipWhile(text, after_by, IsSpace);
  if (k == after_by || k >= text.size() || (text[k] != '\'' && text[k] != '"')) {
    return std::nullopt;
  }
  return ValueAt(text, k);
}

// `scheme://user:password@host`: the password goes. `i` is at the ':' of "://".
std::optional<Secret> UrlPassword(std::string_view text, std::size_t i) {
  if (!StartsWithAt(text, i, "://")) {
    return std::nullopt;
  }
  const std::size_t start = i + 3;
  std::size_t colon = std::string_view::npos;
  for (std::size_t k = start; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '@') {
      if (colon == std::string_view::npos || k == colon + 1) {
        return std::nullopt;
      }
      return Secret{colon + 1, k};
    }
    if (c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || IsWhitespace(c)) {
      return std::nullopt;
    }
    if (c == ':' && colon == std::string_view::npos) {
      colon = k;
    }
  }
  return std::nullopt;
}

std::string Redact(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  std::size_t i = 0;
  // The assignment rule failed for every start inside [.., key_skip): a key run that does not
  // end in a sensitive suffix fails for each of its suffixes too, so it is scanned once.
  std::size_t key_skip = 0;
  // The password-flag client whose arguments are being scanned, until a command separator.
  const PasswordFlag* command = nullptr;
  while (i < text.size()) {
    std::optional<Secret> secret;
    if (IsCommandSeparator(text[i])) {
      command = nullptr;
    }
    if (IsLineStart(text, i) && text[i] != '"') {
      secret = PgpassPassword(text, i);
      if (!secret.has_value()) {
        secret = SaslPassword(text, i);
      }
    }
    if (secret.has_value()) {
      // a .pgpass line
    } else if (text[i] == ':') {
      secret = UrlPassword(text, i);
    } else if (text[i] == '$') {
      secret = CryptHash(text, i);
    } else if (i == 0 || !IsKeyChar(text[i - 1])) {
      if (command != nullptr) {
        secret = PasswordFlagValue(text, i, *command);
      }
      if (!secret.has_value() && IsAlnum(text[i])) {
        // Each word is scanned once here: the next word start lies beyond its end.
        if (const PasswordFlag* named = PasswordFlagCommand(text, i)) {
          command = named;
        }
        secret = IdentifiedBy(text, i);
      }
      if (!secret.has_value()) {
        secret = PrivateKeyBlock(text, i);
      }
      if (!secret.has_value()) {
        secret = FixedFormatToken(text, i);
      }
      if (!secret.has_value()) {
        secret = SlackToken(text, i);
      }
      if (!secret.has_value()) {
        secret = BearerCredential(text, i);
      }
      if (!secret.has_value()) {
        secret = CephSecret(text, i);
      }
      if (!secret.has_value()) {
        secret = NetrcPassword(text, i);
      }
      if (!secret.has_value() && i >= key_skip) {
        std::size_t key_end = i;
        secret = SensitiveAssignment(text, i, key_end);
        if (!secret.has_value()) {
          key_skip = key_end;
        }
      }
    }
    if (!secret.has_value()) {
      ++i;
      continue;
    }
    out.append(text.substr(copied, secret->begin - copied));
    out.append(kRedactedSecret);
    copied = secret->end;
    i = secret->end > i ? secret->end : i + 1;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace
}  // namespace redact_internal

bool NamesSecret(std::string_view name) { return redact_internal::IsSensitiveKey(name); }

std::string RedactSecrets(std::string_view text) { return redact_internal::Redact(text); }

}  // namespace pulse::core
