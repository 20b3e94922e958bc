// Shared fixtures for the invocation-policy tests: a registry of every built-in plus test
// extensions that exercise discriminators and placement hints, valid arguments for every
// tool, counting handlers, and policy builders. The class constants, Json() and the
// InvocationClass printer come from the tool tests' header. Header-only; test code only.
#pragma once

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../tools/tools_test_support.h"
#include "pulse/core/policy/decision.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/tools/tool_catalog.h"
#include "pulse/core/tools/tool_names.h"
#include "pulse/core/tools/tool_registry.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::testing {

// Test extension with a discriminator spanning every mutation target. "Inspect" is spelled
// with a capital to prove projection keeps the schema's own spelling; "default" names a
// value that only some policies offer.
inline constexpr std::string_view kFleetOps = "fleet_ops";
inline constexpr std::string_view kFleetOpsSchema = R"({
  "type": "object",
  "properties": {
    "op": {"type": "string", "enum": ["status", "Inspect", "annotate", "restart", "ask"],
           "default": "restart", "description": "What to do."},
    "target": {"type": "string", "minLength": 1, "maxLength": 64},
    "note": {"type": "string"},
    "tags": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["op", "target"],
  "additionalProperties": false
})";
// A static pulse_state writer no profile allowlists.
inline constexpr std::string_view kNoteWriter = "note_writer";
// A static read hinted investigation-only.
inline constexpr std::string_view kExtProbe = "ext_probe";

inline core::ToolSpec FleetOpsSpec() {
  core::ToolSpec spec;
  spec.name = std::string(kFleetOps);
  spec.description = "Operates on the test fleet.";
  spec.input_schema_json = std::string(kFleetOpsSchema);
  spec.descriptor = core::DiscriminatorDescriptor("op", {{"status", kReadNone},
                                                         {"inspect", kResolveNone},
                                                         {"annotate", kWritePulseState},
                                                         {"restart", kWriteInfrastructure},
                                                         {"ask", kUserInputNone}});
  return spec;
}

inline core::ToolSpec NoteWriterSpec() {
  core::ToolSpec spec;
  spec.name = std::string(kNoteWriter);
  spec.description = "Writes a note into Pulse state.";
  spec.input_schema_json = R"({"type":"object","properties":{"note":{"type":"string",
      "maxLength":128}},"required":["note"],"additionalProperties":false})";
  spec.descriptor = core::StaticDescriptor(kWritePulseState);
  return spec;
}

inline core::ToolSpec ExtProbeSpec() {
  core::ToolSpec spec;
  spec.name = std::string(kExtProbe);
  spec.description = "Probes a target during an investigation.";
  spec.input_schema_json = R"({"type":"object","properties":{"target":{"type":"string",
      "maxLength":64}},"required":["target"],"additionalProperties":false})";
  spec.descriptor = core::StaticDescriptor(kReadNone);
  spec.investigation_only = true;
  return spec;
}

// Every built-in, then the three test extensions.
inline core::ToolRegistry TestRegistry() {
  absl::StatusOr<core::ToolRegistry> registry = core::ToolRegistry::WithBuiltins();
  REQUIRE(registry.ok());
  REQUIRE(registry->RegisterExtension(FleetOpsSpec()).ok());
  REQUIRE(registry->RegisterExtension(NoteWriterSpec()).ok());
  REQUIRE(registry->RegisterExtension(ExtProbeSpec()).ok());
  return std::move(registry).value();
}

inline std::string Compact(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Arguments every built-in and test extension accepts (discriminator tools: with their
// first value; use WithValue to pick another).
inline std::string ValidArgsText(std::string_view tool) {
  static const std::map<std::string, std::string, std::less<>> kArgs = {
      {"pulse_query", R"({"action":"search","query":"web","limit":10})"},
      {"pulse_read", R"({"action":"status","resource_id":"vm-101"})"},
      {"pulse_metrics", R"({"resource_id":"vm-101","metric":"cpu","range":"24h"})"},
      {"pulse_control",
       R"({"type":"resource","resource_id":"vm-101","capability":"service.restart",
           "params":{"unit":"nginx","force":true},"reason":"nginx is hung"})"},
      {"pulse_question", R"({"question":"Which VM did you mean?","options":["vm-101","vm-102"]})"},
      {"patrol_get_findings", R"({"category":"capacity"})"},
      {"patrol_report_finding",
       R"({"resource_id":"vm-101","category":"capacity","severity":"warning","title":"Disk high",
           "description":"Disk is 91% full.","evidence":"df: 91%","recommendation":"Grow it.",
           "key":"disk-high"})"},
      {"patrol_assess_finding", R"({"finding_id":"f-1","verdict":"present","evidence":"91%"})"},
      {"patrol_resolve_finding",
       R"({"finding_id":"f-1","resolution_note":"grown","evidence":"df: 40%"})"},
      {"patrol_action_capabilities", R"({"resource_id":"vm-101"})"},
      {"patrol_propose_action",
       R"({"resource_id":"vm-101","capability":"disk.grow","params":{"gb":20},
           "rationale":"Disk is 91% full."})"},
      {"fleet_ops", R"({"op":"status","target":"web-1"})"},
      {"note_writer", R"({"note":"remember this"})"},
      {"ext_probe", R"({"target":"web-1"})"},
  };
  auto it = kArgs.find(tool);
  REQUIRE(it != kArgs.end());
  return it->second;
}

inline rapidjson::Document ValidArgs(std::string_view tool) { return Json(ValidArgsText(tool)); }

// `args` with member `key` set to the string `value` (replacing any existing member).
inline rapidjson::Document WithValue(rapidjson::Document args, std::string_view key,
                                     std::string_view value) {
  args.RemoveMember(rapidjson::StringRef(key.data(), key.size()));
  args.AddMember(rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size()),
                                  args.GetAllocator()),
                 rapidjson::Value(value.data(), static_cast<rapidjson::SizeType>(value.size()),
                                  args.GetAllocator()),
                 args.GetAllocator());
  return args;
}

// Counts its runs and records the last arguments it saw.
class CountingHandler final : public core::ToolHandler {
 public:
  explicit CountingHandler(int& runs) : runs_(runs) {}
  core::ToolResult Run(const rapidjson::Value& args, const core::ToolContext& context) override {
    ++runs_;
    last_args = Compact(args);
    last_class = context.invocation_class;
    return core::ToolResult::Success(R"({"ok":true})");
  }
  std::string last_args;
  core::InvocationClass last_class = core::kFailClosedClass;

 private:
  int& runs_;
};

// An executor over `registry` with a CountingHandler bound to every tool; runs[name] counts.
struct CountingExecutor {
  explicit CountingExecutor(const core::ToolRegistry& registry) : executor(registry) {
    for (const std::string& name : registry.Names()) {
      runs[name] = 0;
    }
    for (const std::string& name : registry.Names()) {
      auto handler = std::make_unique<CountingHandler>(runs[name]);
      handlers[name] = handler.get();
      REQUIRE(executor.Bind(name, std::move(handler)).ok());
    }
  }
  int TotalRuns() const {
    int total = 0;
    for (const auto& [name, n] : runs) {
      total += n;
    }
    return total;
  }
  std::map<std::string, int> runs;  // node-based: references stay valid
  std::map<std::string, CountingHandler*> handlers;
  core::ToolExecutor executor;
};

inline core::InvocationPolicy Policy(core::ScopeSet scopes, core::ControlLevel level,
                                     core::ExecutionProfile profile, bool deny = false) {
  return core::InvocationPolicy::Create(core::PolicyInputs{scopes, level, profile, deny});
}

inline core::ScopeSet ChatAndExecute() {
  return core::ScopeSet::Of({core::Scope::kAiChat, core::Scope::kAiExecute});
}

}  // namespace pulse::testing

namespace Catch {
template <>
struct StringMaker<pulse::core::PolicyRule> {
  static std::string convert(pulse::core::PolicyRule rule) {
    return std::string(pulse::core::ToString(rule));
  }
};
template <>
struct StringMaker<pulse::core::ToolErrorCode> {
  static std::string convert(pulse::core::ToolErrorCode code) {
    return std::string(pulse::core::ToString(code));
  }
};
template <>
struct StringMaker<pulse::core::ControlLevel> {
  static std::string convert(pulse::core::ControlLevel level) {
    return std::string(pulse::core::ToString(level));
  }
};
}  // namespace Catch
