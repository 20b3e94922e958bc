// ScriptedLlmProvider: an LlmProvider that plays a script of turns, one per Stream call, and
// records every request it received (a deep copy), so tests assert on exactly what the model
// was offered: messages and their roles, tool lists, tool_choice, max_tokens. A call past the
// end of the script fails with FailedPrecondition ("script exhausted"), which the loop reports
// as a provider failure, so an unexpected extra turn cannot pass silently. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/core/ports/llm_provider.h"

namespace pulse::testing {

inline core::ToolCall Call(std::string id, std::string name, std::string arguments_json) {
  return core::ToolCall{std::move(id), std::move(name), std::move(arguments_json)};
}

// One scripted response: the events to deliver, then the status to return.
struct ScriptedTurn {
  std::vector<core::LlmStreamEvent> events;
  absl::Status status;

  // Content (streamed in one delta; none when empty), then finish stop.
  static ScriptedTurn Text(std::string text) {
    ScriptedTurn t;
    if (!text.empty()) {
      t.events.push_back(core::LlmStreamEvent::ContentDelta(std::move(text)));
    }
    t.events.push_back(core::LlmStreamEvent::Finish(core::FinishReason::kStop));
    return t;
  }
  // Optional preamble text, the calls in order, then finish tool_calls.
  static ScriptedTurn Calls(std::vector<core::ToolCall> calls, std::string text = "") {
    ScriptedTurn t;
    if (!text.empty()) {
      t.events.push_back(core::LlmStreamEvent::ContentDelta(std::move(text)));
    }
    for (core::ToolCall& call : calls) {
      t.events.push_back(core::LlmStreamEvent::ToolCallDone(std::move(call)));
    }
    t.events.push_back(core::LlmStreamEvent::Finish(core::FinishReason::kToolCalls));
    return t;
  }
  // `before` delivered, then `status` returned.
  static ScriptedTurn Error(absl::Status status, std::vector<core::LlmStreamEvent> before = {}) {
    ScriptedTurn t;
    t.events = std::move(before);
    t.status = std::move(status);
    return t;
  }
  // Adds a usage event before the finish event (or at the end when there is none).
  ScriptedTurn WithUsage(std::int64_t input_tokens, std::int64_t output_tokens) && {
    auto usage = core::LlmStreamEvent::Usage(input_tokens, output_tokens);
    if (!events.empty() && events.back().kind == core::LlmStreamEvent::Kind::kFinish) {
      events.insert(events.end() - 1, usage);
    } else {
      events.push_back(usage);
    }
    return std::move(*this);
  }
  // Drops the finish event: the stream "ends" without a terminal finish reason.
  ScriptedTurn WithoutFinish() && {
    if (!events.empty() && events.back().kind == core::LlmStreamEvent::Kind::kFinish) {
      events.pop_back();
    }
    return std::move(*this);
  }
};

class ScriptedLlmProvider final : public core::LlmProvider {
 public:
  ScriptedLlmProvider() = default;
  explicit ScriptedLlmProvider(std::vector<ScriptedTurn> script) : script_(std::move(script)) {}

  void Add(ScriptedTurn turn) {
    absl::MutexLock lock(&mu_);
    script_.push_back(std::move(turn));
  }

  absl::Status Stream(const core::LlmRequest& request,
                      absl::FunctionRef<void(const core::LlmStreamEvent&)> on_event) override {
    ScriptedTurn turn;
    {
      absl::MutexLock lock(&mu_);
      requests_.push_back(request);
      if (next_ >= script_.size()) {
        return absl::FailedPreconditionError("script exhausted");
      }
      turn = script_[next_++];
    }
    for (const core::LlmStreamEvent& event : turn.events) {
      on_event(event);
    }
    return turn.status;
  }

  // Every request received, in order.
  std::vector<core::LlmRequest> Requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }
  core::LlmRequest Request(std::size_t i) const {
    absl::MutexLock lock(&mu_);
    return requests_.at(i);
  }
  std::size_t RequestCount() const {
    absl::MutexLock lock(&mu_);
    return requests_.size();
  }
  // Turns not played yet.
  std::size_t Remaining() const {
    absl::MutexLock lock(&mu_);
    return script_.size() - next_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<ScriptedTurn> script_ ABSL_GUARDED_BY(mu_);
  std::size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<core::LlmRequest> requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
