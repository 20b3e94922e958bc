#include "pulse/core/policy/decision.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "policy_test_support.h"
#include "pulse/core/errors/tool_error.h"

namespace pulse::core {
namespace {

using testing::ChatAndExecute;
using testing::Json;
using testing::Policy;
using testing::TestRegistry;
using testing::ValidArgs;
using testing::WithValue;

constexpr ExecutionProfile kInteractive = ExecutionProfile::kInteractive;
constexpr ExecutionProfile kDetection = ExecutionProfile::kPatrolDetection;
constexpr ExecutionProfile kInvestigation = ExecutionProfile::kPatrolInvestigation;

// The most authority a policy can hold.
InvocationPolicy Full() { return Policy(ScopeSet::All(), ControlLevel::kAutonomous, kInteractive); }

Decision DecideNamed(const InvocationPolicy& policy, std::string_view tool) {
  static const ToolRegistry registry = TestRegistry();
  return Decide(policy, registry, tool, ValidArgs(tool));
}

TEST_CASE("retired raw-command names are refused first with a stable code", "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  std::vector<std::string> names(kRetiredToolNames.begin(), kRetiredToolNames.end());
  names.insert(names.end(), {" run_command ", "RUN_COMMAND", "Pulse_Run_Command\t"});
  for (const InvocationPolicy& policy :
       {Full(), Policy(ScopeSet(), ControlLevel::kReadOnly, ExecutionProfile::kUnknown)}) {
    for (const std::string& name : names) {
      INFO("[" << name << "]");
      const Decision d = Decide(policy, registry, name, Json(R"({"command":"rm -rf /"})"));
      CHECK_FALSE(d.allowed);
      CHECK(d.code == ToolErrorCode::kPolicyBlocked);
      CHECK(d.rule == PolicyRule::kRetiredTool);
      CHECK_THAT(d.reason, Catch::Contains("retired and denied"));
    }
  }
}

TEST_CASE("blank and unknown tool names are refused", "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  for (const char* blank : {"", "   ", "\t\n"}) {
    const Decision d = Decide(Full(), registry, blank, Json("{}"));
    CHECK(d.code == ToolErrorCode::kInvalidInput);
    CHECK(d.rule == PolicyRule::kBlankName);
  }
  for (const char* unknown : {"pulse_shell", "PULSE_QUERY", "pulse query", "future_tool"}) {
    INFO(unknown);
    const Decision d = Decide(Full(), registry, unknown, Json(R"({"action":"inspect"})"));
    CHECK_FALSE(d.allowed);
    CHECK(d.code == ToolErrorCode::kNotFound);
    CHECK(d.rule == PolicyRule::kUnknownTool);
  }
  CHECK(Decide(Full(), registry, "  pulse_query ", ValidArgs("pulse_query")).allowed);
}

TEST_CASE("a token with neither ai:chat nor ai:execute may call nothing", "[core][policy]") {
  const ScopeSet everything_else = ScopeSet::Of(
      {Scope::kMonitoringRead, Scope::kMonitoringWrite, Scope::kSettingsRead, Scope::kSettingsWrite,
       Scope::kAuditRead, Scope::kAgentReport, Scope::kAgentExec, Scope::kActionsPlan,
       Scope::kActionsApprove, Scope::kActionsExecute});
  for (const ScopeSet& scopes : {ScopeSet(), everything_else}) {
    for (std::string_view tool : kBuiltinToolNames) {
      const Decision d = DecideNamed(Policy(scopes, ControlLevel::kAutonomous, kInteractive), tool);
      INFO(tool);
      CHECK_FALSE(d.allowed);
      CHECK(d.rule == PolicyRule::kMissingScope);
      CHECK(d.code == ToolErrorCode::kPolicyBlocked);
    }
  }
}

TEST_CASE("ai:chat alone converses and reads but never writes", "[core][policy]") {
  const ScopeSet chat = ScopeSet::Of({Scope::kAiChat});
  for (ExecutionProfile profile : {kInteractive, kDetection, kInvestigation}) {
    const InvocationPolicy policy = Policy(chat, ControlLevel::kAutonomous, profile);
    for (std::string_view tool : {kToolPulseControl, kToolPatrolReportFinding,
                                  kToolPatrolAssessFinding, kToolPatrolResolveFinding}) {
      const Decision d = DecideNamed(policy, tool);
      INFO(ToString(profile) << " " << tool);
      CHECK_FALSE(d.allowed);
      CHECK(d.rule == PolicyRule::kMissingScope);
      REQUIRE(d.details.size() == 1);
      CHECK(std::get<std::string>(d.details[0].second) == "ai:execute");
    }
    CHECK(DecideNamed(policy, kToolPulseQuery).allowed);
    CHECK(DecideNamed(policy, kToolPulseRead).allowed);
    CHECK(DecideNamed(policy, kToolPatrolGetFindings).allowed);
  }
  CHECK(
      DecideNamed(Policy(chat, ControlLevel::kReadOnly, kInteractive), kToolPulseQuestion).allowed);
}

TEST_CASE("infrastructure writes need every condition at once", "[core][policy]") {
  const ScopeSet execute = ScopeSet::Of({Scope::kAiExecute});
  CHECK(DecideNamed(Policy(execute, ControlLevel::kControlled, kInteractive), kToolPulseControl)
            .allowed);
  CHECK(DecideNamed(Policy(execute, ControlLevel::kAutonomous, kInteractive), kToolPulseControl)
            .allowed);

  struct Case {
    InvocationPolicy policy;
    PolicyRule rule;
  };
  const std::vector<Case> cases = {
      {Policy(ScopeSet::Of({Scope::kAiChat, Scope::kActionsExecute}), ControlLevel::kAutonomous,
              kInteractive),
       PolicyRule::kMissingScope},
      {Policy(execute, ControlLevel::kReadOnly, kInteractive), PolicyRule::kControlLevel},
      {Policy(execute, NormalizeControlLevel("bogus"), kInteractive), PolicyRule::kControlLevel},
      {Policy(execute, ControlLevel::kAutonomous, kInteractive, /*deny=*/true),
       PolicyRule::kInfrastructureDenied},
      {Policy(execute, ControlLevel::kAutonomous, kDetection), PolicyRule::kProfileForbidsWrite},
      {Policy(execute, ControlLevel::kAutonomous, kInvestigation),
       PolicyRule::kProfileForbidsWrite},
      {Policy(execute, ControlLevel::kAutonomous, ExecutionProfile::kUnknown),
       PolicyRule::kProfileForbidsWrite},
  };
  for (const Case& c : cases) {
    const Decision d = DecideNamed(c.policy, kToolPulseControl);
    INFO(ToString(c.rule));
    CHECK_FALSE(d.allowed);
    CHECK(d.rule == c.rule);
    CHECK(d.code == ToolErrorCode::kPolicyBlocked);
    CHECK(d.invocation_class == testing::kWriteInfrastructure);
  }
}

TEST_CASE("a control-level refusal is operator guidance that is never retryable",
          "[core][policy]") {
  const Decision d = DecideNamed(Policy(ChatAndExecute(), ControlLevel::kReadOnly, kInteractive),
                                 kToolPulseControl);
  REQUIRE(d.rule == PolicyRule::kControlLevel);
  CHECK(d.reason == ControlToolsDisabledMessage(ControlLevel::kReadOnly));
  const ToolError error = d.ToToolError();
  CHECK(error.code == ToolErrorCode::kPolicyBlocked);
  CHECK(error.blocked);
  CHECK_FALSE(error.retryable);
  const rapidjson::Document json = Json(error.ToJson());
  const rapidjson::Value& details = json["error"]["details"];
  CHECK(std::string(details["rule"].GetString()) == "control_level");
  CHECK(std::string(details["tool"].GetString()) == "pulse_control");
  CHECK(std::string(details["control_level"].GetString()) == "read_only");
  CHECK(std::string(details["enable_with"].GetString()) == "--control-level controlled");
  CHECK(ExtractToolErrorCode(error.ToJson()) == "POLICY_BLOCKED");
}

TEST_CASE("pulse_question and every user_input call need the interactive profile",
          "[core][policy]") {
  for (ExecutionProfile profile : {kDetection, kInvestigation, ExecutionProfile::kUnknown}) {
    const InvocationPolicy policy = Policy(ScopeSet::All(), ControlLevel::kAutonomous, profile);
    const Decision question = DecideNamed(policy, kToolPulseQuestion);
    INFO(ToString(profile));
    CHECK_FALSE(question.allowed);
    CHECK(question.code == ToolErrorCode::kNonInteractive);
    CHECK(question.rule == PolicyRule::kInteractiveOnly);
    const ToolRegistry registry = TestRegistry();
    const Decision ask = Decide(policy, registry, testing::kFleetOps,
                                WithValue(ValidArgs("fleet_ops"), "op", "ask"));
    CHECK(ask.code == ToolErrorCode::kNonInteractive);
  }
  CHECK(DecideNamed(Full(), kToolPulseQuestion).allowed);
}

TEST_CASE("investigation-only tools run only in patrol_investigation", "[core][policy]") {
  for (std::string_view tool :
       {kToolPatrolActionCapabilities, kToolPatrolProposeAction, testing::kExtProbe}) {
    for (ExecutionProfile profile : {kInteractive, kDetection, ExecutionProfile::kUnknown}) {
      const Decision d =
          DecideNamed(Policy(ScopeSet::All(), ControlLevel::kAutonomous, profile), tool);
      INFO(tool << " " << ToString(profile));
      CHECK_FALSE(d.allowed);
      CHECK(d.rule == PolicyRule::kInvestigationOnly);
      CHECK(d.code == ToolErrorCode::kPolicyBlocked);
    }
    CHECK(DecideNamed(
              Policy(ScopeSet::Of({Scope::kAiChat}), ControlLevel::kReadOnly, kInvestigation), tool)
              .allowed);
  }
}

TEST_CASE("patrol_detection writes pulse_state only through its allowlist", "[core][policy]") {
  const InvocationPolicy detection = Policy(ChatAndExecute(), ControlLevel::kReadOnly, kDetection);
  for (std::string_view tool : {kToolPatrolReportFinding, kToolPatrolAssessFinding}) {
    INFO(tool);
    CHECK(DecideNamed(detection, tool).allowed);
  }
  // Detection may report and assess; closing a finding needs verifier evidence, so the
  // model's resolve is refused at every level and with every scope.
  for (ControlLevel level :
       {ControlLevel::kReadOnly, ControlLevel::kControlled, ControlLevel::kAutonomous}) {
    const Decision resolve =
        DecideNamed(Policy(ScopeSet::All(), level, kDetection), kToolPatrolResolveFinding);
    CHECK_FALSE(resolve.allowed);
    CHECK(resolve.rule == PolicyRule::kProfileForbidsWrite);
  }
  const Decision note = DecideNamed(detection, testing::kNoteWriter);
  CHECK(note.rule == PolicyRule::kProfileForbidsWrite);
  const ToolRegistry registry = TestRegistry();
  const Decision annotate = Decide(detection, registry, testing::kFleetOps,
                                   WithValue(ValidArgs("fleet_ops"), "op", "annotate"));
  CHECK(annotate.rule == PolicyRule::kProfileForbidsWrite);
  CHECK(DecideNamed(detection, kToolPulseControl).rule == PolicyRule::kProfileForbidsWrite);
}

TEST_CASE("patrol_investigation and the interactive profile write no pulse_state",
          "[core][policy]") {
  for (ExecutionProfile profile : {kInvestigation, kInteractive}) {
    const InvocationPolicy policy = Policy(ScopeSet::All(), ControlLevel::kAutonomous, profile);
    for (std::string_view tool : {kToolPatrolReportFinding, kToolPatrolAssessFinding,
                                  kToolPatrolResolveFinding, testing::kNoteWriter}) {
      INFO(ToString(profile) << " " << tool);
      const Decision d = DecideNamed(policy, tool);
      CHECK_FALSE(d.allowed);
      CHECK(d.rule == PolicyRule::kProfileForbidsWrite);
    }
  }
  CHECK(DecideNamed(Policy(ScopeSet::All(), ControlLevel::kAutonomous, kInvestigation),
                    kToolPulseControl)
            .rule == PolicyRule::kProfileForbidsWrite);
}

TEST_CASE("an unknown profile denies every write but still reads", "[core][policy]") {
  for (ExecutionProfile profile :
       {ParseExecutionProfile("assistant"), static_cast<ExecutionProfile>(42)}) {
    const InvocationPolicy policy = Policy(ScopeSet::All(), ControlLevel::kAutonomous, profile);
    CHECK(policy.Profile() == ExecutionProfile::kUnknown);
    for (std::string_view tool : {kToolPulseControl, kToolPatrolReportFinding,
                                  kToolPatrolAssessFinding, kToolPatrolResolveFinding}) {
      INFO(tool);
      CHECK(DecideNamed(policy, tool).rule == PolicyRule::kProfileForbidsWrite);
    }
    CHECK(DecideNamed(policy, kToolPulseQuery).allowed);
    CHECK(DecideNamed(policy, kToolPulseMetrics).allowed);
  }
}

TEST_CASE("a missing, mistyped, repeated or unknown discriminator is refused", "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  for (const char* args :
       {R"({"target":"web-1"})", R"({"op":42,"target":"web-1"})", R"({"op":null,"target":"a"})",
        R"({"op":"scale","target":"web-1"})", R"({"op":"","target":"web-1"})",
        R"({"op":["status"],"target":"web-1"})", R"({"op":"status","op":"status","target":"a"})",
        R"({"Op":"status","target":"web-1"})"}) {
    INFO(args);
    const Decision d = Decide(Full(), registry, testing::kFleetOps, Json(args));
    CHECK_FALSE(d.allowed);
    CHECK(d.rule == PolicyRule::kUnknownDiscriminator);
    CHECK(d.code == ToolErrorCode::kInvalidInput);
    CHECK(d.invocation_class == kFailClosedClass);
  }
  // Values normalize like the classifier does (the schema enum still rejects the spelling).
  const Decision padded =
      Decide(Full(), registry, testing::kFleetOps, Json(R"({"op":" RESTART ","target":"a"})"));
  CHECK(padded.allowed);
  CHECK(padded.invocation_class == testing::kWriteInfrastructure);
}

TEST_CASE("an invalid invocation class is refused even with full authority", "[core][policy]") {
  ToolSpec spec = testing::NoteWriterSpec();
  const rapidjson::Document args = ValidArgs("note_writer");
  for (InvocationClass bad : {InvocationClass{ToolKind::kWrite, MutationTarget::kNone},
                              InvocationClass{ToolKind::kRead, MutationTarget::kInfrastructure},
                              InvocationClass{ToolKind::kRead, static_cast<MutationTarget>(7)},
                              InvocationClass{static_cast<ToolKind>(9), MutationTarget::kNone},
                              InvocationClass{ToolKind::kWrite, static_cast<MutationTarget>(7)}}) {
    spec.descriptor = StaticDescriptor(bad);
    const Decision d = Decide(Full(), spec, args);
    CHECK_FALSE(d.allowed);
    CHECK(d.rule == PolicyRule::kInvalidClass);
  }
  spec.descriptor = StaticDescriptor(testing::kReadNone);
  spec.descriptor.discriminator = "note";  // both shapes at once
  CHECK(Decide(Full(), spec, args).rule == PolicyRule::kInvalidClass);
  spec.descriptor = InvocationDescriptor{};  // neither shape
  CHECK(Decide(Full(), spec, args).rule == PolicyRule::kInvalidClass);
  ToolSpec ops = testing::FleetOpsSpec();
  ops.descriptor.cases["restart"] =
      InvocationClass{ToolKind::kWrite, static_cast<MutationTarget>(7)};
  CHECK(Decide(Full(), ops, Json(R"({"op":"restart","target":"a"})")).rule ==
        PolicyRule::kInvalidClass);
}

TEST_CASE("refusals render as stable JSON tool errors", "[core][policy]") {
  const Decision d =
      DecideNamed(Policy(ScopeSet::Of({Scope::kAiChat}), ControlLevel::kAutonomous, kInteractive),
                  kToolPulseControl);
  const std::string json = d.ToToolError().ToJson();
  CHECK(d.reason ==
        "tool \"pulse_control\" requests an infrastructure change, which needs the ai:execute "
        "scope; this token may converse and read only");
  CHECK(json ==
        R"({"error":{"code":"POLICY_BLOCKED","message":"tool \"pulse_control\" requests an )"
        R"(infrastructure change, which needs the ai:execute scope; this token may converse )"
        R"(and read only","blocked":true,"details":{"rule":"missing_scope","tool":"pulse_control",)"
        R"("required_scope":"ai:execute"}}})");
  for (PolicyRule rule :
       {PolicyRule::kAllowed, PolicyRule::kBlankName, PolicyRule::kRetiredTool,
        PolicyRule::kUnknownTool, PolicyRule::kToolUnavailable, PolicyRule::kInvalidArguments,
        PolicyRule::kReservedArgument, PolicyRule::kUnknownDiscriminator, PolicyRule::kInvalidClass,
        PolicyRule::kMissingScope, PolicyRule::kInteractiveOnly, PolicyRule::kInvestigationOnly,
        PolicyRule::kProfileForbidsWrite, PolicyRule::kInfrastructureDenied,
        PolicyRule::kControlLevel}) {
    const std::string name(ToString(rule));
    CHECK_FALSE(name.empty());
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos);
  }
}

}  // namespace
}  // namespace pulse::core
