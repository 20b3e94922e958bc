#include "pulse/testing/fake_tls_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"

namespace pulse::testing {

class FakeTlsListener::Impl {
 public:
  explicit Impl(Handler handler) : handler_(std::move(handler)) {}

  absl::Status Listen(const TestCertificate& cert) {
    ctx_ = SSL_CTX_new(TLS_server_method());
    if (ctx_ == nullptr || SSL_CTX_use_certificate_chain_file(ctx_, cert.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx_, cert.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      return absl::InvalidArgumentError("the fake server cannot load its certificate");
    }
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return absl::UnavailableError("the fake server cannot listen");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
    return absl::OkStatus();
  }

  ~Impl() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    if (thread_.joinable()) {
      thread_.join();
    }
    if (fd_ >= 0) {
      ::close(fd_);
    }
    SSL_CTX_free(ctx_);
  }

  int port() const { return port_; }

  mutable absl::Mutex mu_;
  std::vector<FakePveRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::uint64_t handshakes_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t failed_handshakes_ ABSL_GUARDED_BY(mu_) = 0;

 private:
  void Serve() {
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        if (stopping_) {
          return;
        }
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) {
        continue;
      }
      const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) {
        continue;
      }
      timeval tv{2, 0};
      ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      ::setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
      SSL* ssl = SSL_new(ctx_);
      SSL_set_fd(ssl, client);
      if (SSL_accept(ssl) == 1) {
        {
          absl::MutexLock lock(&mu_);
          ++handshakes_;
        }
        ServeOne(ssl);
        SSL_shutdown(ssl);
      } else {
        absl::MutexLock lock(&mu_);
        ++failed_handshakes_;
      }
      ERR_clear_error();
      SSL_free(ssl);
      ::close(client);
    }
  }

  void ServeOne(SSL* ssl) {
    std::string in;
    char buffer[4096];
    std::size_t head_end = std::string::npos;
    while ((head_end = in.find("\r\n\r\n")) == std::string::npos && in.size() < 65536) {
      const int n = SSL_read(ssl, buffer, sizeof(buffer));
      if (n <= 0) {
        return;
      }
      in.append(buffer, static_cast<std::size_t>(n));
    }
    if (head_end == std::string::npos) {
      return;
    }
    FakePveRequest request;
    std::vector<std::string> lines = absl::StrSplit(in.substr(0, head_end), "\r\n");
    std::vector<std::string> start = absl::StrSplit(lines.front(), ' ');
    if (start.size() != 3) {
      return;
    }
    request.method = start[0];
    request.target = start[1];
    std::size_t length = 0;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const std::size_t colon = lines[i].find(':');
      if (colon == std::string::npos) {
        continue;
      }
      const std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
      const std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
      if (name == "authorization") {
        request.authorization = value;
      } else if (name == "content-length") {
        (void)absl::SimpleAtoi(value, &length);
      }
    }
    request.body = in.substr(head_end + 4);
    while (request.body.size() < length && length < 65536) {
      const int n = SSL_read(ssl, buffer, sizeof(buffer));
      if (n <= 0) {
        return;
      }
      request.body.append(buffer, static_cast<std::size_t>(n));
    }
    {
      absl::MutexLock lock(&mu_);
      requests_.push_back(request);
    }
    const FakeHttpReply reply = handler_(request);
    const std::string out = absl::StrCat(
        "HTTP/1.1 ", reply.status, " ", reply.reason,
        "\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: ", reply.body.size(),
        "\r\nConnection: close\r\n\r\n", reply.body);
    SSL_write(ssl, out.data(), static_cast<int>(out.size()));
  }

  Handler handler_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  SSL_CTX* ctx_ = nullptr;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

FakeTlsListener::FakeTlsListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakeTlsListener::~FakeTlsListener() = default;

absl::StatusOr<std::unique_ptr<FakeTlsListener>> FakeTlsListener::Start(
    const TestCertificate& certificate, Handler handler) {
  auto impl = std::make_unique<Impl>(std::move(handler));
  if (absl::Status s = impl->Listen(certificate); !s.ok()) {
    return s;
  }
  return std::unique_ptr<FakeTlsListener>(new FakeTlsListener(std::move(impl)));
}

int FakeTlsListener::port() const { return impl_->port(); }

std::vector<FakePveRequest> FakeTlsListener::Requests() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->requests_;
}

std::uint64_t FakeTlsListener::Handshakes() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->handshakes_;
}

std::uint64_t FakeTlsListener::FailedHandshakes() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->failed_handshakes_;
}

}  // namespace pulse::testing
