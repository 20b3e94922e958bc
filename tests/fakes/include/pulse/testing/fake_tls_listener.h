// FakeTlsListener: the HTTPS plumbing of the loopback Proxmox fakes (OpenSSL over a socket on
// 127.0.0.1, one request per connection, `Connection: close`), serving a certificate made by
// MakeTestCertificate (fake_pve_server.h) and answering each request with a handler. It records
// every request it read and counts completed and failed TLS handshakes, so a test can prove
// that a client refusing the certificate sent nothing. The fake PBS (fake_pbs_server.h) serves
// through it; the fake PVE has the same plumbing inline (moving it here is a later cleanup that
// must not change its behaviour).
// Thread-safety: the handler runs on the one serving thread; the accessors may be called from
// any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/testing/fake_pve_server.h"

namespace pulse::testing {

struct FakeHttpReply {
  int status = 200;
  std::string reason = "OK";  // the status line's reason phrase
  std::string body;
};

class FakeTlsListener {
 public:
  using Handler = std::function<FakeHttpReply(const FakePveRequest&)>;

  // Listens on 127.0.0.1 (an ephemeral port) and serves on its own thread until destroyed.
  // InvalidArgument when the certificate or key does not load; Unavailable when it cannot
  // listen.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FakeTlsListener>> Start(
      const TestCertificate& certificate, Handler handler);
  ~FakeTlsListener();
  FakeTlsListener(const FakeTlsListener&) = delete;
  FakeTlsListener& operator=(const FakeTlsListener&) = delete;

  int port() const;
  std::vector<FakePveRequest> Requests() const;
  std::uint64_t Handshakes() const;
  std::uint64_t FailedHandshakes() const;

 private:
  class Impl;
  explicit FakeTlsListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pulse::testing
