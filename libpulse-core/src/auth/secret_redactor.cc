#include "pulse/core/auth/secret_redactor.h"

#include <array>
#include <cstddef>
#include <optional>

namespace pulse::core {
namespace {

// One recognised secret: [begin, end) is replaced; the text before `begin` is kept.
struct Secret {
  std::size_t begin = 0;
  std::size_t end = 0;
};

bool IsAlnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool IsUpperOrDigit(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
// Characters of an assignment key or flag name: `db.password`, `--api-key`, `X-API-Token`.
bool IsKeyChar(char c) { return IsAlnum(c) || c == '_' || c == '-' || c == '.'; }
// Characters of provider key bodies (base64url plus the separators vendors use).
bool IsKeyBodyChar(char c) { return IsAlnum(c) || c == '_' || c == '-'; }
// Characters of a bearer credential (RFC 6750 b64token, plus JWT dots).
bool IsBearerChar(char c) {
  return IsAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
         c == '=';
}
bool IsSpace(char c) { return c == ' ' || c == '\t'; }
bool IsWhitespace(char c) { return IsSpace(c) || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWithAt(std::string_view text, std::size_t i, std::string_view prefix) {
  return text.size() - i >= prefix.size() && text.substr(i, prefix.size()) == prefix;
}

// Case-insensitive: `lower_prefix` must be lowercase.
bool StartsWithNoCase(std::string_view text, std::size_t i, std::string_view lower_prefix) {
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

std::size_t SkipWhile(std::string_view text, std::size_t i, bool (*pred)(char)) {
  while (i < text.size() && pred(text[i])) {
    ++i;
  }
  return i;
}

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

std::optional<Secret> FixedFormatToken(std::string_view text, std::size_t i) {
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

constexpr std::array<std::string_view, 15> kSensitiveKeySuffixes = {
    "password",    "passwd",     "passphrase",  "secret",        "token",
    "api_key",     "apikey",     "access_key",  "accesskey",     "secret_key",
    "private_key", "credential", "credentials", "authorization",
    "_pwd",  // MYSQL_PWD, DB_PWD (a bare PWD is the working directory)
};

// The key's lowercase form with '-' and '.' read as '_' ends with a sensitive suffix.
bool IsSensitiveKey(std::string_view key) {
  for (std::string_view suffix : kSensitiveKeySuffixes) {
    if (key.size() < suffix.size()) {
      continue;
    }
    const std::string_view tail = key.substr(key.size() - suffix.size());
    bool same = true;
    for (std::size_t k = 0; k < suffix.size() && same; ++k) {
      char c = Lower(tail[k]);
      if (c == '-' || c == '.') {
        c = '_';
      }
      same = c == suffix[k];
    }
    // Only the ending counts: `PGPASSWORD` and `clientSecret` are keys of secrets,
    // `max_tokens` is not.
    if (same) {
      return true;
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

// The value span starting at `k` (quoted or bare); nullopt when empty.
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
  const std::size_t end = SkipWhile(text, k, IsNotQuoteOrSpace);
  if (end == k) {
    return std::nullopt;
  }
  return Secret{k, end};
}

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

// `key=value`, `key: value`, `"key": "value"`, `--flag value`, `--flag=value` where the key
// names a secret. `key_end` receives the end of the key run (to skip re-scanning it).
std::optional<Secret> SensitiveAssignment(std::string_view text, std::size_t i,
                                          std::size_t& key_end) {
  key_end = SkipWhile(text, i, IsKeyChar);
  const std::string_view key = text.substr(i, key_end - i);
  if (key.empty() || !IsSensitiveKey(key)) {
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
  if (k < text.size() && (text[k] == '=' || text[k] == ':')) {
    value = ValueAt(text, SkipWhile(text, k + 1, IsSpace));
  } else if (key.front() == '-' && k > before_space && k < text.size() && text[k] != '-') {
    value = ValueAt(text, k);  // `--password hunter2`
  } else if (k > before_space && k < text.size() && (text[k] == '\'' || text[k] == '"') &&
             key.size() == 8 && StartsWithNoCase(key, 0, "password")) {
    value = ValueAt(text, k);  // SQL: `ALTER ROLE app WITH PASSWORD 'hunter2'`
  }
  if (!value.has_value()) {
    return std::nullopt;
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

}  // namespace

bool NamesSecret(std::string_view name) { return IsSensitiveKey(name); }

std::string RedactSecrets(std::string_view text) {
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
    if (text[i] == ':') {
      secret = UrlPassword(text, i);
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

}  // namespace pulse::core
