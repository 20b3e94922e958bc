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

// A tool's answer: model-facing text, or a ToolError (whose JSON is then the text).
struct ToolResult {
  std::string content;
  std::optional<ToolError> error;
  // A failure after the handler handed a mutation to infrastructure anyway (pulse_control: the
  // action was dispatched, then its outcome could not be recorded). The loop applies the write
  // transition for it as for a dispatched success, so the change is verified before the model
  // may conclude or write again. A success says whether it dispatched in its JSON instead
  // (loop/write_outcome.h); a refusal by the executor never sets this.
  bool mutation_dispatched = false;

  static ToolResult Success(std::string content);
  static ToolResult Failure(ToolError error);  // content = error.ToJson()
  bool Ok() const { return !error.has_value(); }
};

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
