#include "patrol_tools.h"

#include <algorithm>
#include <utility>

#include "pulse/core/json/json.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core::patrol_internal {
namespace {

std::string Bounded(std::string text, std::size_t max) {
  if (text.size() > max) {
    text.resize(max);
  }
  return text;
}

std::string StringMember(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) {
    return "";
  }
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) {
    return "";
  }
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

bool BoolMember(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) {
    return false;
  }
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsBool() && it->value.GetBool();
}

ToolResult Refuse(std::string message) {
  ToolError error;
  error.code = ToolErrorCode::kPolicyBlocked;
  error.message = std::move(message);
  error.blocked = true;
  return ToolResult::Failure(std::move(error));
}

// What the wrapper does with a call besides recording it.
enum class Track { kNone, kGetFindings, kReport, kAssess, kResolve, kPropose };

class RecordingHandler final : public ToolHandler {
 public:
  RecordingHandler(std::unique_ptr<ToolHandler> inner, Track track, PatrolRunState& state)
      : inner_(std::move(inner)), track_(track), state_(state) {}

  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override {
    const std::string finding_id = StringMember(args, "finding_id");
    if (track_ == Track::kAssess || track_ == Track::kResolve) {
      absl::MutexLock lock(&state_.mu);
      if (!finding_id.empty() && state_.ledger.VerdictFor(finding_id).has_value()) {
        ToolResult refused =
            Refuse("this finding already has a verdict in this run (one verdict per finding)");
        RecordLocked(context, args, refused);
        return refused;
      }
    }
    ToolResult result = inner_->Run(args, context);
    absl::MutexLock lock(&state_.mu);
    if (result.Ok()) {
      result = Apply(args, std::move(result));
    } else if (track_ == Track::kReport) {
      ++state_.rejected_reports;
    }
    RecordLocked(context, args, result);
    return result;
  }

 private:
  ToolResult Apply(const rapidjson::Value& args, ToolResult result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mu) {
    absl::StatusOr<rapidjson::Document> parsed = ParseJson(result.content);
    if (!parsed.ok() || !parsed->IsObject()) {
      return result;
    }
    const rapidjson::Document& out = *parsed;
    switch (track_) {
      case Track::kNone:
        break;
      case Track::kGetFindings: {
        auto it = out.FindMember("findings");
        if (it != out.MemberEnd() && it->value.IsArray()) {
          for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
            const std::string id = StringMember(it->value[i], "id");
            if (!id.empty() && StringMember(it->value[i], "resolved_at").empty()) {
              state_.ledger.AddPresented(id);
            }
          }
        }
        break;
      }
      case Track::kReport: {
        const std::string id = StringMember(out, "finding_id");
        if (!id.empty()) {
          const bool is_new = BoolMember(out, "is_new");
          state_.ledger.RecordReported(id, is_new);
          auto& list = is_new ? state_.reported_new : state_.reported_existing;
          if (std::find(list.begin(), list.end(), id) == list.end()) {
            list.push_back(id);
          }
        }
        break;
      }
      case Track::kAssess:
      case Track::kResolve: {
        const std::string id = StringMember(out, "finding_id");
        std::string verdict =
            track_ == Track::kResolve ? "resolved" : StringMember(args, "verdict");
        std::optional<AssessVerdict> parsed_verdict = ParseAssessVerdict(verdict);
        if (!id.empty() && parsed_verdict.has_value() &&
            state_.ledger.RecordVerdict(id, *parsed_verdict).ok()) {
          state_.assessments.push_back({id, verdict});
        }
        break;
      }
      case Track::kPropose: {
        Proposal p;
        p.resource_id = StringMember(out, "resource_id");
        p.capability = StringMember(out, "capability");
        auto params = out.FindMember("params");
        p.params_json = params != out.MemberEnd() ? CanonicalJson(params->value) : "{}";
        p.reason = StringMember(out, "rationale");
        if (state_.proposal_invalidated) {
          return Refuse(
              "the proposal capture of this run is invalidated: it already saw two "
              "different proposals");
        }
        if (!state_.proposal.has_value()) {
          state_.proposal = std::move(p);
        } else if (state_.proposal->resource_id != p.resource_id ||
                   state_.proposal->capability != p.capability ||
                   state_.proposal->params_json != p.params_json) {
          state_.proposal.reset();
          state_.proposal_invalidated = true;
          return Refuse(
              "at most one proposal per investigation: a second, different proposal "
              "invalidated the capture, so nothing will be planned");
        }
        break;
      }
    }
    return result;
  }

  void RecordLocked(const ToolContext& context, const rapidjson::Value& args,
                    const ToolResult& result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mu) {
    ++state_.call_count;
    if (state_.calls.size() >= kMaxRecordedToolCalls) {
      return;
    }
    PatrolToolCall call;
    call.tool_name = std::string(context.tool_name);
    call.input = Bounded(ToJsonString(args), kMaxToolCallInputBytes);
    call.output = Bounded(result.content, kMaxToolCallOutputBytes);
    call.success = result.Ok();
    state_.calls.push_back(std::move(call));
  }

  std::unique_ptr<ToolHandler> inner_;
  Track track_;
  PatrolRunState& state_;
};

// What the wrapper of `tool` tracks besides recording its calls.
Track TrackFor(std::string_view tool) {
  if (tool == kToolPatrolGetFindings) {
    return Track::kGetFindings;
  }
  if (tool == kToolPatrolReportFinding) {
    return Track::kReport;
  }
  if (tool == kToolPatrolAssessFinding) {
    return Track::kAssess;
  }
  if (tool == kToolPatrolResolveFinding) {
    return Track::kResolve;
  }
  if (tool == kToolPatrolProposeAction) {
    return Track::kPropose;
  }
  return Track::kNone;
}

}  // namespace

HandlerDecorator RecordingDecorator(PatrolRunState& state) {
  return [&state](std::string_view tool, std::unique_ptr<ToolHandler> handler) {
    return std::unique_ptr<ToolHandler>(
        std::make_unique<RecordingHandler>(std::move(handler), TrackFor(tool), state));
  };
}

}  // namespace pulse::core::patrol_internal
