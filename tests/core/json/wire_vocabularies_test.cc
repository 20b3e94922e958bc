// The core vocabularies kept in WireName tables (json/wire_enum.h): every value, in enum order,
// spells exactly its wire string; the parser reads each string back to its value and refuses
// empty, unknown, padded and case-changed text; a value cast from outside the enum reads as
// the vocabulary's documented fallback.
#include <catch2/catch.hpp>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pulse/core/errors/tool_error.h"
#include "pulse/core/model/api_token.h"
#include "pulse/core/model/autonomy.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/model/patrol_run.h"
#include "pulse/core/model/session_record.h"
#include "pulse/core/model/session_state.h"
#include "pulse/core/policy/control_level.h"
#include "pulse/core/policy/decision.h"
#include "pulse/core/policy/execution_profile.h"
#include "pulse/core/policy/governance.h"
#include "pulse/core/policy/scope.h"
#include "pulse/core/tools/exec_classifier.h"
#include "pulse/core/tools/tool_kind.h"

namespace pulse::core {
namespace {

using Names = std::vector<std::string_view>;

// `text` with every letter's case flipped, and with only its first letter's case flipped.
std::vector<std::string> CaseChanged(std::string_view text) {
  std::string flipped(text);
  for (char& c : flipped) {
    const auto u = static_cast<unsigned char>(c);
    c = static_cast<char>(std::isupper(u) != 0 ? std::tolower(u) : std::toupper(u));
  }
  std::string first(text);
  for (char& c : first) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalpha(u) != 0) {
      c = flipped[static_cast<std::size_t>(&c - first.data())];
      break;
    }
  }
  return {flipped, first};
}

// The names of E's values 0..names.size()-1 and the fallback of the value after the last.
template <class E>
void CheckNames(const Names& names, std::string_view fallback) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(i);
    CHECK(ToString(static_cast<E>(i)) == names[i]);
  }
  CHECK(ToString(static_cast<E>(names.size())) == fallback);
}

// CheckNames, and `parse` reads exactly the names back.
template <class E, class Parse>
void CheckVocabulary(const Names& names, std::string_view fallback, Parse parse) {
  CheckNames<E>(names, fallback);
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(parse(names[i]) == std::optional<E>(static_cast<E>(i)));
    for (const std::string& changed : CaseChanged(names[i])) {
      CAPTURE(changed);
      CHECK_FALSE(parse(changed).has_value());
    }
    CHECK_FALSE(parse(std::string(names[i]) + " ").has_value());
    CHECK_FALSE(parse(" " + std::string(names[i])).has_value());
    CHECK_FALSE(parse(names[i].substr(0, names[i].size() - 1)).has_value());
  }
  for (std::string_view bad : {"", "unknown", "UNKNOWN", "?", "null"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse(bad).has_value());
  }
  CHECK_FALSE(parse(std::string_view("\0", 1)).has_value());
}

TEST_CASE("model vocabularies read back every value and refuse near misses", "[core][json]") {
  CheckVocabulary<MessageRole>({"system", "user", "assistant", "tool", "refused_claim"}, "user",
                               ParseMessageRole);
  CheckNames<ToolChoice>({"unset", "none", "required"}, "unset");
  CheckNames<FinishReason>({"stop", "tool_calls", "length", "error"}, "error");
  CheckNames<LlmErrorKind>(
      {"rate_limited", "unavailable", "invalid_request", "incomplete_stream", "other"}, "other");
  CheckVocabulary<SessionState>({"RESOLVING", "READING", "WRITING", "VERIFYING"}, "UNKNOWN",
                                ParseSessionState);
  CheckVocabulary<SessionStatus>({"idle", "running", "awaiting_approval", "awaiting_input"}, "idle",
                                 ParseSessionStatus);
  CheckVocabulary<SessionKind>({"chat", "patrol"}, "chat", ParseSessionKind);
  CheckVocabulary<ApiTokenKind>({"human", "agent", "service"}, "human", ParseApiTokenKind);
  CheckVocabulary<LoopEventType>(
      {"session", "workflow_state", "content", "tool_start", "tool_progress", "tool_end",
       "approval_needed", "question", "error", "done"},
      "done", ParseLoopEventType);
  CheckVocabulary<AutonomyLevel>({"monitor", "approval", "assisted", "full"}, "monitor",
                                 ParseAutonomyLevel);
  CheckVocabulary<PatrolTrigger>({"scheduled", "manual", "alert", "event"}, "scheduled",
                                 ParsePatrolTrigger);
  CheckVocabulary<PatrolRunStatus>({"running", "healthy", "issues_found", "error"}, "running",
                                   ParsePatrolRunStatus);
  CheckVocabulary<ProposalDropReason>({"provider_error", "budget_stop", "cancelled", "timed_out",
                                       "incomplete", "engine_error", "autonomy_lowered"},
                                      "provider_error", ParseProposalDropReason);
  CheckVocabulary<FixHoldReason>(
      {"approval_required", "not_auto_executable", "autonomy_lowered", "autopilot_revoked",
       "remediation_locked", "maintenance_window", "lock_state_unknown", "autonomy_unreadable"},
      "approval_required", ParseFixHoldReason);
}

TEST_CASE("policy, tool and error vocabularies read back every value and refuse near misses",
          "[core][json]") {
  CheckVocabulary<ToolKind>({"resolve", "read", "write", "user_input"}, "unknown", ParseToolKind);
  CheckVocabulary<MutationTarget>({"none", "pulse_state", "infrastructure"}, "unknown",
                                  ParseMutationTarget);
  CheckNames<ExecRefusal>(
      {"none", "empty", "too_long", "control_character", "non_ascii", "shell_syntax",
       "malformed_quoting", "too_many_arguments", "path_command", "interpreter", "not_allowlisted",
       "unsafe_argument", "sensitive_path"},
      "not_allowlisted");
  // An unknown control level reads as the safest one.
  CheckVocabulary<ControlLevel>({"read_only", "controlled", "autonomous"}, "read_only",
                                ParseControlLevel);
  // ParseExecutionProfile answers kUnknown, never nullopt, for text it does not know.
  const auto profile = [](std::string_view text) -> std::optional<ExecutionProfile> {
    const ExecutionProfile p = ParseExecutionProfile(text);
    return p == ExecutionProfile::kUnknown ? std::nullopt : std::optional(p);
  };
  CheckNames<ExecutionProfile>(
      {"interactive", "patrol_detection", "patrol_investigation", "unknown"}, "unknown");
  CheckVocabulary<ExecutionProfile>({"interactive", "patrol_detection", "patrol_investigation"},
                                    "unknown", profile);
  CheckNames<PolicyRule>(
      {"allowed", "blank_tool_name", "retired_tool", "unknown_tool", "tool_unavailable",
       "invalid_arguments", "reserved_argument", "unknown_discriminator",
       "invalid_invocation_class", "missing_scope", "interactive_only", "investigation_only",
       "profile_forbids_write", "infrastructure_denied", "control_level"},
      "invalid_invocation_class");
  // An out-of-range mode reads as its most demanding reading.
  CheckNames<ActionMode>({"read", "mixed", "write"}, "write");
  CheckNames<ApprovalPolicy>({"scope_only", "action_plan"}, "action_plan");
  CheckVocabulary<Scope>({"monitoring:read", "monitoring:write", "agent:report", "settings:read",
                          "settings:write", "audit:read", "ai:execute", "ai:chat", "agent:exec",
                          "actions:plan", "actions:approve", "actions:execute"},
                         "unknown", ParseScope);
  CheckVocabulary<ToolErrorCode>(
      {"FSM_BLOCKED", "POLICY_BLOCKED", "APPROVAL_REQUIRED", "INVALID_INPUT", "NOT_FOUND",
       "EXECUTION_FAILED", "NO_AGENT", "LOOP_DETECTED", "BUDGET_EXHAUSTED", "TOOL_NOT_ADVERTISED",
       "NON_INTERACTIVE", "EXECUTION_CONTEXT_UNAVAILABLE"},
      "EXECUTION_FAILED", ParseToolErrorCode);
}

}  // namespace
}  // namespace pulse::core
