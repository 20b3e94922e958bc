// The exhaustive agreement test: over every profile (and an unknown one) × control level (and
// unknown spellings) × a representative family of scope sets × the request-local
// infrastructure denial × every registered tool × every discriminator value, the projection
// offers a call if and only if Execute runs its handler for a valid call — and both agree
// with an oracle written directly from the rules in docs/security.md.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "policy_test_support.h"
#include "pulse/core/policy/projection.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/tools/classify.h"

namespace pulse::core {
namespace {

using testing::CountingExecutor;
using testing::Json;
using testing::TestRegistry;
using testing::ValidArgs;
using testing::WithValue;

struct NamedScopes {
  const char* label;
  ScopeSet scopes;
};

std::vector<NamedScopes> ScopeFamily() {
  return {
      {"none", ScopeSet()},
      {"ai:chat", ScopeSet::Of({Scope::kAiChat})},
      {"ai:execute", ScopeSet::Of({Scope::kAiExecute})},
      {"ai:chat+ai:execute", ScopeSet::Of({Scope::kAiChat, Scope::kAiExecute})},
      {"*", ScopeSet::All()},
      {"monitoring:read", ScopeSet::Of({Scope::kMonitoringRead})},
      {"ai:chat+actions:*", ScopeSet::Of({Scope::kAiChat, Scope::kActionsPlan,
                                          Scope::kActionsApprove, Scope::kActionsExecute})},
      {"all but ai:*", ScopeSet::Of({Scope::kMonitoringRead, Scope::kMonitoringWrite,
                                     Scope::kSettingsRead, Scope::kSettingsWrite, Scope::kAuditRead,
                                     Scope::kAgentReport, Scope::kAgentExec, Scope::kActionsPlan,
                                     Scope::kActionsApprove, Scope::kActionsExecute})},
  };
}

// One (tool, discriminator value) pair; value is empty for static tools.
using Call = std::pair<std::string, std::string>;

// Every call the registry can express, with valid arguments for it.
std::vector<std::pair<Call, rapidjson::Document>> AllCalls(const ToolRegistry& registry) {
  std::vector<std::pair<Call, rapidjson::Document>> calls;
  for (const std::string& name : registry.Names()) {
    const ToolSpec spec = *registry.Find(name);
    if (spec.descriptor.static_class.has_value()) {
      calls.emplace_back(Call{name, ""}, ValidArgs(name));
      continue;
    }
    const rapidjson::Document schema = Json(spec.input_schema_json);
    const rapidjson::Value& values =
        schema["properties"][spec.descriptor.discriminator.c_str()]["enum"];
    for (const auto& value : values.GetArray()) {
      const std::string v = value.GetString();
      calls.emplace_back(Call{name, v},
                         WithValue(ValidArgs(name), spec.descriptor.discriminator, v));
    }
  }
  return calls;
}

std::set<Call> Offered(const std::vector<ProjectedTool>& projected) {
  std::set<Call> offered;
  for (const ProjectedTool& tool : projected) {
    if (tool.offered_values.empty()) {
      offered.insert({tool.name, ""});
    }
    for (const std::string& v : tool.offered_values) {
      offered.insert({tool.name, v});
    }
  }
  return offered;
}

// One cell of the matrix, as the test sets it up (before any normalization).
struct Cell {
  ExecutionProfile profile;
  std::string level;  // the configured level's spelling
  NamedScopes scopes;
  bool deny;
};

// The rules of docs/security.md, restated from the raw inputs, independently of the code.
bool Oracle(const Cell& cell, const ToolSpec& spec, InvocationClass c) {
  const bool chat = cell.scopes.scopes.Has(Scope::kAiChat);
  const bool execute = cell.scopes.scopes.Has(Scope::kAiExecute);
  const bool interactive = cell.profile == ExecutionProfile::kInteractive;
  if (!chat && !execute) {
    return false;
  }
  if ((spec.interactive_only || c.kind == ToolKind::kUserInput) && !interactive) {
    return false;
  }
  if (spec.investigation_only && cell.profile != ExecutionProfile::kPatrolInvestigation) {
    return false;
  }
  if (c.mutation == MutationTarget::kNone) {
    return true;
  }
  if (!execute) {
    return false;
  }
  if (c.mutation == MutationTarget::kPulseState) {
    // Detection reports and assesses; no profile resolves on the model's word.
    return cell.profile == ExecutionProfile::kPatrolDetection &&
           (spec.name == "patrol_report_finding" || spec.name == "patrol_assess_finding");
  }
  return interactive && !cell.deny && (cell.level == "controlled" || cell.level == "autonomous");
}

class Matrix {
 public:
  Matrix() : registry_(TestRegistry()), fixture_(registry_), calls_(AllCalls(registry_)) {}

  std::size_t CallCount() const { return calls_.size(); }

  // Projects and executes every call under the cell's policy and checks they agree.
  void Check(const Cell& cell) {
    const InvocationPolicy policy = InvocationPolicy::Create(PolicyInputs{
        cell.scopes.scopes, NormalizeControlLevel(cell.level), cell.profile, cell.deny});
    const std::set<Call> offered = Offered(ProjectTools(policy, registry_));
    CHECK(offered == Offered(fixture_.executor.Project(policy)));
    for (const auto& [call, args] : calls_) {
      INFO(ToString(cell.profile) << " level=" << cell.level << " scopes=" << cell.scopes.label
                                  << " deny=" << cell.deny << " tool=" << call.first
                                  << " value=" << call.second);
      const int before = fixture_.TotalRuns();
      const ToolCallOutcome outcome = fixture_.executor.Execute(policy, call.first, args);
      CHECK(fixture_.TotalRuns() - before == (outcome.dispatched ? 1 : 0));
      CHECK(outcome.dispatched == (offered.count(call) == 1));
      const InvocationClass c = ClassifyRegistered(registry_, call.first, args);
      CHECK(outcome.dispatched == Oracle(cell, *registry_.Find(call.first), c));
      if (outcome.dispatched) {
        CHECK(outcome.invocation_class == c);
        ++allowed;
      } else {
        CHECK(outcome.result.error.has_value());
        CHECK(outcome.rule != PolicyRule::kInvalidArguments);  // the arguments are valid
        rules_seen.insert(outcome.rule);
        ++refused;
      }
    }
  }

  int allowed = 0;
  int refused = 0;
  std::set<PolicyRule> rules_seen;

 private:
  ToolRegistry registry_;
  CountingExecutor fixture_;
  std::vector<std::pair<Call, rapidjson::Document>> calls_;
};

TEST_CASE("projection offers a call if and only if enforcement runs it, over the whole matrix",
          "[core][policy]") {
  Matrix matrix;
  REQUIRE(matrix.CallCount() == 10 + 5 + 3);  // static built-ins, fleet_ops values, extensions
  for (ExecutionProfile profile :
       {ExecutionProfile::kInteractive, ExecutionProfile::kPatrolDetection,
        ExecutionProfile::kPatrolInvestigation, ParseExecutionProfile("patrol"),
        static_cast<ExecutionProfile>(42)}) {
    for (const char* level : {"read_only", "controlled", "autonomous", "bogus", "AUTONOMOUS"}) {
      for (const NamedScopes& scopes : ScopeFamily()) {
        for (bool deny : {false, true}) {
          matrix.Check(Cell{profile, level, scopes, deny});
        }
      }
    }
  }
  // Both outcomes and every authority rule occur, so the agreement is not vacuous.
  CHECK(matrix.allowed > 0);
  CHECK(matrix.refused > 0);
  CHECK(matrix.rules_seen ==
        std::set<PolicyRule>{PolicyRule::kMissingScope, PolicyRule::kInteractiveOnly,
                             PolicyRule::kInvestigationOnly, PolicyRule::kProfileForbidsWrite,
                             PolicyRule::kInfrastructureDenied, PolicyRule::kControlLevel});
}

TEST_CASE("projected governance matches the classes enforcement allows", "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  for (ExecutionProfile profile :
       {ExecutionProfile::kInteractive, ExecutionProfile::kPatrolDetection,
        ExecutionProfile::kPatrolInvestigation}) {
    for (ControlLevel level :
         {ControlLevel::kReadOnly, ControlLevel::kControlled, ControlLevel::kAutonomous}) {
      for (const NamedScopes& family : ScopeFamily()) {
        const InvocationPolicy policy =
            InvocationPolicy::Create(PolicyInputs{family.scopes, level, profile, false});
        for (const ProjectedTool& tool : ProjectTools(policy, registry)) {
          const ToolSpec spec = *registry.Find(tool.name);
          std::vector<InvocationClass> classes;
          if (spec.descriptor.static_class.has_value()) {
            classes.push_back(*spec.descriptor.static_class);
          }
          for (const std::string& v : tool.offered_values) {
            classes.push_back(ClassifyRegistered(
                registry, tool.name,
                WithValue(ValidArgs(tool.name), spec.descriptor.discriminator, v)));
          }
          bool reads = false;
          bool writes = false;
          bool infrastructure = false;
          for (InvocationClass c : classes) {
            reads = reads || c.mutation == MutationTarget::kNone;
            writes = writes || c.mutation != MutationTarget::kNone;
            infrastructure = infrastructure || c.mutation == MutationTarget::kInfrastructure;
          }
          INFO(tool.name << " " << family.label);
          CHECK(tool.action_mode == (reads && writes ? ActionMode::kMixed
                                     : writes        ? ActionMode::kWrite
                                                     : ActionMode::kRead));
          CHECK(tool.approval_policy ==
                (infrastructure ? ApprovalPolicy::kActionPlan : ApprovalPolicy::kScopeOnly));
        }
      }
    }
  }
}

}  // namespace
}  // namespace pulse::core
