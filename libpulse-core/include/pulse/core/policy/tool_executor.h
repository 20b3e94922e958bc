// ToolExecutor: the enforcement point. It binds a handler to each registered tool and runs a
// model's call only after the fixed pipeline has passed: name normalization, retired and
// unknown names, bounded argument copy, reserved approval metadata, Decide() (the decision
// projection also uses), schema validation — then the handler. Every refusal is a ToolError
// with a stable code and no handler runs. Bind while wiring; afterwards Execute and Project
// are const and may run concurrently (handlers must then be thread-safe themselves).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "pulse/core/errors/tool_error.h"
#include "pulse/core/policy/decision.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/policy/projection.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/core/tools/tool_registry.h"
#include "rapidjson/document.h"

namespace pulse::core {

// What a handler learns about the call besides its arguments.
struct ToolContext {
  std::string_view tool_name;        // the registered name
  InvocationClass invocation_class;  // as the policy judged it
  const InvocationPolicy& policy;    // the run's authority (read-only)
};

// The approval a call asks for: the planned action and the exact plan an operator must decide.
struct ToolApprovalRequest {
  std::string action_id;
  std::string plan_hash;

  friend bool operator==(const ToolApprovalRequest&, const ToolApprovalRequest&) = default;
};

// A tool's answer. `content` is the serialized text, for the model only (a ToolError's JSON on
// a failure); what the loop acts on travels in the typed fields, which a handler sets beside
// its text and the loop reads without parsing the text again.
struct ToolResult {
  std::string content;
  std::optional<ToolError> error;
  // Whether the call handed a mutation to infrastructure: the one channel for it. Unset when
  // the handler does not say. An infrastructure write's success counts as dispatched unless
  // this is false (fail safe); its failure counts as dispatched only when this is true (a
  // failure after the handler handed a mutation to infrastructure anyway, e.g. pulse_control's
  // action was dispatched and its outcome could not be recorded): the loop then applies the
  // write transition as for a dispatched success, so the change is verified before the model
  // may conclude or write again. A refusal by the executor never sets it.
  std::optional<bool> dispatched;
  // The governed action the call planned or dispatched, when there is one.
  std::string action_id;
  // The verdict of the call's own verification of its change, when it reported one: true lets
  // a dispatched write count as verified without a separate read.
  std::optional<bool> verified;
  // Set when the call's plan awaits an operator's decision; the loop suspends the run on it
  // (after re-reading the action from the lifecycle, never trusting these values alone).
  std::optional<ToolApprovalRequest> approval;
  // The question (one JSON object) the call asks the operator; the run then waits for input.
  std::optional<std::string> question;

  static ToolResult Success(std::string content);
  static ToolResult Failure(ToolError error);  // content = error.ToJson()
  bool Ok() const { return !error.has_value(); }
};

// Members of an infrastructure write's text that still carry meaning for a handler that sets
// no typed field (an extension's handler answers with text only): "dispatched": false and
// "verification": {"ok": true}. Built-in handlers set the typed fields themselves; their text
// keeps these members for the model.
inline constexpr std::string_view kResultDispatchedField = "dispatched";
inline constexpr std::string_view kResultApprovalNeededField = "approval_needed";

// Fills `result.dispatched` and `result.verified` from its text, for a success whose handler
// set neither: dispatched = false only when the text is one JSON object whose top-level
// "dispatched" is the boolean false; verified = true only when HasVerificationOk (tool_error.h)
// holds for the text. Anything else leaves them unset. The executor applies it to every
// infrastructure write's success, once.
void ReadUntypedWriteResult(ToolResult& result);

// One tool's implementation. Run receives arguments that passed the whole pipeline: a
// private deep copy that conforms to the tool's closed schema. It may be called from several
// threads at once.
class ToolHandler {
 public:
  virtual ~ToolHandler() = default;
  virtual ToolResult Run(const rapidjson::Value& args, const ToolContext& context) = 0;
};

// The outcome of one Execute call.
struct ToolCallOutcome {
  std::string tool_name;                                // trimmed, as looked up
  InvocationClass invocation_class = kFailClosedClass;  // fail-closed unless classified
  bool dispatched = false;                              // true iff the handler ran
  PolicyRule rule = PolicyRule::kAllowed;               // why it was refused (if it was)
  ToolResult result;  // handler result, or the refusal (result.error set, never retryable)
};

class ToolExecutor {
 public:
  // Borrows `registry`, which must outlive the executor and take no more registrations
  // once Execute or Project may run.
  explicit ToolExecutor(const ToolRegistry& registry);
  ~ToolExecutor();
  ToolExecutor(const ToolExecutor&) = delete;
  ToolExecutor& operator=(const ToolExecutor&) = delete;

  // Binds `handler` to the registered tool named exactly `name`. NotFound when the registry
  // has no such tool; AlreadyExists when it is bound; InvalidArgument for a null handler.
  [[nodiscard]] absl::Status Bind(std::string_view name, std::unique_ptr<ToolHandler> handler);
  bool IsBound(std::string_view name) const;

  // ProjectTools(policy, registry) restricted to bound tools: what this surface can offer.
  std::vector<ProjectedTool> Project(const InvocationPolicy& policy) const;

  // Runs one model call. Pipeline, first refusal wins:
  //  1. the name is trimmed; blank → INVALID_INPUT (blank_tool_name);
  //  2. a retired name → POLICY_BLOCKED (retired_tool);
  //  3. not registered → NOT_FOUND (unknown_tool); registered but unbound → NOT_FOUND
  //     (tool_unavailable);
  //  4. arguments: null means {}; anything else must be an object within the structural
  //     bounds of tool_schema.h (depth, value count, string/key bytes, UTF-8, no duplicate
  //     keys) → else INVALID_INPUT (invalid_arguments); it is then deep-copied;
  //  5. a reserved approval-metadata key at any depth → POLICY_BLOCKED (reserved_argument);
  //  6. Decide() refuses → its code and rule;
  //  7. the tool's schema refuses (undeclared, missing, wrong type, out of bounds) →
  //     INVALID_INPUT (invalid_arguments);
  //  8. the handler runs on the copy.
  ToolCallOutcome Execute(const InvocationPolicy& policy, std::string_view name,
                          const rapidjson::Value& args) const;

 private:
  ToolHandler* HandlerFor(std::string_view name) const;

  const ToolRegistry& registry_;
  absl::flat_hash_map<std::string, std::unique_ptr<ToolHandler>> handlers_;
};

}  // namespace pulse::core
