// FakeAgentServer: a loopback server speaking the agent's side of the host agent protocol
// (docs/agent.md) on the real HTTP transport (adapters/http: HttpServer, SseStream), for the
// runtime's tests. It authenticates agent tokens, greets each command stream with a hello,
// records every report and result it receives (decoded with the protocol's own decoders),
// and lets a test play a hostile server: push any frame on the open stream, end every stream
// at once, greet another host, refuse the host with 403. Thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/hostagent/wire.h"
#include "pulse/adapters/http/http_server.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/adapters/http/token_authenticator.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/in_memory_token_store.h"

namespace pulse::adapters::hostagent::testing {

struct ServerScript {
  bool end_streams_after_hello = false;  // every stream ends right after its hello
  std::string hello_host;                // "" = the host the agent named
  bool command_before_hello = false;     // a command frame precedes the hello
  std::string refuse_host;               // this host gets 403 agent_host_mismatch everywhere
};

class FakeAgentServer {
 public:
  FakeAgentServer();
  ~FakeAgentServer();

  std::string url() const;
  // A token of kind agent that authenticates here.
  std::string Token();
  void SetScript(const ServerScript& script);

  // Queues an `event: command` frame (or any event name) on the open stream; false when none
  // is open.
  bool Push(std::string_view event, std::string_view data);
  // Waits until `count` streams were opened (hello sent), up to `timeout`.
  bool WaitForStreams(std::size_t count, absl::Duration timeout);
  bool WaitForReports(std::size_t count, absl::Duration timeout);
  bool WaitForResults(std::size_t count, absl::Duration timeout);

  std::vector<Report> reports();
  std::vector<Result> results();
  std::vector<absl::Time> stream_times();  // when each stream was opened
  std::size_t requests();                  // every request that reached a handler
  std::size_t malformed();                 // reports or results the decoders refused

 private:
  http::HttpReply OnReport(const http::HttpRequest& request);
  http::HttpReply OnResult(const http::HttpRequest& request);
  http::HttpReply OnCommands(const http::HttpRequest& request);
  bool WaitFor(const std::function<bool()>& done, absl::Duration timeout);

  pulse::testing::FakeClock clock_;
  pulse::testing::InMemoryTokenStore store_;
  http::TokenAuthenticator authenticator_{store_, clock_};
  std::unique_ptr<http::HttpServer> server_;
  absl::Mutex mu_;
  ServerScript script_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<http::SseStream> stream_ ABSL_GUARDED_BY(mu_);
  std::vector<Report> reports_ ABSL_GUARDED_BY(mu_);
  std::vector<Result> results_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> stream_times_ ABSL_GUARDED_BY(mu_);
  std::size_t requests_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t malformed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pulse::adapters::hostagent::testing
