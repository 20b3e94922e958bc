// ToolTraits: what the agentic loop needs to know about a tool beyond its invocation class
// (tool_kind.h, which alone decides the tool's effect on the session FSM). Each built-in
// declares its traits in its catalog row (tool_catalog.cc); an extension has the default
// traits, which ask nothing special of the loop. The loop reads them instead of comparing tool
// names. Plain values; thread-compatible.
#pragma once

#include <string_view>

namespace pulse::core {

// A tool's part in the finding lifecycle of a Patrol Watch pass.
enum class FindingRole {
  kNone,
  // Reads the findings: beside a lifecycle write it establishes the write's precondition, so
  // that batch runs in provider order.
  kReadsFindings,
  // Reports, assesses or resolves a finding: the one repair turn (LoopOptions::
  // lifecycle_repair_turn) offers only these tools.
  kLifecycleWrite,
};

struct ToolTraits {
  FindingRole findings = FindingRole::kNone;
  // Proposes a governed action: the conclusion of an investigation, so it is never counted
  // against (nor removed with) the evidence budget, although it reads like evidence.
  bool proposes_action = false;
  // Asks the operator a question (ToolResult::question): the call runs alone in its turn and
  // the run then waits for the answer.
  bool asks_question = false;
  // May answer with an approval request (ToolResult::approval): the run then suspends until
  // the action is decided.
  bool requests_approval = false;
  // Hands mutations to infrastructure and states in every success whether it did
  // (ToolResult::dispatched); the session FSM moves to VERIFYING only on a dispatched one.
  bool dispatches_mutation = false;
  // Reports the verdict of its own verification (ToolResult::verified); a verified dispatch
  // needs no separate read.
  bool verifies = false;
  // What the progress event says while the call runs; empty: the loop's default for the
  // call's invocation class.
  std::string_view progress;

  friend bool operator==(const ToolTraits&, const ToolTraits&) = default;
};

}  // namespace pulse::core
