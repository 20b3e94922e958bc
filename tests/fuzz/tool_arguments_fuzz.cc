// Fuzzes the validation of model-supplied tool arguments: the loop's parse of a call's
// arguments text (loop_tools.cc: blank is {}, ParseJson within 256 KiB / depth 64, one object)
// and the enforcement pipeline ToolExecutor::Execute over the built-in registry, with a
// recording handler bound to every built-in tool. Input: byte 0 picks the tool name (a
// built-in, padded with whitespace, retired, unknown or blank), byte 1 the policy (control
// level, profile, infrastructure denial), the rest is the arguments text. Invariants: a handler
// runs iff structure, reserved names, Decide() and the schema all pass, and then sees a deep
// copy equal to the arguments; schema acceptance implies the structural bounds; the canonical
// form of the arguments re-parses to the same canonical text and the same verdict.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "fuzz_support.h"
#include "pulse/core/json/json.h"
#include "pulse/core/policy/decision.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/classify.h"
#include "pulse/core/tools/tool_names.h"
#include "pulse/core/tools/tool_registry.h"
#include "pulse/core/tools/tool_schema.h"
#include "rapidjson/document.h"

namespace {

namespace core = pulse::core;

// The loop's bounds on a call's arguments text (loop_tools.cc kArgumentLimits).
constexpr core::JsonLimits kArgumentLimits{256 * 1024, 64};

struct Recording {
  int calls = 0;
  rapidjson::Document args;
};

class RecordingHandler final : public core::ToolHandler {
 public:
  explicit RecordingHandler(Recording& recording) : recording_(recording) {}
  core::ToolResult Run(const rapidjson::Value& args, const core::ToolContext&) override {
    ++recording_.calls;
    recording_.args.CopyFrom(args, recording_.args.GetAllocator());
    return core::ToolResult::Success("{}");
  }

 private:
  Recording& recording_;
};

struct Harness {
  core::ToolRegistry registry;
  std::unique_ptr<core::ToolExecutor> executor;
  Recording recording;
};

// A function-local static, destroyed at exit: RapidJSON keeps string pointers packed with flag
// bits (48-bit pointer optimisation), which LeakSanitizer cannot follow, so schemas that are
// never destroyed would read as leaks.
Harness& TheHarness() {
  static Harness harness;
  static const bool ready = [] {
    absl::StatusOr<core::ToolRegistry> registry = core::ToolRegistry::WithBuiltins();
    PULSE_FUZZ_CHECK(registry.ok(), "the built-in registry does not build");
    harness.registry = *std::move(registry);
    harness.executor = std::make_unique<core::ToolExecutor>(harness.registry);
    for (const std::string& name : harness.registry.Names()) {
      const absl::Status bound =
          harness.executor->Bind(name, std::make_unique<RecordingHandler>(harness.recording));
      PULSE_FUZZ_CHECK(bound.ok(), "a built-in does not bind");
    }
    return true;
  }();
  static_cast<void>(ready);
  return harness;
}

std::string ToolName(std::uint8_t b) {
  constexpr std::size_t kBuiltins = core::kBuiltinToolNames.size();
  const std::size_t pick = b % (kBuiltins + 4);
  if (pick < kBuiltins) {
    const std::string name(core::kBuiltinToolNames[pick]);
    return (b & 0x80) != 0 ? " " + name + "\t" : name;  // the classifiers trim whitespace
  }
  switch (pick - kBuiltins) {
    case 0:
      return std::string(core::kRetiredToolNames[b % core::kRetiredToolNames.size()]);
    case 1:
      return "not_a_tool";
    case 2:
      return "  ";
    default:
      return "";
  }
}

core::InvocationPolicy PolicyFor(std::uint8_t b) {
  core::PolicyInputs inputs;
  inputs.scopes = (b & 0x40) != 0 ? core::ScopeSet() : core::ScopeSet::All();
  inputs.configured_max = static_cast<core::ControlLevel>(b % 3);
  inputs.profile = static_cast<core::ExecutionProfile>((b / 3) % 4);
  inputs.deny_infrastructure_mutations = (b & 0x80) != 0;
  return core::InvocationPolicy::Create(inputs);
}

bool HasReservedKey(const rapidjson::Value& value) {
  if (value.IsObject()) {
    for (const auto& member : value.GetObject()) {
      if (core::IsReservedArgumentName(core::StringViewOf(member.name)) ||
          HasReservedKey(member.value)) {
        return true;
      }
    }
  } else if (value.IsArray()) {
    for (const auto& item : value.GetArray()) {
      if (HasReservedKey(item)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Harness& h = TheHarness();
  pulse::fuzz::Input in(data, size);
  const std::string name = ToolName(in.Byte());
  const core::InvocationPolicy policy = PolicyFor(in.Byte());
  const std::string_view raw = in.Rest();

  const bool blank = absl::StripAsciiWhitespace(pulse::core::ToAbsl(raw)).empty();
  absl::StatusOr<rapidjson::Document> parsed =
      core::ParseJson(blank ? std::string_view("{}") : raw, kArgumentLimits);
  if (!parsed.ok() || !parsed->IsObject()) {
    return 0;  // the loop refuses the call before any tool code sees it
  }
  const rapidjson::Document& args = *parsed;
  const std::string_view tool = core::TrimToolName(name);

  const bool structure_ok = core::CheckArgumentStructure(args).ok();
  const bool schema_ok = h.registry.ValidateArguments(tool, args).ok();
  PULSE_FUZZ_CHECK(!schema_ok || structure_ok, "schema-valid arguments break the bounds");
  PULSE_FUZZ_CHECK(!schema_ok || h.registry.Contains(tool), "valid arguments of an unknown tool");
  PULSE_FUZZ_CHECK(
      core::ClassifyToolCall(name, args) == core::ClassifyRegistered(h.registry, name, args),
      "the two classifiers disagree on a built-in registry");

  h.recording.calls = 0;
  const core::ToolCallOutcome outcome = h.executor->Execute(policy, name, args);
  PULSE_FUZZ_CHECK(outcome.dispatched == (h.recording.calls == 1), "dispatch and handler differ");
  PULSE_FUZZ_CHECK(h.recording.calls <= 1, "the handler ran twice");
  if (outcome.dispatched) {
    PULSE_FUZZ_CHECK(structure_ok && schema_ok, "dispatched arguments that do not validate");
    PULSE_FUZZ_CHECK(!HasReservedKey(args), "dispatched a reserved approval key");
    const core::Decision decision = core::Decide(policy, h.registry, name, args);
    PULSE_FUZZ_CHECK(decision.allowed, "dispatched what Decide() refuses");
    PULSE_FUZZ_CHECK(decision.invocation_class == outcome.invocation_class,
                     "dispatched under another class than Decide() gave");
    PULSE_FUZZ_CHECK(h.recording.args == args, "the handler saw other arguments");
    PULSE_FUZZ_CHECK(outcome.result.Ok(), "a dispatched success lost its result");
  } else {
    PULSE_FUZZ_CHECK(!outcome.result.Ok(), "a refusal without an error");
    if (structure_ok && schema_ok && !HasReservedKey(args)) {
      PULSE_FUZZ_CHECK(!core::Decide(policy, h.registry, name, args).allowed,
                       "refused a call every stage accepts");
    }
  }

  // The canonical text of accepted-shape arguments is stable and means the same.
  if (structure_ok) {
    const std::string canonical = core::CanonicalJson(args);
    absl::StatusOr<rapidjson::Document> again = core::ParseJson(canonical, kArgumentLimits);
    PULSE_FUZZ_CHECK(again.ok() && again->IsObject(), "canonical arguments do not re-parse");
    PULSE_FUZZ_CHECK(core::CanonicalJson(*again) == canonical, "canonical text is not stable");
    PULSE_FUZZ_CHECK(h.registry.ValidateArguments(tool, *again).ok() == schema_ok,
                     "the canonical form validates differently");
  }
  return 0;
}
