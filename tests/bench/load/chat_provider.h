// The loopback fake model provider of bench_chat_load and cmake/soak-rss.sh: POST
// /v1/chat/completions answered in the OpenAI-compatible stream (the SSE chunks of the e2e
// tests' scripted turns). A request that carries no tool result gets one turn of 4 parallel
// read tool calls (pulse_query get and pulse_read status on vm:101 and vm:105); a request that
// carries tool results gets a final text. So every chat makes exactly two provider requests
// and 4 tool calls however many run at once, which pulse::testing::FakeProviderServer's single
// FIFO script cannot guarantee. Serves on 127.0.0.1 with 128 workers and a 512 backlog until
// destroyed. Thread-safe.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace pulse::bench {

inline constexpr int kChatToolsPerTurn = 4;
inline constexpr const char* kChatCompletionsPath = "/v1/chat/completions";

class ContentAwareProvider {
 public:
  // Listening and serving, each answer after `latency`; nullptr (the reason on stderr) when no
  // loopback port can be bound or its backlog raised.
  static std::unique_ptr<ContentAwareProvider> Start(std::chrono::milliseconds latency);
  ~ContentAwareProvider();
  ContentAwareProvider(const ContentAwareProvider&) = delete;
  ContentAwareProvider& operator=(const ContentAwareProvider&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port>".
  std::string base_url() const;
  // The first request body received without a tool result, and with one ("" before).
  std::string first_body() const;
  std::string second_body() const;

 private:
  explicit ContentAwareProvider(std::chrono::milliseconds latency);
  void Handle(const httplib::Request& req, httplib::Response& res);

  const std::chrono::milliseconds latency_;
  const std::string tool_turn_;
  const std::string final_turn_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable absl::Mutex mu_;
  std::string first_body_ ABSL_GUARDED_BY(mu_);
  std::string second_body_ ABSL_GUARDED_BY(mu_);
};

// Calls listen() again, with `backlog`, on this process's listening IPv4 socket bound to
// `port`; false when there is none or the call fails.
// cpp-httplib listens with the backlog compiled into Debian's library (5). 100 connects at once
// overflow it, and each dropped SYN is retried after 1 s: a load test would measure the
// kernel's SYN retry, not a round trip. pulse-server raises its own backlog
// (HttpServerOptions::listen_backlog, 512) the same way.
bool RaiseListenBacklog(int port, int backlog);

// One POST /api/ai/chat with `message`, its event stream read to the end: the transport error,
// the HTTP status, the raw stream, when the request started and when the `done` frame arrived.
struct StreamedChat {
  httplib::Error error = httplib::Error::Success;
  int status = 0;
  std::string raw;
  std::chrono::steady_clock::time_point start;
  std::optional<std::chrono::steady_clock::time_point> done_at;
};
StreamedChat PostChat(httplib::Client& client, const std::string& token,
                      const std::string& message);

}  // namespace pulse::bench
