#include "pulse/adapters/http_client/smtp_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/string_view.h"
#include "src/curl_global.h"

namespace pulse::http_client {
namespace {

using core::ToAbsl;

constexpr std::size_t kMaxUrlBytes = 2048;

struct EasyDeleter {
  void operator()(CURL* e) const { curl_easy_cleanup(e); }
};
absl::Status Bad(std::string_view what, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), " ", ToAbsl(why)));
}

bool IsHostNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
}

// The message's bytes, handed to libcurl as it asks for them.
struct Upload {
  std::string_view data;
  std::size_t offset = 0;

  static std::size_t Read(char* buffer, std::size_t size, std::size_t count, void* user) {
    auto* self = static_cast<Upload*>(user);
    const std::size_t n = std::min(size * count, self->data.size() - self->offset);
    std::memcpy(buffer, self->data.data() + self->offset, n);
    self->offset += n;
    return n;
  }
};

// Printable ASCII of libcurl's error text (which may quote the server's reply).
std::string Printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 300)) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : ' ');
  }
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  return out;
}

}  // namespace

absl::StatusOr<SmtpUrl> ParseSmtpUrl(std::string_view text, std::string_view what) {
  if (text.empty() || text.size() > kMaxUrlBytes) {
    return Bad(what, "must be an smtp:// or smtps:// URL of at most 2048 characters");
  }
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return Bad(what, "must not hold spaces, control or non-ASCII characters");
    }
  }
  SmtpUrl out;
  std::string_view rest;
  const std::string lower = absl::AsciiStrToLower(ToAbsl(text.substr(0, 8)));
  if (lower.rfind("smtps://", 0) == 0) {
    out.implicit_tls = true;
    rest = text.substr(8);
  } else if (lower.rfind("smtp://", 0) == 0) {
    rest = text.substr(7);
  } else {
    return Bad(what, "must start with smtp:// (STARTTLS) or smtps:// (TLS)");
  }
  if (!rest.empty() && rest.back() == '/') {
    rest.remove_suffix(1);
  }
  if (rest.find_first_of("/?#@\\") != std::string_view::npos) {
    return Bad(what, "must be smtp[s]://host[:port], without user info, path, query or fragment");
  }
  std::string_view port_text;
  if (!rest.empty() && rest.front() == '[') {
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos || close == 1) {
      return Bad(what, "has a malformed IPv6 address");
    }
    out.host = std::string(rest.substr(1, close - 1));
    if (!std::all_of(out.host.begin(), out.host.end(), [](char c) {
          return absl::ascii_isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
        })) {
      return Bad(what, "has a malformed IPv6 address");
    }
    rest.remove_prefix(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return Bad(what, "has characters after its IPv6 address");
      }
      port_text = rest.substr(1);
      if (port_text.empty()) {
        return Bad(what, "has an empty port");
      }
    }
  } else {
    const std::size_t colon = rest.find(':');
    out.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = rest.substr(colon + 1);
      if (port_text.empty()) {
        return Bad(what, "has an empty port");
      }
    }
    if (out.host.empty() || out.host.size() > 253 ||
        !std::all_of(out.host.begin(), out.host.end(), IsHostNameChar) || out.host.front() == '.' ||
        out.host.front() == '-' || out.host.find("..") != std::string::npos) {
      return Bad(what, "needs a host name or IP address");
    }
  }
  out.port = out.implicit_tls ? 465 : 587;
  if (!port_text.empty()) {
    int port = 0;
    if (!std::all_of(port_text.begin(), port_text.end(),
                     [](char c) { return c >= '0' && c <= '9'; }) ||
        port_text.size() > 5 || !absl::SimpleAtoi(ToAbsl(port_text), &port) || port < 1 ||
        port > 65535) {
      return Bad(what, "has a port outside 1..65535");
    }
    out.port = port;
  }
  const bool v6 = out.host.find(':') != std::string::npos;
  out.url = absl::StrCat(out.implicit_tls ? "smtps://" : "smtp://", v6 ? "[" : "", out.host,
                         v6 ? "]" : "", ":", out.port);
  return out;
}

SmtpOutcome SendMail(const SmtpOptions& options, const MailMessage& message) {
  SmtpOutcome out;
  if (message.to.empty()) {
    out.permanent = true;
    out.error = "the message has no recipient";
    return out;
  }
  if (!CurlGlobalInit()) {
    out.error = "libcurl could not be initialised";
    return out;
  }
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (easy == nullptr) {
    out.error = "libcurl could not open a handle";
    return out;
  }
  CURL* e = easy.get();
  std::unique_ptr<curl_slist, CurlListDeleter> recipients;
  for (const std::string& to : message.to) {
    curl_slist* next = curl_slist_append(recipients.get(), absl::StrCat("<", to, ">").c_str());
    if (next == nullptr) {
      out.error = "out of memory";
      return out;
    }
    (void)recipients.release();
    recipients.reset(next);
  }
  const std::string from = absl::StrCat("<", message.from, ">");
  Upload upload{message.data};
  char error_buffer[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(e, CURLOPT_URL, options.server.url.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROXY, "");  // mail goes to the server named, never a proxy
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, error_buffer);
  // Encrypted or not at all: STARTTLS is required on smtp://, and AUTH only follows it.
  curl_easy_setopt(e, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
  if (!options.ca_file.empty()) {
    curl_easy_setopt(e, CURLOPT_CAINFO, options.ca_file.c_str());
    curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);
  }
  if (!options.username.empty()) {
    curl_easy_setopt(e, CURLOPT_USERNAME, options.username.c_str());
    curl_easy_setopt(e, CURLOPT_PASSWORD, options.password.c_str());
  }
  curl_easy_setopt(e, CURLOPT_MAIL_FROM, from.c_str());
  curl_easy_setopt(e, CURLOPT_MAIL_RCPT, recipients.get());
  curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(message.data.size()));
  curl_easy_setopt(e, CURLOPT_READFUNCTION, &Upload::Read);
  curl_easy_setopt(e, CURLOPT_READDATA, &upload);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::clamp<std::int64_t>(
                       absl::ToInt64Milliseconds(options.connect_timeout), 1, INT32_MAX)));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::clamp<std::int64_t>(
                       absl::ToInt64Milliseconds(options.total_timeout), 1, INT32_MAX)));
  const CURLcode code = curl_easy_perform(e);
  long reply = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &reply);
  out.reply_code = static_cast<int>(reply);
  if (code == CURLE_OK) {
    out.sent = true;
    return out;
  }
  const std::string detail = Printable(error_buffer[0] != '\0' ? std::string_view(error_buffer)
                                                               : curl_easy_strerror(code));
  switch (code) {
    case CURLE_LOGIN_DENIED:
      out.permanent = true;
      out.error = absl::StrCat("the SMTP server refused the user name or password: ", detail);
      return out;
    case CURLE_USE_SSL_FAILED:
      out.permanent = true;
      out.error = absl::StrCat(
          "the SMTP server does not offer STARTTLS (Pulse does not send mail unencrypted): ",
          detail);
      return out;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
      out.permanent = true;
      out.error = absl::StrCat(
          "the SMTP server's certificate is not trusted (the system store, or "
          "notify_ca_file): ",
          detail);
      return out;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      out.permanent = true;
      out.error = absl::StrCat("the SMTP URL cannot be used: ", detail);
      return out;
    default:
      break;
  }
  // A 5xx reply is the server's permanent refusal (RFC 5321 4.2.1); a 4xx, or no reply at all
  // (refused, reset or timed-out connection), may pass.
  out.permanent = out.reply_code >= 500 && out.reply_code < 600;
  out.error = out.reply_code > 0
                  ? absl::StrCat("the SMTP server answered ", out.reply_code, ": ", detail)
                  : absl::StrCat("the SMTP exchange failed: ", detail);
  return out;
}

}  // namespace pulse::http_client
