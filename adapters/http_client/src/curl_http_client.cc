// HttpClient over libcurl's multi interface: the calling thread drives one easy handle and polls
// at most every 10 ms, checking the cancellation flag and the response-header, idle and total
// deadlines itself between polls (libcurl enforces only the connect timeout). libcurl's own
// messages are never shown: each CURLcode is mapped to an ErrorKind and a sentence.
#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "pulse/adapters/http_client/http_client.h"
#include "pulse/core/string_view.h"
#include "src/curl_global.h"
#include "src/errors.h"
#include "src/exchange_state.h"
#include "src/kept_http.h"

namespace pulse::http_client {
namespace {

using core::ToAbsl;

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

absl::Status CheckRequest(const Request& request) {
  if (request.method.empty() || request.method.size() > 16 ||
      !std::all_of(request.method.begin(), request.method.end(),
                   [](char c) { return c >= 'A' && c <= 'Z'; })) {
    return ClientError(ErrorKind::kInvalidRequest, "the HTTP method is malformed");
  }
  const bool target_ok = !request.target.empty() && request.target.front() == '/' &&
                         std::all_of(request.target.begin(), request.target.end(), [](char c) {
                           const auto byte = static_cast<unsigned char>(c);
                           return byte > 0x20 && byte < 0x7f && c != '#';
                         });
  if (!target_ok) {
    return ClientError(ErrorKind::kInvalidRequest,
                       "the request path must start with '/' and hold no spaces, control or "
                       "non-ASCII characters");
  }
  for (const auto& [name, value] : request.headers) {
    if (name.empty() || !std::all_of(name.begin(), name.end(), IsTokenChar)) {
      return ClientError(ErrorKind::kInvalidRequest, "a request header name is malformed");
    }
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      return ClientError(ErrorKind::kInvalidRequest,
                         "a request header value holds a line break or NUL");
    }
  }
  return absl::OkStatus();
}

// Verifies the server's leaf certificate against the pinned SHA-256 fingerprint alone.
int VerifyPin(X509_STORE_CTX* store, void* arg) {
  const std::string& pin = *static_cast<const std::string*>(arg);
  X509* cert = X509_STORE_CTX_get0_cert(store);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (cert != nullptr && X509_digest(cert, EVP_sha256(), digest, &length) == 1 &&
      length == pin.size() && CRYPTO_memcmp(digest, pin.data(), length) == 0) {
    return 1;
  }
  X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
  return 0;
}

CURLcode InstallPin(CURL*, void* ssl_ctx, void* pin) {
  SSL_CTX_set_cert_verify_callback(static_cast<SSL_CTX*>(ssl_ctx), VerifyPin, pin);
  return CURLE_OK;
}

// One exchange in flight; libcurl's callbacks reach it through their user pointer.
class Exchange {
 public:
  Exchange(const ClientOptions& options, HeadFn on_head, BodyFn on_body,
           const std::atomic<bool>* cancelled)
      : state_(options, on_head, on_body, cancelled) {}

  static size_t OnHeader(char* data, size_t size, size_t count, void* self) {
    return static_cast<Exchange*>(self)->Header(std::string_view(data, size * count));
  }
  static size_t OnWrite(char* data, size_t size, size_t count, void* self) {
    return static_cast<Exchange*>(self)->Body(std::string_view(data, size * count));
  }

  bool IsCancelled() const { return state_.IsCancelled(); }
  // The deadline that has passed, if any.
  std::optional<TimeoutPhase> Due() const { return state_.Due(); }
  // How long the next poll may wait.
  int WaitMillis() const { return static_cast<int>(state_.WaitLimit().count()); }

  Abort abort() const { return abort_; }
  bool head_done() const { return state_.head_done(); }

 private:
  size_t Header(std::string_view line) {
    state_.Activity();
    header_bytes_ += line.size();
    if (header_bytes_ > state_.options().max_header_bytes) {
      return Stop(Abort::kTooLarge);
    }
    if (IsCancelled()) {
      return Stop(Abort::kCancelled);
    }
    if (state_.head_done()) {
      return line.size();  // trailer fields of a chunked body
    }
    std::string_view text = line;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
      text.remove_suffix(1);
    }
    if (absl::StartsWith(ToAbsl(text), "HTTP/")) {
      head_ = ResponseHead();
      const std::size_t space = text.find(' ');
      int status = 0;
      if (space != std::string_view::npos && text.size() >= space + 4) {
        for (char c : text.substr(space + 1, 3)) {
          status =
              absl::ascii_isdigit(static_cast<unsigned char>(c)) ? status * 10 + (c - '0') : -1000;
        }
      }
      head_.status = std::max(status, 0);
      if (text.size() > space + 5 && text[space + 4] == ' ') {
        head_.reason = std::string(text.substr(space + 5, 512));  // bounded by max_header_bytes
      }
      return line.size();
    }
    if (text.empty()) {
      if (head_.status >= 200) {
        return Stop(state_.Head(head_), line.size());
      }
      return line.size();  // the end of an interim 1xx reply: the real one follows
    }
    const std::size_t colon = text.find(':');
    if (colon != std::string_view::npos) {
      head_.headers.emplace_back(
          std::string(text.substr(0, colon)),
          std::string(absl::StripAsciiWhitespace(ToAbsl(text.substr(colon + 1)))));
    }
    return line.size();
  }

  size_t Body(std::string_view bytes) { return Stop(state_.Body(bytes), bytes.size()); }

  // `taken` when the exchange goes on; anything else makes libcurl end the transfer.
  size_t Stop(Abort why, size_t taken = 0) {
    if (why == Abort::kNone) {
      return taken;
    }
    abort_ = why;
    return 0;
  }

  ExchangeState state_;
  ResponseHead head_;
  std::size_t header_bytes_ = 0;
  Abort abort_ = Abort::kNone;
};

// Everything the exchange needs set on a fresh (or reset) easy handle. `url`, `request`,
// `pin` and `exchange` must outlive the transfer; `headers` receives the header list.
void SetOptions(CURL* e, const ClientOptions& options, const std::string& pin,
                const Request& request, const std::string& url, Exchange& exchange,
                std::unique_ptr<curl_slist, CurlListDeleter>& headers) {
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L);  // cancelling never waits for a name lookup
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  // Only a GET or HEAD rides a kept connection: libcurl sends an exchange that meets a dead
  // kept connection again on a new one, and a write must never go twice.
  const bool reuse = options.keep_alive && (request.method == "GET" || request.method == "HEAD");
  curl_easy_setopt(e, CURLOPT_FORBID_REUSE, reuse ? 0L : 1L);
  curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, reuse ? 0L : 1L);
  curl_easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::clamp<std::int64_t>(
                       absl::ToInt64Milliseconds(options.timeouts.connect), 1, INT32_MAX)));
  curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Exchange::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &exchange);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Exchange::OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &exchange);

  bool has_content_type = false;
  auto add_header = [&headers](const std::string& line) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (next != nullptr) {
      (void)headers.release();
      headers.reset(next);
    }
  };
  for (const auto& [name, value] : request.headers) {
    has_content_type = has_content_type || absl::EqualsIgnoreCase(name, "Content-Type");
    // "Name;" is libcurl's spelling of a header sent with an empty value.
    add_header(value.empty() ? absl::StrCat(name, ";") : absl::StrCat(name, ": ", value));
  }
  add_header("Expect:");  // no 100-continue round trip before large bodies
  if (request.method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (request.body.has_value() || request.method == "POST") {
    static const char kNoBody[] = "";
    const bool has_body = request.body.has_value();
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(has_body ? request.body->size() : 0));
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, has_body ? request.body->data() : kNoBody);
    if (!has_content_type) {
      add_header("Content-Type:");  // libcurl would add a form type
    }
    if (request.method != "POST") {
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
  } else if (request.method != "GET") {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());

  if (GoesDirect(options)) {
    curl_easy_setopt(e, CURLOPT_PROXY, "");  // "" turns the environment's proxy off
  }
  if (!options.unix_socket_path.empty()) {
    curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, options.unix_socket_path.c_str());
  }
  if (options.base.https) {
    if (!pin.empty()) {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_SESSIONID_CACHE, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_CTX_FUNCTION, &InstallPin);
      curl_easy_setopt(e, CURLOPT_SSL_CTX_DATA, const_cast<std::string*>(&pin));
    } else if (!options.ca_file.empty()) {
      curl_easy_setopt(e, CURLOPT_CAINFO, options.ca_file.c_str());
      curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);
    }
    if (!options.client_cert_file.empty()) {
      curl_easy_setopt(e, CURLOPT_SSLCERT, options.client_cert_file.c_str());
      curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(e, CURLOPT_SSLKEY, options.client_key_file.c_str());
      curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
  }
}

}  // namespace

// Creating a multi handle costs a socket pair and a few allocations per call (about a quarter
// of a loopback request's CPU); the handles are reset and kept instead, at most kMaxIdle.
// A multi handle owns its connection cache: with keep_alive the connection an exchange used
// stays open in it for the next exchange on the same handles; without, CURLOPT_FORBID_REUSE
// closes it when the exchange ends.
class HttpClient::HandlePool {
 public:
  struct Handles {
    CURL* easy = nullptr;
    CURLM* multi = nullptr;
  };

  HandlePool() = default;
  HandlePool(const HandlePool&) = delete;
  HandlePool& operator=(const HandlePool&) = delete;
  ~HandlePool() {
    for (Handles& handles : idle_) {
      Destroy(handles);
    }
  }

  // Null handles when libcurl could not allocate them.
  Handles Acquire() {
    {
      absl::MutexLock lock(&mu_);
      if (!idle_.empty()) {
        Handles handles = idle_.back();
        idle_.pop_back();
        return handles;
      }
    }
    Handles handles{curl_easy_init(), curl_multi_init()};
    if (handles.easy == nullptr || handles.multi == nullptr) {
      Destroy(handles);
      return Handles{};
    }
    return handles;
  }

  void Release(Handles handles) {
    curl_easy_reset(handles.easy);
    absl::MutexLock lock(&mu_);
    if (idle_.size() < kMaxIdle) {
      idle_.push_back(handles);
      return;
    }
    Destroy(handles);
  }

 private:
  static constexpr std::size_t kMaxIdle = 4;

  static void Destroy(Handles& handles) {
    if (handles.easy != nullptr) {
      curl_easy_cleanup(handles.easy);
    }
    if (handles.multi != nullptr) {
      curl_multi_cleanup(handles.multi);
    }
  }

  absl::Mutex mu_;
  std::vector<Handles> idle_ ABSL_GUARDED_BY(mu_);
};

HttpClient::HttpClient(ClientOptions options, std::string pin)
    : options_(std::move(options)),
      pin_(std::move(pin)),
      pool_(std::make_unique<HandlePool>()),
      kept_(KeptHttp::For(options_)) {}

HttpClient::~HttpClient() = default;

bool HttpClient::UsesKeptTransport(const Request& request) const {
  return kept_ != nullptr && KeptHttp::Carries(request);
}

std::optional<std::string> ResponseHead::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, ToAbsl(name))) {
      return value;
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<HttpClient>> HttpClient::Open(ClientOptions options) {
  const Timeouts& t = options.timeouts;
  if (t.connect <= absl::ZeroDuration() || t.response_header <= absl::ZeroDuration() ||
      t.idle <= absl::ZeroDuration() || t.total <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("HTTP client timeouts must be positive");
  }
  if (options.max_header_bytes == 0) {
    return absl::InvalidArgumentError("the HTTP client's header cap must be positive");
  }
  if (options.base.host.empty()) {
    return absl::InvalidArgumentError("the HTTP client needs a base URL");
  }
  std::string pin;
  if (!options.pinned_sha256.empty()) {
    const std::string hex = absl::StrReplaceAll(options.pinned_sha256, {{":", ""}});
    const bool ok = hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
                      return absl::ascii_isxdigit(static_cast<unsigned char>(c));
                    });
    if (!ok) {
      return absl::InvalidArgumentError(
          "the pinned certificate fingerprint must be 64 hex digits (SHA-256)");
    }
    pin = absl::HexStringToBytes(hex);
  }
  if (!options.ca_file.empty() && ::access(options.ca_file.c_str(), R_OK) != 0) {
    return absl::InvalidArgumentError("the CA file cannot be read");
  }
  if (options.client_cert_file.empty() != options.client_key_file.empty()) {
    return absl::InvalidArgumentError(options.client_cert_file.empty()
                                          ? "a client key needs its client certificate"
                                          : "a client certificate needs its private key");
  }
  if (!options.client_cert_file.empty() && ::access(options.client_cert_file.c_str(), R_OK) != 0) {
    return absl::InvalidArgumentError("the client certificate file cannot be read");
  }
  if (!options.client_key_file.empty() && ::access(options.client_key_file.c_str(), R_OK) != 0) {
    return absl::InvalidArgumentError("the client key file cannot be read");
  }
  if (!CurlGlobalInit()) {
    return absl::InternalError("the HTTP library could not be initialised");
  }
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(options), std::move(pin)));
}

absl::StatusOr<std::unique_ptr<HttpClient>> HttpClient::Open(std::string_view base_url,
                                                             ClientOptions options,
                                                             std::string_view what) {
  absl::StatusOr<Url> url = ParseUrl(base_url, what);
  if (!url.ok()) {
    return url.status();
  }
  options.base = *std::move(url);
  return Open(std::move(options));
}

absl::StatusOr<Response> HttpClient::Send(const Request& request,
                                          const std::atomic<bool>* cancelled) const {
  Response response;
  absl::StatusOr<StreamEnd> end = Stream(
      request,
      [&response](const ResponseHead& head) {
        response.head = head;
        return true;
      },
      [&response](std::string_view bytes) {
        response.body.append(bytes);
        return true;
      },
      cancelled);
  if (!end.ok()) {
    return end.status();
  }
  return response;
}

absl::StatusOr<StreamEnd> HttpClient::Stream(const Request& request, HeadFn on_head, BodyFn on_body,
                                             const std::atomic<bool>* cancelled) const {
  if (absl::Status valid = CheckRequest(request); !valid.ok()) {
    return valid;
  }
  if (cancelled != nullptr && cancelled->load(std::memory_order_acquire)) {
    return ClientError(ErrorKind::kCancelled, "the request was cancelled");
  }
  if (UsesKeptTransport(request)) {
    return kept_->Stream(request, on_head, on_body, cancelled);
  }
  Exchange exchange(options_, on_head, on_body, cancelled);
  const HandlePool::Handles handles = pool_->Acquire();
  if (handles.easy == nullptr) {
    return absl::ResourceExhaustedError("the HTTP exchange could not be set up");
  }
  // Back to the pool however the exchange ends (after the header list below is freed).
  const absl::Cleanup release = [this, handles] { pool_->Release(handles); };
  CURL* e = handles.easy;
  CURLM* multi = handles.multi;
  const std::string url = options_.base.Origin() + options_.base.Target(request.target);
  std::unique_ptr<curl_slist, CurlListDeleter> headers;
  SetOptions(e, options_, pin_, request, url, exchange, headers);

  if (curl_multi_add_handle(multi, e) != CURLM_OK) {
    return absl::ResourceExhaustedError("the HTTP exchange could not be set up");
  }
  std::optional<TimeoutPhase> fired;
  int running = 1;
  while (true) {
    if (curl_multi_perform(multi, &running) != CURLM_OK || running == 0) {
      break;
    }
    if (exchange.IsCancelled()) {
      break;
    }
    if (fired = exchange.Due(); fired.has_value()) {
      break;
    }
    curl_multi_poll(multi, nullptr, 0, exchange.WaitMillis(), nullptr);
  }
  CURLcode result = CURLE_OK;
  bool finished = false;
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
    if (message->msg == CURLMSG_DONE) {
      result = message->data.result;
      finished = true;
    }
  }
  curl_multi_remove_handle(multi, e);

  if (exchange.IsCancelled() || exchange.abort() == Abort::kCancelled) {
    return ClientError(ErrorKind::kCancelled, "the request was cancelled");
  }
  if (fired.has_value()) {
    return TimeoutError(*fired, options_.timeouts);
  }
  switch (exchange.abort()) {
    case Abort::kStopped:
      return StreamEnd::kStopped;
    case Abort::kTooLarge:
      return ClientError(
          ErrorKind::kTooLarge,
          exchange.head_done()
              ? absl::StrCat("the response body is larger than ", options_.max_body_bytes, " bytes")
              : absl::StrCat("the response headers are larger than ", options_.max_header_bytes,
                             " bytes"));
    default:
      break;
  }
  if (!finished) {
    return ClientError(ErrorKind::kProtocol, "the HTTP exchange ended unexpectedly");
  }
  if (result != CURLE_OK) {
    long os_error = 0;  // NOLINT(runtime/int): libcurl's type
    curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os_error);
    return CurlFailure(result, static_cast<int>(os_error), exchange.head_done(), !pin_.empty(),
                       options_.timeouts);
  }
  if (!exchange.head_done()) {
    return ClientError(ErrorKind::kProtocol, "the server's reply has no complete header");
  }
  return StreamEnd::kComplete;
}

}  // namespace pulse::http_client
