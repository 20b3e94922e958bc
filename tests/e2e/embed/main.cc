// A third-party program embedding the installed kernel: it classifies a model's tool calls
// and gates them through a session state machine, exactly as an embedder's agent would.
#include <cstdio>

#include "absl/time/clock.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/json/json.h"
#include "pulse/core/tools/classify.h"

namespace {

class WallClock final : public pulse::core::Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

int Fail(const char* what) {
  std::printf("FAIL: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  using pulse::core::ClassifyToolCall;
  auto args = pulse::core::ParseJson(
      R"({"type":"resource","resource_id":"vm:101","capability":"restart","reason":"hung"})");
  if (!args.ok()) {
    return Fail("parse arguments");
  }
  pulse::core::InvocationClass control = ClassifyToolCall("pulse_control", *args);
  if (!pulse::core::IsInfrastructureWrite(control)) {
    return Fail("pulse_control must classify as an infrastructure write");
  }
  if (ClassifyToolCall("my_unknown_tool", *args) != pulse::core::kFailClosedClass) {
    return Fail("unknown tools must fail closed");
  }

  WallClock clock;
  pulse::core::SessionFsm fsm(clock);
  auto blocked = fsm.CanExecute(control, "pulse_control");
  if (!blocked.has_value()) {
    return Fail("a write before any target is established must be blocked");
  }
  std::printf("blocked as expected: %s\n", blocked->ToToolError().ToJson().c_str());
  std::puts("embedded pulse::core OK");
  return 0;
}
