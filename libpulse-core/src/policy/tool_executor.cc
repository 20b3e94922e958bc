#include "pulse/core/policy/tool_executor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/json/json.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/classify.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::core {
namespace {

ToolCallOutcome Refused(const Decision& decision, InvocationClass invocation_class) {
  ToolCallOutcome outcome;
  outcome.tool_name = decision.tool;
  outcome.invocation_class = invocation_class;
  outcome.dispatched = false;
  outcome.rule = decision.rule;
  outcome.result = ToolResult::Failure(decision.ToToolError());
  return outcome;
}

ToolCallOutcome InvalidArguments(std::string_view tool, InvocationClass c,
                                 std::string_view message) {
  return Refused(Decision::Refuse(
                     ToolErrorCode::kInvalidInput, PolicyRule::kInvalidArguments, std::string(tool),
                     absl::StrCat("tool \"", std::string(tool), "\": ", std::string(message))),
                 c);
}

// The first reserved key at any depth, walked iteratively (the arguments are already within
// the structural bounds).
std::optional<std::string> FindReservedKey(const rapidjson::Value& args) {
  std::vector<const rapidjson::Value*> stack = {&args};
  while (!stack.empty()) {
    const rapidjson::Value* value = stack.back();
    stack.pop_back();
    if (value->IsObject()) {
      for (const auto& member : value->GetObject()) {
        const std::string_view key(member.name.GetString(), member.name.GetStringLength());
        if (IsReservedArgumentName(key)) {
          return std::string(key);
        }
        stack.push_back(&member.value);
      }
    } else if (value->IsArray()) {
      for (const auto& element : value->GetArray()) {
        stack.push_back(&element);
      }
    }
  }
  return std::nullopt;
}

}  // namespace

ToolResult ToolResult::Success(std::string content) {
  ToolResult result;
  result.content = std::move(content);
  return result;
}

ToolResult ToolResult::Failure(ToolError error) {
  ToolResult result;
  result.content = error.ToJson();
  result.error = std::move(error);
  return result;
}

void ReadUntypedWriteResult(ToolResult& result) {
  if (!result.Ok() || result.dispatched.has_value() || result.verified.has_value()) {
    return;
  }
  absl::StatusOr<rapidjson::Document> doc = ParseJson(result.content, JsonLimits{1 << 20, 64});
  if (doc.ok() && doc->IsObject()) {
    if (std::optional<bool> dispatched = GetBool(*doc, kResultDispatchedField);
        dispatched.has_value() && !*dispatched) {
      result.dispatched = false;
    }
  }
  if (HasVerificationOk(result.content)) {
    result.verified = true;
  }
}

ToolExecutor::ToolExecutor(const ToolRegistry& registry) : registry_(registry) {}
ToolExecutor::~ToolExecutor() = default;

absl::Status ToolExecutor::Bind(std::string_view name, std::unique_ptr<ToolHandler> handler) {
  if (handler == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("tool \"", QuoteForMessage(name), "\": handler is null"));
  }
  if (!registry_.Contains(name)) {
    return absl::NotFoundError(
        absl::StrCat("cannot bind unregistered tool \"", QuoteForMessage(name), "\""));
  }
  auto [it, inserted] = handlers_.try_emplace(std::string(name), std::move(handler));
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("tool \"", QuoteForMessage(name), "\" already has a handler"));
  }
  return absl::OkStatus();
}

ToolHandler* ToolExecutor::HandlerFor(std::string_view name) const {
  auto it = handlers_.find(ToAbsl(name));
  return it == handlers_.end() ? nullptr : it->second.get();
}

bool ToolExecutor::IsBound(std::string_view name) const { return HandlerFor(name) != nullptr; }

std::vector<ProjectedTool> ToolExecutor::Project(const InvocationPolicy& policy) const {
  std::vector<ProjectedTool> offered = ProjectTools(policy, registry_);
  std::erase_if(offered, [this](const ProjectedTool& tool) { return !IsBound(tool.name); });
  return offered;
}

ToolCallOutcome ToolExecutor::Execute(const InvocationPolicy& policy, std::string_view name,
                                      const rapidjson::Value& args) const {
  if (std::optional<Decision> refusal = CheckToolName(registry_, name)) {
    return Refused(*refusal, kFailClosedClass);
  }
  const std::string_view tool = TrimToolName(name);
  std::optional<ToolSpec> spec = registry_.Find(tool);
  ToolHandler* handler = HandlerFor(tool);
  if (!spec.has_value() || handler == nullptr) {
    return Refused(
        Decision::Refuse(ToolErrorCode::kNotFound, PolicyRule::kToolUnavailable, std::string(tool),
                         absl::StrCat("tool \"", std::string(tool),
                                      "\" is not available here; call only the "
                                      "tools offered to you")),
        kFailClosedClass);
  }
  const rapidjson::Value no_args(rapidjson::kObjectType);
  const rapidjson::Value& given = args.IsNull() ? no_args : args;
  const InvocationClass classified = Classify(spec->descriptor, given);
  // Bounds first: the copy and every later check may recurse, so they only ever see
  // arguments whose depth and size are already bounded.
  if (absl::Status s = CheckArgumentStructure(given); !s.ok()) {
    return InvalidArguments(tool, classified, std::string(s.message()));
  }
  rapidjson::Document copy;
  copy.CopyFrom(given, copy.GetAllocator());
  if (std::optional<std::string> key = FindReservedKey(copy)) {
    return Refused(
        Decision::Refuse(ToolErrorCode::kPolicyBlocked, PolicyRule::kReservedArgument,
                         std::string(tool),
                         absl::StrCat("argument \"", QuoteForMessage(*key),
                                      "\" is reserved for approval metadata the server attaches "
                                      "itself; a model may not send it")),
        classified);
  }
  const Decision decision = Decide(policy, *spec, copy);
  if (!decision.allowed) {
    return Refused(decision, decision.invocation_class);
  }
  if (absl::Status s = registry_.ValidateArguments(tool, copy); !s.ok()) {
    return InvalidArguments(tool, decision.invocation_class, std::string(s.message()));
  }
  ToolCallOutcome outcome;
  outcome.tool_name = spec->name;
  outcome.invocation_class = decision.invocation_class;
  outcome.rule = PolicyRule::kAllowed;
  outcome.dispatched = true;
  outcome.result = handler->Run(copy, ToolContext{spec->name, decision.invocation_class, policy});
  if (EffectOf(decision.invocation_class) == FsmEffect::kWrite) {
    ReadUntypedWriteResult(outcome.result);  // an untyped handler states its outcome in text
  }
  return outcome;
}

}  // namespace pulse::core
