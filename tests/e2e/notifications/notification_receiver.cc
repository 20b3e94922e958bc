#include "notification_receiver.h"

#include <utility>

#include "absl/time/clock.h"

namespace pulse::testing::e2e {

std::string ReceivedRequest::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

NotificationReceiver::NotificationReceiver() { Listen(); }

NotificationReceiver::~NotificationReceiver() { Stop(); }

std::string NotificationReceiver::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

void NotificationReceiver::Listen() {
  server_ = std::make_unique<httplib::Server>();
  server_->Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
    absl::Duration delay;
    int status = 200;
    {
      absl::MutexLock lock(&mu_);
      delay = delay_;
      if (!script_.empty()) {
        status = script_.front();
        script_.pop_front();
      }
    }
    absl::SleepFor(delay);
    {
      absl::MutexLock lock(&mu_);
      requests_.push_back(ReceivedRequest{req.path, req.headers, req.body, absl::Now()});
    }
    res.status = status;
    res.set_content(status == 200 ? "ok" : "scripted failure", "text/plain");
  });
  if (port_ == 0) {
    port_ = server_->bind_to_any_port("127.0.0.1");
  } else {
    // The port was ours a moment ago; a few tries cover TIME_WAIT-free rebinding races.
    for (int i = 0; i < 50 && !server_->bind_to_port("127.0.0.1", port_); ++i) {
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  httplib::Server* server = server_.get();
  thread_ = std::thread([server] { server->listen_after_bind(); });
  // stop() before the accept loop runs would be lost; wait for it (connections made meanwhile
  // wait in the listen backlog).
  for (int i = 0; i < 500 && !server_->is_running(); ++i) {
    absl::SleepFor(absl::Milliseconds(2));
  }
}

void NotificationReceiver::Stop() {
  if (server_ != nullptr) {
    server_->stop();
  }
  if (thread_.joinable()) {
    thread_.join();
  }
  server_.reset();
}

void NotificationReceiver::Start() {
  Stop();
  Listen();
}

void NotificationReceiver::Script(std::vector<int> statuses) {
  absl::MutexLock lock(&mu_);
  script_.assign(statuses.begin(), statuses.end());
}

void NotificationReceiver::SetDelay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  delay_ = delay;
}

std::vector<ReceivedRequest> NotificationReceiver::Requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

bool NotificationReceiver::WaitFor(std::size_t n, absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    {
      absl::MutexLock lock(&mu_);
      if (requests_.size() >= n) {
        return true;
      }
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::MutexLock lock(&mu_);
  return requests_.size() >= n;
}

}  // namespace pulse::testing::e2e
