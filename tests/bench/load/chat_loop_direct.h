// The "direct loop" baseline of bench_chat_load: the Assistant's agentic loop called in this
// process, wired as pulse-server wires a chat (server_app.cc): LoopAssembly's chat flavour, the
// real OpenAI-compatible provider adapter talking to the same loopback fake, the demo fleet and
// its metric history, 4 tool threads, and a SQLite data dir at full durability (sessions,
// actions, findings, audit) opened as the server opens its own. What it leaves out is exactly
// what the server adds around the loop: HTTP in, auth, the run pool and the event stream out.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace pulse::bench {

struct LoopSessionResult {
  bool answered = false;  // the run ended `answered` with no `error` event
  int tool_calls = 0;     // tool_end events
  int tool_errors = 0;    // of them, failed
  std::string why;        // when not answered
};

class DirectChatLoop {
 public:
  // Opens the stores under `data_dir` (created if missing) and the provider at
  // `provider_base_url` (".../v1").
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DirectChatLoop>> Open(
      const std::string& data_dir, const std::string& provider_base_url);
  ~DirectChatLoop();
  DirectChatLoop(const DirectChatLoop&) = delete;
  DirectChatLoop& operator=(const DirectChatLoop&) = delete;

  // One new session with `message`, as an admin token's chat would run it. Thread-safe: the
  // bench calls it from one thread per session.
  LoopSessionResult RunSession(const std::string& message);

 private:
  struct Parts;
  explicit DirectChatLoop(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace pulse::bench
