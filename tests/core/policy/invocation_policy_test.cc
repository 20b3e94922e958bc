#include "pulse/core/policy/invocation_policy.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "policy_test_support.h"

namespace pulse::core {
namespace {

using testing::Json;

PolicyInputs Inputs(ControlLevel configured,
                    ExecutionProfile profile = ExecutionProfile::kInteractive) {
  return PolicyInputs{testing::ChatAndExecute(), configured, profile, false};
}

TEST_CASE("execution profile parsing is closed and unknown is non-interactive", "[core][policy]") {
  CHECK(ParseExecutionProfile("interactive") == ExecutionProfile::kInteractive);
  CHECK(ParseExecutionProfile("patrol_detection") == ExecutionProfile::kPatrolDetection);
  CHECK(ParseExecutionProfile("patrol_investigation") == ExecutionProfile::kPatrolInvestigation);
  for (const char* text : {"", "Interactive", " interactive", "patrol", "assistant", "unknown",
                           "patrol_detection ", "PATROL_INVESTIGATION"}) {
    INFO("[" << text << "]");
    CHECK(ParseExecutionProfile(text) == ExecutionProfile::kUnknown);
  }
  CHECK(IsInteractive(ExecutionProfile::kInteractive));
  CHECK_FALSE(IsInteractive(ExecutionProfile::kPatrolDetection));
  CHECK_FALSE(IsInteractive(ExecutionProfile::kPatrolInvestigation));
  CHECK_FALSE(IsInteractive(ExecutionProfile::kUnknown));
  CHECK(NormalizeExecutionProfile(static_cast<ExecutionProfile>(42)) == ExecutionProfile::kUnknown);
  CHECK(ToString(static_cast<ExecutionProfile>(42)) == "unknown");
}

TEST_CASE(
    "only patrol_detection has a pulse_state allowlist, and it may report and assess, "
    "never resolve",
    "[core][policy]") {
  const auto detection = PulseStateAllowlist(ExecutionProfile::kPatrolDetection);
  CHECK(std::vector<std::string_view>(detection.begin(), detection.end()) ==
        std::vector<std::string_view>{kToolPatrolReportFinding, kToolPatrolAssessFinding});
  CHECK(PulseStateAllowlist(ExecutionProfile::kInteractive).empty());
  CHECK(PulseStateAllowlist(ExecutionProfile::kPatrolInvestigation).empty());
  CHECK(PulseStateAllowlist(ExecutionProfile::kUnknown).empty());
  CHECK(PulseStateAllowlist(static_cast<ExecutionProfile>(42)).empty());

  const InvocationPolicy policy =
      InvocationPolicy::Create(Inputs(ControlLevel::kReadOnly, ExecutionProfile::kPatrolDetection));
  CHECK(policy.AllowsPulseStateWrite("patrol_report_finding"));
  CHECK(policy.AllowsPulseStateWrite("patrol_assess_finding"));
  CHECK_FALSE(policy.AllowsPulseStateWrite("patrol_resolve_finding"));
  CHECK_FALSE(policy.AllowsPulseStateWrite("patrol_report_finding "));
  CHECK_FALSE(policy.AllowsPulseStateWrite("note_writer"));
}

TEST_CASE("the configured level applies when the request asks for nothing", "[core][policy]") {
  for (ControlLevel configured :
       {ControlLevel::kReadOnly, ControlLevel::kControlled, ControlLevel::kAutonomous}) {
    CHECK(InvocationPolicy::Create(Inputs(configured)).EffectiveLevel() == configured);
    CHECK(InvocationPolicy::FromRequest(Inputs(configured), Json(R"({"message":"hi"})"))
              .EffectiveLevel() == configured);
  }
}

TEST_CASE("hostile request JSON never raises the configured control level", "[core][policy]") {
  struct Case {
    const char* body;
    ControlLevel from_controlled;  // effective level under a controlled configuration
  };
  const std::vector<Case> cases = {
      {R"({"control_level":"autonomous"})", ControlLevel::kControlled},
      {R"({"control_level":"AUTONOMOUS"})", ControlLevel::kReadOnly},
      {R"({"control_level":"autonomous "})", ControlLevel::kReadOnly},
      {R"({"control_level":" autonomous"})", ControlLevel::kReadOnly},
      {R"({"control_level":["autonomous"]})", ControlLevel::kReadOnly},
      {R"({"control_level":{"control_level":"autonomous"}})", ControlLevel::kReadOnly},
      {R"({"control_level":2})", ControlLevel::kReadOnly},
      {R"({"control_level":true})", ControlLevel::kReadOnly},
      {R"({"control_level":""})", ControlLevel::kReadOnly},
      {R"({"control_level":"read_only"})", ControlLevel::kReadOnly},
      {R"({"control_level":"controlled"})", ControlLevel::kControlled},
      {R"({"control_level":"read_only","control_level":"autonomous"})", ControlLevel::kReadOnly},
      {R"({"control_level":"autonomous","control_level":"read_only"})", ControlLevel::kReadOnly},
      {R"({"control_level":"controlled","control_level":"controlled"})", ControlLevel::kReadOnly},
      {R"({"autonomous_mode":true,"control_level":"autonomous"})", ControlLevel::kControlled},
      {R"({"autonomous_mode":true})", ControlLevel::kControlled},
      {R"(["autonomous"])", ControlLevel::kControlled},
      {R"("autonomous")", ControlLevel::kControlled},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    const rapidjson::Document body = Json(c.body);
    CHECK(InvocationPolicy::FromRequest(Inputs(ControlLevel::kControlled), body).EffectiveLevel() ==
          c.from_controlled);
    CHECK(InvocationPolicy::FromRequest(Inputs(ControlLevel::kReadOnly), body).EffectiveLevel() ==
          ControlLevel::kReadOnly);
    CHECK(InvocationPolicy::FromRequest(Inputs(static_cast<ControlLevel>(5)), body)
              .EffectiveLevel() == ControlLevel::kReadOnly);
    const ControlLevel under_autonomous =
        InvocationPolicy::FromRequest(Inputs(ControlLevel::kAutonomous), body).EffectiveLevel();
    if (c.from_controlled == ControlLevel::kReadOnly) {
      CHECK(under_autonomous == ControlLevel::kReadOnly);
    }
  }
}

TEST_CASE("patrol and unknown profiles deny infrastructure and clear autonomy", "[core][policy]") {
  for (ExecutionProfile profile :
       {ExecutionProfile::kPatrolDetection, ExecutionProfile::kPatrolInvestigation,
        ExecutionProfile::kUnknown, static_cast<ExecutionProfile>(42)}) {
    const InvocationPolicy policy =
        InvocationPolicy::Create(Inputs(ControlLevel::kAutonomous, profile));
    INFO(ToString(profile));
    CHECK(policy.DeniesInfrastructure());
    CHECK(policy.EffectiveLevel() == ControlLevel::kControlled);
    CHECK(policy.Profile() == NormalizeExecutionProfile(profile));
  }
  const InvocationPolicy interactive =
      InvocationPolicy::Create(Inputs(ControlLevel::kAutonomous, ExecutionProfile::kInteractive));
  CHECK_FALSE(interactive.DeniesInfrastructure());
  CHECK(interactive.EffectiveLevel() == ControlLevel::kAutonomous);
}

TEST_CASE("a policy can be narrowed but never widened", "[core][policy]") {
  const InvocationPolicy base = InvocationPolicy::Create(Inputs(ControlLevel::kControlled));
  CHECK(base.WithControlLevelAtMost(ControlLevel::kAutonomous).EffectiveLevel() ==
        ControlLevel::kControlled);
  CHECK(base.WithControlLevelAtMost(ControlLevel::kReadOnly).EffectiveLevel() ==
        ControlLevel::kReadOnly);
  CHECK(base.WithControlLevelAtMost(static_cast<ControlLevel>(8)).EffectiveLevel() ==
        ControlLevel::kReadOnly);
  CHECK(base.WithInfrastructureDenied().DeniesInfrastructure());
  CHECK_FALSE(base.DeniesInfrastructure());
  CHECK(base.WithInfrastructureDenied().Scopes() == base.Scopes());
}

TEST_CASE("the default inputs grant nothing that writes", "[core][policy]") {
  const InvocationPolicy policy = InvocationPolicy::Create(PolicyInputs{});
  CHECK(policy.Scopes().Empty());
  CHECK(policy.EffectiveLevel() == ControlLevel::kReadOnly);
  CHECK(policy.Profile() == ExecutionProfile::kUnknown);
  CHECK(policy.DeniesInfrastructure());
  CHECK(policy.PulseStateTools().empty());
}

}  // namespace
}  // namespace pulse::core
