// The subcommands of pulse-cli, one function each, over a CommandContext (the console, the
// server client and how to make another). cli_app.cc parses the command line into these
// argument structs and calls them; each returns the process exit code (failure.h). Not
// thread-safe: one command runs per process.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "client.h"
#include "console.h"
#include "failure.h"
#include "rapidjson/document.h"
#include "routes.h"

namespace pulse::cli {

class CommandContext {
 public:
  CommandContext(const Console& console, PulseClient& client, ClientOptions options)
      : console_(console), client_(client), options_(std::move(options)) {}

  const Console& console() const { return console_; }
  PulseClient& client() { return client_; }
  const std::string& server() const { return options_.base_url; }
  const ClientOptions& options() const { return options_; }
  // Another client to the same server (for a request while the main one is busy or stopped).
  [[nodiscard]] absl::StatusOr<std::unique_ptr<PulseClient>> NewClient(
      absl::Duration timeout) const;

  // Sends `call` and parses a 2xx JSON reply. On failure, nullopt with `failure` set. A list
  // page's next cursor (its X-Next-Cursor header, "" on the last page) goes to `next_cursor`.
  std::optional<rapidjson::Document> FetchJson(const ApiCall& call, Failure& failure,
                                               std::string* next_cursor = nullptr);
  // FetchJson, then prints the document (--json) or hands it to `render`. The exit code.
  template <typename Render>
  int Show(const absl::StatusOr<ApiCall>& call, Render&& render);

  // --json: the document as the one line on stdout. Returns 0.
  int PrintJson(const rapidjson::Value& value) const;
  int Fail(const Failure& failure) const { return Report(console_, failure); }
  // A call that could not be built from the route tables (a bug or a bad argument): usage.
  int BadCall(const absl::Status& status) const;

 private:
  const Console& console_;
  PulseClient& client_;
  ClientOptions options_;
};

template <typename Render>
int CommandContext::Show(const absl::StatusOr<ApiCall>& call, Render&& render) {
  if (!call.ok()) {
    return BadCall(call.status());
  }
  Failure failure;
  std::optional<rapidjson::Document> doc = FetchJson(*call, failure);
  if (!doc.has_value()) {
    return Fail(failure);
  }
  if (console_.json()) {
    return PrintJson(*doc);
  }
  render(*doc);
  return 0;
}

// Members of a call's argument object (distinct names: a string literal would otherwise pick
// the bool overload).
void SetStringArg(rapidjson::Document& args, std::string_view key, std::string_view value);
void SetIntArg(rapidjson::Document& args, std::string_view key, int value);
void SetBoolArg(rapidjson::Document& args, std::string_view key, bool value);

// ---- arguments ----

struct AskArgs {
  std::string question;
  std::string session_id;
  std::string control_level;  // "" = the server's configured level
  bool interactive = false;   // -i: then lines from stdin, one session, until EOF or /exit
};
struct FindingsListArgs {
  std::string resource_id;
  bool include_resolved = false;
  int limit = 0;  // 0 = the server's default
};
struct FindingArgs {
  std::string finding_id;
  int hours = 0;       // snooze
  std::string reason;  // dismiss
  std::string note;    // dismiss, resolve
};
struct ActionsListArgs {
  bool settled = false;
  int limit = 0;
};
struct ActionArgs {
  std::string action_id;
  std::string reason;
  bool yes = false;
};
struct PlanArgs {
  std::string resource_id;
  std::string capability;
  std::string reason;
  std::string request_id;                // empty: a fresh one
  std::vector<std::string> params;       // KEY=VALUE, the value a string
  std::vector<std::string> json_params;  // KEY=JSON
};
struct FleetListArgs {
  bool has_findings = false;
  std::string severity;
  std::string resource_type;
  std::string technology;
};
struct PatrolRunArgs {
  std::vector<std::string> resource_ids;
  std::vector<std::string> resource_types;
};
struct NotifyTestArgs {
  std::string channel;
};
struct PatrolAutonomyArgs {
  std::string level;                  // set: monitor, approval, assisted, full
  std::string acknowledgement_id;     // acknowledge, revoke
  std::string reason;                 // revoke
  int investigation_budget = 0;       // 0: unchanged
  int investigation_timeout_sec = 0;  // 0: unchanged
};
struct SessionArgs {
  std::string session_id;
  std::string control_level;
};
struct AnswerArgs {
  std::string question_id;
  std::string answer;
  std::string control_level;
};

// ---- commands ----

int CmdAsk(CommandContext& ctx, const AskArgs& args);
int CmdSessionResume(CommandContext& ctx, const SessionArgs& args);
int CmdAnswer(CommandContext& ctx, const AnswerArgs& args);

int CmdFindingsList(CommandContext& ctx, const FindingsListArgs& args);
int CmdFindingAck(CommandContext& ctx, const FindingArgs& args);
int CmdFindingSnooze(CommandContext& ctx, const FindingArgs& args);
int CmdFindingDismiss(CommandContext& ctx, const FindingArgs& args);
int CmdFindingResolve(CommandContext& ctx, const FindingArgs& args);
int CmdFindingUnsnooze(CommandContext& ctx, const FindingArgs& args);
int CmdFindingReopen(CommandContext& ctx, const FindingArgs& args);

int CmdActionsList(CommandContext& ctx, const ActionsListArgs& args);
int CmdActionShow(CommandContext& ctx, const ActionArgs& args);
int CmdActionPlan(CommandContext& ctx, const PlanArgs& args);
int CmdActionApprove(CommandContext& ctx, const ActionArgs& args);
int CmdActionReject(CommandContext& ctx, const ActionArgs& args);
int CmdActionExecute(CommandContext& ctx, const ActionArgs& args);

int CmdCapabilities(CommandContext& ctx);
int CmdFleetList(CommandContext& ctx, const FleetListArgs& args);
int CmdFleetShow(CommandContext& ctx, const std::string& resource_id);
// The host agents bound to the server (list_agents).
int CmdAgents(CommandContext& ctx);
// Starts a run, waits for its record (up to 10 minutes) and shows it; exit 1
// (patrol_run_failed) when the run ended with status error, the record still printed.
int CmdPatrolRun(CommandContext& ctx, const PatrolRunArgs& args);
int CmdPatrolRuns(CommandContext& ctx);
int CmdPatrolStatus(CommandContext& ctx);
int CmdPatrolAutonomyGet(CommandContext& ctx);
int CmdPatrolAutonomySet(CommandContext& ctx, const PatrolAutonomyArgs& args);
// Records / revokes the calling human's Autopilot acknowledgement.
int CmdPatrolAcknowledge(CommandContext& ctx, const PatrolAutonomyArgs& args);
int CmdPatrolRevoke(CommandContext& ctx, const PatrolAutonomyArgs& args);
// Sends one test notification to a configured channel (test_notification_channel); exit 1
// (notification_not_delivered) when its receiver did not accept it.
int CmdNotifyTest(CommandContext& ctx, const NotifyTestArgs& args);
int CmdSessionsList(CommandContext& ctx);
int CmdSessionShow(CommandContext& ctx, const SessionArgs& args);
int CmdStatus(CommandContext& ctx);

}  // namespace pulse::cli
