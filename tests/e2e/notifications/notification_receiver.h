// A loopback HTTP receiver for notification tests: accepts POSTs on any path, records each
// (path, headers, body, arrival time), and answers from a script of statuses (then 200). It can
// be stopped and started again on the same port, to play a receiver that is down for a while.
// Thread-safe.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pulse::testing::e2e {

struct ReceivedRequest {
  std::string path;
  httplib::Headers headers;
  std::string body;
  absl::Time at;

  std::string Header(const std::string& name) const;
};

class NotificationReceiver {
 public:
  // Listens on 127.0.0.1, on an ephemeral port (kept across Stop/Start).
  NotificationReceiver();
  ~NotificationReceiver();
  NotificationReceiver(const NotificationReceiver&) = delete;
  NotificationReceiver& operator=(const NotificationReceiver&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port><path>".
  std::string Url(const std::string& path) const;

  // Stops listening (connections are refused until Start).
  void Stop();
  // Listens again on the same port.
  void Start();

  // The next requests are answered with these statuses, in order; then 200 again.
  void Script(std::vector<int> statuses);
  // Each request is answered after this delay.
  void SetDelay(absl::Duration delay);

  std::vector<ReceivedRequest> Requests() const;
  // Waits until at least `n` requests arrived; false after `timeout`.
  bool WaitFor(std::size_t n, absl::Duration timeout) const;

 private:
  void Listen();

  mutable absl::Mutex mu_;
  std::vector<ReceivedRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::deque<int> script_ ABSL_GUARDED_BY(mu_);
  absl::Duration delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace pulse::testing::e2e
