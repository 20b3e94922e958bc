// Internal: builds and emits the loop's stream events (payload shapes in loop_event.h). Keeps
// the two stream invariants every path relies on: at most one `error`, and exactly one `done`,
// which must be the last event (anything emitted after it is dropped). Every text that echoes
// the model or a tool (content, tool_start input, tool_end output) passes RedactSecrets first,
// the redaction of the outbound policy: an argument or result never reaches the stream raw. A
// content delta is redacted on its own, so a secret split across two deltas is not caught.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/model/model_route.h"
#include "pulse/core/model/session_record.h"
#include "pulse/core/ports/event_sink.h"

namespace pulse::core::loop_internal {

class Emitter {
 public:
  // `route` labels `done` and decides whether its cost can be known.
  Emitter(EventSink& sink, const ModelRoute& route);

  void Session(std::string_view id);
  void WorkflowState(std::string_view phase, std::string_view message,
                     std::optional<SessionState> state = std::nullopt, std::string_view tool = {});
  void ProviderRetry(int attempt, int max_attempts, std::int64_t retry_after_ms,
                     std::string_view message, SessionState state);
  void Content(std::string_view text);
  void ToolStart(std::string_view id, std::string_view name, std::string_view input);
  void ToolProgress(std::string_view id, std::string_view name, std::string_view phase,
                    std::string_view message);
  void ToolEnd(std::string_view id, std::string_view name, std::string_view output, bool success);
  void ApprovalNeeded(const ActionRecord& record, std::string_view tool_id,
                      std::string_view tool_name);
  void Question(std::string_view session_id, std::string_view question_id,
                std::string_view question_json);
  // Ignored after the first error of the stream.
  void Error(std::string_view code, std::string_view reason, std::string_view message,
             std::string_view tool_name, const RunCounters& counters, int max_provider_calls);
  // The counters' usage, then the route, the run's cost (null unless the route is metered with
  // a usable price and every call's cost was known) and whether a money budget applies.
  void Done(std::string_view session_id, std::string_view outcome, SessionState state,
            const RunCounters& counters);

  bool done() const { return done_; }

 private:
  void Emit(LoopEventType type, std::string data_json);

  EventSink& sink_;
  std::string route_label_;
  bool budget_applicable_ = false;
  bool price_known_ = false;
  bool error_ = false;
  bool done_ = false;
};

}  // namespace pulse::core::loop_internal
