// SendMail: one message to an SMTP server through libcurl's SMTP support (the email notification
// channel; docs/notifications.md "Email"). The connection is always encrypted: an smtp:// URL
// must upgrade with STARTTLS (a server that does not offer it is refused, never used in
// plaintext), an smtps:// URL speaks TLS from the first byte; the server's certificate must
// chain to the system store or to `ca_file`. With a user name the client authenticates (AUTH,
// after TLS) with the password; the password never appears in an error. Blocking; thread-safe
// (each call has its own connection).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::http_client {

// A checked SMTP server URL.
struct SmtpUrl {
  std::string host;           // a host name or IPv4 address, or an IPv6 address without brackets
  int port = 0;               // the URL's, else 587 (smtp) or 465 (smtps)
  bool implicit_tls = false;  // smtps://
  std::string url;            // normalized: "smtp[s]://host:port" (IPv6 in brackets)
};

// Parses `text` as smtp://host[:port] or smtps://host[:port] (an optional trailing "/"). Refused
// with InvalidArgument naming `what`: another scheme, user info, a path, query or fragment, an
// empty or malformed host, a port outside 1..65535, control characters or spaces, over 2048
// bytes.
absl::StatusOr<SmtpUrl> ParseSmtpUrl(std::string_view text, std::string_view what);

struct SmtpOptions {
  SmtpUrl server;
  std::string username;  // "" = no authentication
  std::string password;
  std::string ca_file;  // "" = the system store
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration total_timeout = absl::Seconds(30);  // the whole exchange
};

struct MailMessage {
  std::string from;             // the envelope sender (MAIL FROM)
  std::vector<std::string> to;  // the envelope recipients (RCPT TO), at least one
  std::string data;             // the RFC 5322 message, CRLF line ends, without the final "."
};

// How the server took one message.
struct SmtpOutcome {
  bool sent = false;
  bool permanent = false;  // retrying cannot help: a 5xx reply, refused credentials, no
                           // STARTTLS, an untrusted certificate, a bad URL
  int reply_code = 0;      // the server's last SMTP reply code; 0 when it gave none
  std::string error;       // "" when sent; never the password
};

SmtpOutcome SendMail(const SmtpOptions& options, const MailMessage& message);

}  // namespace pulse::http_client
