// ConsoleSessions: the operator console's sign-in (docs/console.md). A human pastes an API token
// once; the server answers with a session cookie and a CSRF token, and from then on the cookie
// stands for the token on every route, with the same scopes. The session keeps the token in
// process memory only (never on disk, never in a reply) and authenticates it again on every
// request, so revoking or expiring the token ends its sessions at once; a restart of the server
// ends every session. The cookie is HttpOnly and SameSite=Strict; a request the cookie
// authenticates that may change state must also carry the CSRF token (X-CSRF-Token) and, when it
// sends Origin or Sec-Fetch-Site, come from the server's own origin (CheckConsoleCsrf).
//
// Bounds: at most max_sessions sessions (a sign-in past it first drops expired ones, then is
// refused with ResourceExhausted), at most max_sessions_per_token per token (the token's oldest
// session gives way). A session ends after idle_timeout without a request, and lifetime after
// sign-in. Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/http/http_types.h"
#include "pulse/adapters/http/token_authenticator.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/ports/clock.h"

namespace pulse::adapters::http {

inline constexpr std::string_view kConsoleCookieName = "pulse_session";
inline constexpr std::string_view kCsrfHeader = "X-CSRF-Token";

struct ConsoleSessionOptions {
  absl::Duration idle_timeout = absl::Hours(8);
  absl::Duration lifetime = absl::Hours(24);
  std::size_t max_sessions = 4096;
  std::size_t max_sessions_per_token = 16;
  // Adds Secure to the cookie: set it when clients reach the server over TLS (a proxy).
  bool secure_cookie = false;
};

struct ConsoleSession {
  std::string csrf_token;  // 43 characters of URL-safe base64 (256 random bits)
  Principal principal;     // as the token authenticated for this request
  absl::Time expires_at;   // the earlier of the idle and the absolute end
};

class ConsoleSessions {
 public:
  // Borrows both; they must outlive this object.
  ConsoleSessions(const TokenAuthenticator& authenticator, const core::Clock& clock,
                  ConsoleSessionOptions options = {});

  struct SignedIn {
    std::string cookie_value;  // the session's id: 43 characters of URL-safe base64
    ConsoleSession session;
  };
  // A new session for `token`. Unauthenticated when the store does not accept the token,
  // PermissionDenied when it is not a human token, Unavailable when the store cannot answer,
  // ResourceExhausted when the table is full.
  [[nodiscard]] absl::StatusOr<SignedIn> SignIn(std::string_view token);

  // The live session whose cookie value this is, its token authenticated again now, and its idle
  // clock restarted. NotFound for no such session (or an ended one, which is dropped);
  // Unauthenticated when its token no longer authenticates (the session is dropped);
  // Unavailable when the store cannot answer (the session is kept).
  [[nodiscard]] absl::StatusOr<ConsoleSession> Resolve(std::string_view cookie_value);

  // Ends the session (nothing when there is none).
  void SignOut(std::string_view cookie_value);

  std::size_t size() const;
  const ConsoleSessionOptions& options() const { return options_; }

 private:
  struct Entry {
    std::string token;  // the raw API token, in memory only
    std::string token_id;
    std::string csrf_token;
    absl::Time created;
    absl::Time last_seen;
  };
  absl::Time EndOf(const Entry& entry) const;
  void DropEndedLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const TokenAuthenticator& authenticator_;
  const core::Clock& clock_;
  const ConsoleSessionOptions options_;
  mutable absl::Mutex mu_;
  // Keyed by a keyed hash of the cookie value, so a lookup's timing says nothing about how much
  // of a guessed value matched.
  std::map<std::string, Entry> sessions_ ABSL_GUARDED_BY(mu_);
  std::string key_;  // the hash key, random per process
};

// The value of the console cookie among the request's Cookie header values; nullopt when there
// is none, when it appears more than once, or when its value is not 1..128 URL-safe base64
// characters.
std::optional<std::string> ConsoleCookieValue(const std::vector<std::string>& cookie_headers);

// The Set-Cookie value that sets the session cookie for `max_age`, and the one that clears it.
std::string ConsoleSetCookie(std::string_view value, absl::Duration max_age, bool secure);
std::string ConsoleClearCookie(bool secure);

// The CSRF check of a state-changing request the console cookie authenticates: exactly one
// X-CSRF-Token equal to the session's; every Origin, when sent, the server's own origin
// (scheme http or https, the authority equal to the Host header); Sec-Fetch-Site, when sent,
// same-origin or none. nullopt when it passes, csrf_rejected otherwise (a fixed message that
// never echoes a value). `expected_csrf` empty checks the origin only (sign-in).
std::optional<core::AgentError> CheckConsoleCsrf(const std::vector<std::string>& csrf_values,
                                                 const std::vector<std::string>& origins,
                                                 const std::vector<std::string>& hosts,
                                                 const std::vector<std::string>& fetch_sites,
                                                 std::string_view expected_csrf);

// True for GET, HEAD and OPTIONS: the methods a cookie request needs no CSRF token for.
bool IsSafeMethod(std::string_view method);

// The handlers of sign_in_console, get_console_session and sign_out_console.
HttpHandler ConsoleSignInHandler(ConsoleSessions& sessions);
HttpHandler ConsoleSessionHandler(ConsoleSessions& sessions);
HttpHandler ConsoleSignOutHandler(ConsoleSessions& sessions);

}  // namespace pulse::adapters::http
