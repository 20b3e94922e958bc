#include "pulse/adapters/server/server_metrics.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/builtins/pulse_control_handler.h"
#include "pulse/core/errors/tool_error.h"
#include "pulse/core/json/json.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/tools/classify.h"
#include "pulse/core/tools/tool_catalog.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::server {
namespace {

using core::ActionState;

constexpr ActionState kInFlight[] = {ActionState::kPlanned, ActionState::kPendingApproval,
                                     ActionState::kApproved, ActionState::kExecuting};

std::string_view Sv(const std::optional<std::string_view>& v) { return v.value_or(""); }

// A pulse_control result that suspended the run on a decision (not yet an outcome).
bool IsAwaitingDecision(std::string_view output) {
  absl::StatusOr<rapidjson::Document> result = core::ParseJson(output);
  if (!result.ok() || !result->IsObject()) {
    return false;
  }
  const std::string_view status = Sv(core::GetString(*result, "status"));
  return status == core::kControlAwaitingApproval || status == core::kControlAwaitingDecision;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerMetrics>> ServerMetrics::Register(
    adapters::http::MetricsRegistry& registry) {
  std::unique_ptr<ServerMetrics> m(new ServerMetrics());
  PULSE_ASSIGN_OR_RETURN(
      m->tool_calls_,
      registry.AddCounter("pulse_tool_calls_total",
                          "Assistant tool calls by tool, kind (resolve, read, write, user_input) "
                          "and outcome (ok or the tool error code).",
                          {"tool", "kind", "outcome"}));
  PULSE_ASSIGN_OR_RETURN(
      m->fsm_blocks_,
      registry.AddCounter("pulse_fsm_blocks_total",
                          "Tool calls the session safety state machine refused, by tool.",
                          {"tool"}));
  PULSE_ASSIGN_OR_RETURN(
      m->provider_tokens_,
      registry.AddCounter("pulse_provider_tokens_total",
                          "Model provider tokens by route and direction (input, output).",
                          {"route", "direction"}));
  PULSE_ASSIGN_OR_RETURN(
      m->runs_,
      registry.AddCounter("pulse_assistant_runs_total",
                          "Assistant runs (chat, resume, answer) by outcome.", {"outcome"}));
  PULSE_ASSIGN_OR_RETURN(
      m->action_transitions_,
      registry.AddCounter("pulse_action_transitions_total",
                          "Governed actions entering each state since the server started.",
                          {"state"}));
  PULSE_ASSIGN_OR_RETURN(
      m->actions_in_flight_,
      registry.AddGauge("pulse_actions",
                        "Governed actions in flight now, by state (counted at scrape time).",
                        {"state"}));
  PULSE_ASSIGN_OR_RETURN(m->events_,
                         registry.AddCounter("pulse_agent_events_total",
                                             "Agent events published, by kind.", {"kind"}));
  PULSE_ASSIGN_OR_RETURN(
      m->read_connections_,
      registry.AddGauge("pulse_sqlite_read_connections",
                        "SQLite read-only connections: open now (state=open) and the bound "
                        "(state=max; 0 when reads share the writer).",
                        {"state"}));
  PULSE_ASSIGN_OR_RETURN(
      m->reader_fallbacks_,
      registry.AddCounter("pulse_sqlite_reader_fallbacks_total",
                          "Reads that ran on the writer connection because a read-only "
                          "connection could not be opened.",
                          {}));
  m->reader_fallbacks_->Increment({}, 0);  // shown as 0 from the start, not only once it moves
  PULSE_ASSIGN_OR_RETURN(
      m->fleet_source_up_,
      registry.AddGauge("pulse_fleet_source_up",
                        "Each source of a fleet of several (docs/fleet.md): 1 when its last "
                        "listing succeeded, 0 while it is down (read at scrape time).",
                        {"source", "kind"}));
  PULSE_ASSIGN_OR_RETURN(
      m->fleet_source_resources_,
      registry.AddGauge("pulse_fleet_source_resources",
                        "Resources known from each fleet source (a down source's included).",
                        {"source", "kind"}));
  PULSE_ASSIGN_OR_RETURN(
      m->run_pool_,
      registry.AddGauge("pulse_assistant_run_pool",
                        "The Assistant run pool now: runs working and queued, worker threads "
                        "alive, and its bounds (max_workers, max_queue).",
                        {"state"}));
  PULSE_ASSIGN_OR_RETURN(
      m->runs_refused_,
      registry.AddCounter("pulse_assistant_runs_refused_total",
                          "Assistant runs refused because the run queue was full.", {}));
  return m;
}

void ServerMetrics::ToolCall(std::string_view tool, std::string_view kind,
                             std::string_view outcome) {
  tool_calls_->Increment({tool, kind, outcome});
  if (outcome == "fsm_blocked") {
    fsm_blocks_->Increment({tool});
  }
}

void ServerMetrics::RunDone(std::string_view outcome, std::string_view route,
                            std::int64_t input_tokens, std::int64_t output_tokens) {
  runs_->Increment({outcome});
  provider_tokens_->Increment({route, "input"}, static_cast<double>(input_tokens));
  provider_tokens_->Increment({route, "output"}, static_cast<double>(output_tokens));
}

void ServerMetrics::ActionEntered(core::ActionState state) {
  action_transitions_->Increment({core::ToString(state)});
}

void ServerMetrics::EventPublished(std::string_view kind) { events_->Increment({kind}); }

void ServerMetrics::RefreshActionGauge(core::ActionStore& store) {
  for (ActionState state : kInFlight) {
    absl::StatusOr<std::vector<core::ActionRecord>> records =
        store.ListByState({state}, core::kActionScanLimit);
    if (records.ok()) {
      actions_in_flight_->Set({core::ToString(state)}, static_cast<double>(records->size()));
    }
  }
}

void ServerMetrics::RefreshReadPool(const adapters::storage::SqliteReadPoolStats& stats) {
  read_connections_->Set({"open"}, static_cast<double>(stats.open_readers));
  read_connections_->Set({"max"}, static_cast<double>(stats.max_readers));
  absl::MutexLock lock(&fallbacks_mu_);
  if (stats.writer_fallbacks > fallbacks_seen_) {
    reader_fallbacks_->Increment({}, static_cast<double>(stats.writer_fallbacks - fallbacks_seen_));
    fallbacks_seen_ = stats.writer_fallbacks;
  }
}

void ServerMetrics::RefreshRunPool(std::size_t working, std::size_t queued, std::size_t workers,
                                   std::size_t max_workers, std::size_t max_queue) {
  run_pool_->Set({"working"}, static_cast<double>(working));
  run_pool_->Set({"queued"}, static_cast<double>(queued));
  run_pool_->Set({"workers"}, static_cast<double>(workers));
  run_pool_->Set({"max_workers"}, static_cast<double>(max_workers));
  run_pool_->Set({"max_queue"}, static_cast<double>(max_queue));
}

void ServerMetrics::RunRefused() { runs_refused_->Increment({}); }

void RunMetrics::Observe(const core::LoopEvent& event) {
  if (event.type != core::LoopEventType::kToolStart &&
      event.type != core::LoopEventType::kToolEnd && event.type != core::LoopEventType::kDone) {
    return;
  }
  absl::StatusOr<rapidjson::Document> data = core::ParseJson(event.data_json);
  if (!data.ok() || !data->IsObject()) {
    return;
  }
  if (event.type == core::LoopEventType::kDone) {
    const std::int64_t input = core::GetInt64(*data, "input_tokens").value_or(0);
    const std::int64_t output = core::GetInt64(*data, "output_tokens").value_or(0);
    metrics_.RunDone(Sv(core::GetString(*data, "outcome")), Sv(core::GetString(*data, "route")),
                     std::max<std::int64_t>(0, input - baseline_.input_tokens),
                     std::max<std::int64_t>(0, output - baseline_.output_tokens));
    return;
  }
  const std::string id(Sv(core::GetString(*data, "id")));
  // The model names the tool: only built-in names become a label.
  const std::string_view sent_name = Sv(core::GetString(*data, "name"));
  const std::string_view name =
      core::IsBuiltinToolName(sent_name) ? sent_name : std::string_view("unknown");
  if (event.type == core::LoopEventType::kToolStart) {
    // The arguments as the model sent them; unparsable ones classify fail-closed.
    rapidjson::Document args;
    if (std::optional<std::string_view> input = core::GetString(*data, "input")) {
      absl::StatusOr<rapidjson::Document> parsed = core::ParseJson(*input);
      if (parsed.ok()) {
        args = *std::move(parsed);
      }
    }
    kinds_[id] = std::string(core::ToString(core::ClassifyToolCall(sent_name, args).kind));
    return;
  }
  std::string outcome = "ok";
  const std::string_view output = Sv(core::GetString(*data, "output"));
  if (name == core::kToolPulseControl && IsAwaitingDecision(output)) {
    outcome = "awaiting_approval";  // suspended; its resume reports the execution
  } else if (!core::GetBool(*data, "success").value_or(false)) {
    const std::optional<std::string> code = core::ExtractToolErrorCode(output);
    // Only the closed vocabulary becomes a label; anything else is "error".
    outcome = code.has_value() && core::ParseToolErrorCode(*code).has_value()
                  ? absl::AsciiStrToLower(*code)
                  : "error";
  }
  auto it = kinds_.find(id);
  const std::string kind = it == kinds_.end() ? "unknown" : it->second;
  if (it != kinds_.end()) {
    kinds_.erase(it);
  }
  metrics_.ToolCall(name, kind, outcome);
}

void ServerMetrics::RefreshFleetSources(const std::vector<core::FleetSourceStatus>& sources) {
  for (const core::FleetSourceStatus& source : sources) {
    fleet_source_up_->Set({source.name, source.kind}, source.up ? 1 : 0);
    fleet_source_resources_->Set({source.name, source.kind}, static_cast<double>(source.resources));
  }
}

}  // namespace pulse::server
