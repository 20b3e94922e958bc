#include "cli_app.h"

#include <csignal>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "commands_context.h"
#include "completion.h"
#include "completion_values.h"
#include "config.h"
#include "failure.h"
#include "help_examples.h"
#include "id_resolution.h"
#include "pre_parse.h"
#include "pulse/core/string_view.h"
#include "text_safety.h"

namespace pulse::cli {
namespace {

constexpr char kProgram[] = "pulse-cli";

constexpr char kEpilog[] = R"(
Environment:
  PULSE_API_TOKEN  the API token, sent as X-API-Token (never a flag: flags show up in ps)
  PULSE_SERVER     the server's base URL when --server is not given
  XDG_CONFIG_HOME  where the contexts file is: $XDG_CONFIG_HOME/pulse/cli.json (else
                   ~/.config/pulse/cli.json); see pulse-cli context --help
  NO_COLOR         when set and non-empty, no colours even on a terminal

Output: human-readable by default (colours and tool activity only on a terminal); --json
prints exactly one JSON document on stdout (ask, sessions resume and answer: one JSON event
per line). Errors go to stderr as "pulse-cli: <code>: <message>"; with --json the error
envelope {"error":"<code>","message":"..."} is also printed on stdout.

Exit codes:
  0    ok
  1    the operation was refused or failed; the stable error code is printed
  2    usage: unknown command or option, missing or bad argument, approve without
       --yes when stdin is not a terminal
  3    the server could not be reached (refused, timeout, DNS) or the stream broke
  4    authentication: no or invalid token (401), or a token without the route's
       scope (403 missing_scope); other 403 refusals are governance decisions (1)
  130  interrupted (Ctrl-C)

See docs/cli.md for every command and its JSON output.)";

const std::vector<std::string> kControlLevels = {"read_only", "controlled", "autonomous"};
const std::vector<std::string> kDismissReasons = {"not_an_issue", "expected_behavior",
                                                  "will_fix_later"};
const std::vector<std::string> kSeverities = {"critical", "warning", "info"};
const std::vector<std::string> kAutonomyLevels = {"monitor", "approval", "assisted", "full"};
const std::vector<std::string> kShells = {"bash", "zsh", "fish"};

struct Parsed {
  std::string server{kDefaultServer};
  bool json = false;
  double timeout_seconds = 30;
  AskArgs ask;
  FindingsListArgs findings_list;
  FindingArgs finding;
  ActionsListArgs actions_list;
  ActionArgs action;
  PlanArgs plan;
  FleetListArgs fleet;
  std::string resource_id;
  PatrolRunArgs patrol;
  PatrolAutonomyArgs autonomy;
  NotifyTestArgs notify;
  SessionArgs session;
  AnswerArgs answer;
  std::string shell;
  std::string context_name;  // --context
  ContextArgs context;
};

// Resolves the id in `id` (a unique prefix, git-style: id_resolution.h) before `run`; an empty
// id (an optional --session) is left alone.
template <typename Run>
std::function<int(CommandContext&)> WithId(IdKind kind, std::string& id, Run run) {
  return [kind, &id, run](CommandContext& c) {
    if (!id.empty()) {
      if (std::optional<int> failed = ResolveId(c, kind, id)) {
        return *failed;
      }
    }
    return run(c);
  };
}

// The command tree: CLI11 apps and what each leaf runs.
class Definition {
 public:
  Definition();

  CLI::App& app() { return app_; }
  const CompletionChoices& choices() const { return choices_; }
  const DynamicValues& dynamic() const { return dynamic_; }
  Parsed& parsed() { return p_; }
  // The command the parsed line selected; nullptr when none (only possible before parsing).
  std::function<int(CommandContext&)> Selected() const;
  bool completion_selected() const { return completion_->parsed(); }
  // ask without a question and without -i.
  bool ask_incomplete() const {
    return ask_->parsed() && p_.ask.question.empty() && !p_.ask.interactive;
  }
  // The local command (context ...) the parsed line selected, or nullptr.
  std::function<int(const Console&, const EndpointInputs&)> SelectedLocal() const;
  // Every command's path ("" for the top level, then "ask", "findings", "findings list", ...).
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  CLI::Option* Choice(CLI::App& app, const std::string& name, std::string& into,
                      const std::vector<std::string>& values, const std::string& help);
  // `opt`, its values completed from `source` (the server or the config file).
  CLI::Option* Dyn(CLI::Option* opt, ValueSource source) {
    dynamic_[opt] = source;
    return opt;
  }
  CLI::App* Leaf(CLI::App& parent, const std::string& name, const std::string& help,
                 std::function<int(CommandContext&)> run);

  CLI::App app_{"pulse-cli: ask the Assistant, review findings and actions, approve plans",
                kProgram};
  Parsed p_;
  CompletionChoices choices_;
  DynamicValues dynamic_;
  // Leaves in definition order, with their commands; the first parsed one runs.
  std::vector<std::pair<CLI::App*, std::function<int(CommandContext&)>>> leaves_;
  // Leaves that never talk to a server.
  std::vector<std::pair<CLI::App*, std::function<int(const Console&, const EndpointInputs&)>>>
      local_leaves_;
  CLI::App* completion_ = nullptr;
  CLI::App* ask_ = nullptr;
  std::vector<std::string> paths_;
};

CLI::Option* Definition::Choice(CLI::App& app, const std::string& name, std::string& into,
                                const std::vector<std::string>& values, const std::string& help) {
  std::string joined;
  for (const std::string& v : values) {
    joined += (joined.empty() ? "" : "|") + v;
  }
  CLI::Option* opt = app.add_option(name, into, help + " (" + joined + ")")
                         ->check(CLI::IsMember(values))
                         ->type_name("VALUE");
  choices_[opt] = values;
  return opt;
}

CLI::App* Definition::Leaf(CLI::App& parent, const std::string& name, const std::string& help,
                           std::function<int(CommandContext&)> run) {
  CLI::App* sub = parent.add_subcommand(name, help);
  leaves_.emplace_back(sub, std::move(run));
  return sub;
}

// Puts each command's examples (help_examples.h) at the top of its help footer, and lists the
// command paths it walked.
void AddExamples(CLI::App& app, const std::string& path, std::vector<std::string>* paths) {
  if (paths != nullptr) {
    paths->push_back(path);
  }
  const std::string_view examples = ExamplesFor(path);
  if (!examples.empty()) {
    const std::string rest = app.get_footer();
    app.footer(absl::StrCat("Examples:\n", core::ToAbsl(examples), rest.empty() ? "" : "\n", rest));
  }
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    AddExamples(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), paths);
  }
}

Definition::Definition() {
  app_.set_version_flag("--version", std::string(kProgram) + " " + PULSE_CORE_VERSION_STRING);
  app_.footer(kEpilog);
  app_.require_subcommand(1);
  app_.fallthrough();
  // --server wins over PULSE_SERVER, which wins over the context (config.h).
  app_.add_option("--server", p_.server,
                  "pulse-server base URL (default: $PULSE_SERVER, else the current context's, "
                  "else)")
      ->capture_default_str();
  Dyn(app_.add_option(
              "--context", p_.context_name,
              "use this context of the config file for this command (pulse-cli context list)")
          ->type_name("NAME"),
      ValueSource::kContext);
  app_.add_flag("--json", p_.json, "machine output: one JSON document (NDJSON for streams)");
  app_.add_option("--timeout", p_.timeout_seconds,
                  "seconds (0.1 to 3600) to wait to connect and for each read; a stream stays "
                  "open while the server sends heartbeats")
      ->check(CLI::Range(0.1, 3600.0).description(""))
      ->type_name("SECONDS")
      ->capture_default_str();
  Parsed& p = p_;

  CLI::App* ask = Leaf(app_, "ask", "ask the Assistant; the answer streams as it is written",
                       WithId(IdKind::kSession, p.ask.session_id,
                              [&p](CommandContext& c) { return CmdAsk(c, p.ask); }));
  ask->add_option("question", p.ask.question, "what to ask (with -i: the first question)");
  ask->add_flag("-i,--interactive", p.ask.interactive,
                "a conversation: then one question a line from stdin, in one session, until "
                "EOF or /exit");
  ask_ = ask;
  Dyn(ask->add_option("--session", p.ask.session_id, "continue this session"),
      ValueSource::kSessionId);
  Choice(*ask, "--control-level", p.ask.control_level, kControlLevels,
         "lower the Assistant's control level for this question");

  CLI::App* findings = app_.add_subcommand("findings", "Patrol findings (default: list)");
  findings->require_subcommand(0, 1);
  CLI::App* f_list = Leaf(*findings, "list", "list findings, most severe first",
                          [&p](CommandContext& c) { return CmdFindingsList(c, p.findings_list); });
  // The list options also work without "list" (`findings --all`), since list is the default.
  for (CLI::App* a : {findings, f_list}) {
    Dyn(a->add_option("--resource", p.findings_list.resource_id, "only this resource's findings"),
        ValueSource::kResourceId);
    a->add_flag("--all", p.findings_list.include_resolved,
                "include resolved, snoozed and dismissed findings");
    a->add_option("--limit", p.findings_list.limit, "at most this many")->check(CLI::Range(1, 500));
  }
  CLI::App* f_ack = Leaf(*findings, "ack", "acknowledge a finding (stays active, stops asking)",
                         WithId(IdKind::kFinding, p.finding.finding_id,
                                [&p](CommandContext& c) { return CmdFindingAck(c, p.finding); }));
  Dyn(f_ack->add_option("id", p.finding.finding_id, "finding id"), ValueSource::kFindingId)
      ->required();
  CLI::App* f_snooze = Leaf(*findings, "snooze", "hide a finding for 1 to 168 hours",
                            WithId(IdKind::kFinding, p.finding.finding_id, [&p](CommandContext& c) {
                              return CmdFindingSnooze(c, p.finding);
                            }));
  Dyn(f_snooze->add_option("id", p.finding.finding_id, "finding id"), ValueSource::kFindingId)
      ->required();
  f_snooze->add_option("--hours", p.finding.hours, "how long")
      ->required()
      ->check(CLI::Range(1, 168));
  CLI::App* f_dismiss =
      Leaf(*findings, "dismiss", "close a finding that needs no action",
           WithId(IdKind::kFinding, p.finding.finding_id,
                  [&p](CommandContext& c) { return CmdFindingDismiss(c, p.finding); }));
  Dyn(f_dismiss->add_option("id", p.finding.finding_id, "finding id"), ValueSource::kFindingId)
      ->required();
  Choice(*f_dismiss, "--reason", p.finding.reason, kDismissReasons, "why")->required();
  f_dismiss->add_option("--note", p.finding.note, "operator note");
  CLI::App* f_resolve =
      Leaf(*findings, "resolve", "mark a finding as fixed",
           WithId(IdKind::kFinding, p.finding.finding_id,
                  [&p](CommandContext& c) { return CmdFindingResolve(c, p.finding); }));
  Dyn(f_resolve->add_option("id", p.finding.finding_id, "finding id"), ValueSource::kFindingId)
      ->required();
  f_resolve->add_option("--note", p.finding.note, "what was done");
  CLI::App* f_unsnooze =
      Leaf(*findings, "unsnooze", "end a finding's snooze now",
           WithId(IdKind::kFinding, p.finding.finding_id,
                  [&p](CommandContext& c) { return CmdFindingUnsnooze(c, p.finding); }));
  Dyn(f_unsnooze->add_option("id", p.finding.finding_id, "finding id"), ValueSource::kFindingId)
      ->required();
  CLI::App* f_reopen = Leaf(*findings, "reopen", "reopen a dismissed finding",
                            WithId(IdKind::kFinding, p.finding.finding_id, [&p](CommandContext& c) {
                              return CmdFindingReopen(c, p.finding);
                            }));
  Dyn(f_reopen->add_option("id", p.finding.finding_id, "finding id"), ValueSource::kFindingId)
      ->required();
  leaves_.emplace_back(findings,
                       [&p](CommandContext& c) { return CmdFindingsList(c, p.findings_list); });

  CLI::App* actions = app_.add_subcommand("actions", "governed actions (default: list)");
  actions->require_subcommand(0, 1);
  CLI::App* a_list = Leaf(*actions, "list", "actions waiting for a decision (or --settled)",
                          [&p](CommandContext& c) { return CmdActionsList(c, p.actions_list); });
  for (CLI::App* a : {actions, a_list}) {
    a->add_flag("--settled", p.actions_list.settled, "decided and finished actions instead");
    a->add_option("--limit", p.actions_list.limit, "at most this many")->check(CLI::Range(1, 500));
  }
  CLI::App* a_plan = Leaf(*actions, "plan", "plan a governed change (nothing runs until approved)",
                          [&p](CommandContext& c) { return CmdActionPlan(c, p.plan); });
  Dyn(a_plan->add_option("resource", p.plan.resource_id, "resource id, e.g. vm:105"),
      ValueSource::kResourceId)
      ->required();
  Dyn(a_plan->add_option("capability", p.plan.capability, "what to do, e.g. restart"),
      ValueSource::kCapability)
      ->required();
  a_plan->add_option("--reason", p.plan.reason, "why (recorded, shown to the approver)")
      ->required();
  a_plan->add_option("--param", p.plan.params, "KEY=VALUE, a string parameter (repeatable)");
  a_plan->add_option("--param-json", p.plan.json_params,
                     "KEY=JSON, a typed parameter, e.g. memory_mb=4096 (repeatable)");
  a_plan->add_option("--request-id", p.plan.request_id,
                     "your idempotency key: the same key and content return the same plan");
  CLI::App* a_show = Leaf(*actions, "show", "one action: plan, hash, decisions, result",
                          WithId(IdKind::kAction, p.action.action_id,
                                 [&p](CommandContext& c) { return CmdActionShow(c, p.action); }));
  Dyn(a_show->add_option("id", p.action.action_id, "action id"), ValueSource::kActionId)
      ->required();
  CLI::App* a_approve = Leaf(*actions, "approve", "approve a plan (shows it and asks unless --yes)",
                             WithId(IdKind::kAction, p.action.action_id, [&p](CommandContext& c) {
                               return CmdActionApprove(c, p.action);
                             }));
  Dyn(a_approve->add_option("id", p.action.action_id, "action id"), ValueSource::kActionId)
      ->required();
  a_approve->add_flag("-y,--yes", p.action.yes, "approve without asking");
  a_approve->add_option("--reason", p.action.reason, "recorded in the audit trail");
  CLI::App* a_reject = Leaf(*actions, "reject", "reject a plan",
                            WithId(IdKind::kAction, p.action.action_id, [&p](CommandContext& c) {
                              return CmdActionReject(c, p.action);
                            }));
  Dyn(a_reject->add_option("id", p.action.action_id, "action id"), ValueSource::kActionId)
      ->required();
  a_reject->add_option("--reason", p.action.reason, "recorded in the audit trail");
  CLI::App* a_execute = Leaf(*actions, "execute", "run an approved action once and verify it",
                             WithId(IdKind::kAction, p.action.action_id, [&p](CommandContext& c) {
                               return CmdActionExecute(c, p.action);
                             }));
  Dyn(a_execute->add_option("id", p.action.action_id, "action id"), ValueSource::kActionId)
      ->required();
  a_execute->add_option("--reason", p.action.reason, "recorded in the audit trail");
  leaves_.emplace_back(actions,
                       [&p](CommandContext& c) { return CmdActionsList(c, p.actions_list); });

  Leaf(app_, "capabilities", "the server's capability manifest",
       [](CommandContext& c) { return CmdCapabilities(c); });

  CLI::App* fleet = app_.add_subcommand("fleet", "governed resources (default: list)");
  fleet->require_subcommand(0, 1);
  CLI::App* fl_list = Leaf(*fleet, "list", "every resource with its findings and approvals",
                           [&p](CommandContext& c) { return CmdFleetList(c, p.fleet); });
  for (CLI::App* a : {fleet, fl_list}) {
    a->add_flag("--has-findings", p.fleet.has_findings, "only resources with findings");
    Choice(*a, "--severity", p.fleet.severity, kSeverities,
           "only resources with an active finding of this severity");
    Dyn(a->add_option("--type", p.fleet.resource_type, "only this resource type (vm, node, ...)"),
        ValueSource::kResourceType);
    Dyn(a->add_option("--technology", p.fleet.technology, "only this technology"),
        ValueSource::kTechnology);
  }
  CLI::App* fl_show = Leaf(*fleet, "show", "one resource: live context and capabilities",
                           [&p](CommandContext& c) { return CmdFleetShow(c, p.resource_id); });
  Dyn(fl_show->add_option("id", p.resource_id, "resource id, e.g. vm:105"),
      ValueSource::kResourceId)
      ->required();
  leaves_.emplace_back(fleet, [&p](CommandContext& c) { return CmdFleetList(c, p.fleet); });

  Leaf(app_, "agents", "host agents: state, version, last seen, resources",
       [](CommandContext& c) { return CmdAgents(c); });

  CLI::App* patrol = app_.add_subcommand("patrol", "Patrol");
  patrol->require_subcommand(1);
  CLI::App* p_run = Leaf(*patrol, "run", "run Patrol now (whole fleet, or a scope)",
                         [&p](CommandContext& c) { return CmdPatrolRun(c, p.patrol); });
  Dyn(p_run->add_option("--resource", p.patrol.resource_ids, "only this resource (repeatable)"),
      ValueSource::kResourceId);
  Dyn(p_run->add_option("--type", p.patrol.resource_types, "only this resource type (repeatable)"),
      ValueSource::kResourceType);
  Leaf(*patrol, "runs", "the last 100 runs, newest first",
       [](CommandContext& c) { return CmdPatrolRuns(c); });
  Leaf(*patrol, "status", "running runs, schedule, model pass, autonomy, last run",
       [](CommandContext& c) { return CmdPatrolStatus(c); });
  CLI::App* autonomy = patrol->add_subcommand("autonomy", "Patrol autonomy (default: get)");
  autonomy->require_subcommand(0, 1);
  Leaf(*autonomy, "get", "the saved and effective level, Autopilot, investigation budget",
       [](CommandContext& c) { return CmdPatrolAutonomyGet(c); });
  CLI::App* a_set = Leaf(*autonomy, "set", "set the level (needs settings:write)",
                         [&p](CommandContext& c) { return CmdPatrolAutonomySet(c, p.autonomy); });
  Choice(*a_set, "level", p.autonomy.level, kAutonomyLevels, "how far Patrol may act alone")
      ->required();
  a_set
      ->add_option("--budget", p.autonomy.investigation_budget,
                   "evidence calls per investigation (the server clamps to 5-30)")
      ->check(CLI::Range(1, 1000));
  a_set
      ->add_option("--timeout-sec", p.autonomy.investigation_timeout_sec,
                   "investigation timeout in seconds (the server clamps to 60-1800)")
      ->check(CLI::Range(1, 100000));
  CLI::App* a_ack =
      Leaf(*autonomy, "acknowledge", "record your Autopilot acknowledgement (humans only)",
           [&p](CommandContext& c) { return CmdPatrolAcknowledge(c, p.autonomy); });
  a_ack->add_option("id", p.autonomy.acknowledgement_id, "your reference, e.g. ops-2026-11-30")
      ->required();
  CLI::App* a_revoke =
      Leaf(*autonomy, "revoke", "revoke the Autopilot acknowledgement: full acts as approval",
           [&p](CommandContext& c) { return CmdPatrolRevoke(c, p.autonomy); });
  a_revoke->add_option("id", p.autonomy.acknowledgement_id, "the acknowledgement id")->required();
  a_revoke->add_option("--reason", p.autonomy.reason, "why (recorded)");
  leaves_.emplace_back(autonomy, [](CommandContext& c) { return CmdPatrolAutonomyGet(c); });

  CLI::App* notify = app_.add_subcommand("notify", "notification channels");
  notify->require_subcommand(1);
  CLI::App* n_test =
      Leaf(*notify, "test", "send a test notification to a channel now (needs settings:write)",
           [&p](CommandContext& c) { return CmdNotifyTest(c, p.notify); });
  n_test->add_option("channel", p.notify.channel, "the channel's name")->required();

  CLI::App* sessions = app_.add_subcommand("sessions", "Assistant sessions (default: list)");
  sessions->require_subcommand(0, 1);
  Leaf(*sessions, "list", "sessions, newest first",
       [](CommandContext& c) { return CmdSessionsList(c); });
  CLI::App* s_show = Leaf(*sessions, "show", "one session and its transcript",
                          WithId(IdKind::kSession, p.session.session_id,
                                 [&p](CommandContext& c) { return CmdSessionShow(c, p.session); }));
  Dyn(s_show->add_option("id", p.session.session_id, "session id"), ValueSource::kSessionId)
      ->required();
  CLI::App* s_resume = Leaf(*sessions, "resume", "continue a session after its action was decided",
                            WithId(IdKind::kSession, p.session.session_id, [&p](CommandContext& c) {
                              return CmdSessionResume(c, p.session);
                            }));
  Dyn(s_resume->add_option("id", p.session.session_id, "session id"), ValueSource::kSessionId)
      ->required();
  Choice(*s_resume, "--control-level", p.session.control_level, kControlLevels,
         "lower the control level for this run");
  leaves_.emplace_back(sessions, [](CommandContext& c) { return CmdSessionsList(c); });

  CLI::App* answer = Leaf(app_, "answer", "answer the question a session is waiting on",
                          [&p](CommandContext& c) { return CmdAnswer(c, p.answer); });
  answer->add_option("question-id", p.answer.question_id, "from the question")->required();
  answer->add_option("answer", p.answer.answer, "your answer")->required();
  Choice(*answer, "--control-level", p.answer.control_level, kControlLevels,
         "lower the control level for this run");

  Leaf(app_, "status", "server health and where the operations loop stands",
       [](CommandContext& c) { return CmdStatus(c); });

  CLI::App* context = app_.add_subcommand(
      "context", "named servers and their tokens in the config file (default: list)");
  context->require_subcommand(0, 1);
  context->footer(
      "Precedence: --server > --context NAME > PULSE_SERVER, PULSE_API_TOKEN > the current "
      "context > the default.");
  auto local = [this](CLI::App* sub, std::function<int(const Console&, const EndpointInputs&)> f) {
    local_leaves_.emplace_back(sub, std::move(f));
    return sub;
  };
  CLI::App* c_add = local(
      context->add_subcommand("add", "add (or replace) a context; the first one becomes current"),
      [&p](const Console& c, const EndpointInputs& in) {
        return CmdContextAdd(c, p.context, in.config_path);
      });
  c_add->add_option("name", p.context.name, "the context's name, e.g. prod")->required();
  c_add->add_option("--server", p.context.server, "its pulse-server base URL")->required();
  c_add->add_option("--token-file", p.context.token_file,
                    "a file whose first line is the token (stored as an absolute path)");
  c_add->add_option("--token-env", p.context.token_env,
                    "or: the variable that holds the token, e.g. PULSE_PROD_TOKEN");
  c_add->add_flag("--use", p.context.use, "make it the current context");
  CLI::App* c_use = local(context->add_subcommand("use", "make a context the current one"),
                          [&p](const Console& c, const EndpointInputs& in) {
                            return CmdContextUse(c, p.context, in.config_path);
                          });
  Dyn(c_use->add_option("name", p.context.name, "the context"), ValueSource::kContext)->required();
  local(
      context->add_subcommand("list", "every context, the current marked *"),
      [](const Console& c, const EndpointInputs& in) { return CmdContextList(c, in.config_path); });
  local(context->add_subcommand("show", "the server and token source this command line would use"),
        [](const Console& c, const EndpointInputs& in) { return CmdContextShow(c, in); });
  CLI::App* c_remove = local(context->add_subcommand("remove", "delete a context"),
                             [&p](const Console& c, const EndpointInputs& in) {
                               return CmdContextRemove(c, p.context, in.config_path);
                             });
  Dyn(c_remove->add_option("name", p.context.name, "the context"), ValueSource::kContext)
      ->required();
  local_leaves_.emplace_back(context, [](const Console& c, const EndpointInputs& in) {
    return CmdContextList(c, in.config_path);
  });

  completion_ = app_.add_subcommand("completion", "print a shell completion script");
  Choice(*completion_, "shell", p.shell, kShells, "the shell")->required();
  AddExamples(app_, "", &paths_);
}

std::function<int(CommandContext&)> Definition::Selected() const {
  for (const auto& [sub, run] : leaves_) {
    if (sub->parsed()) {
      return run;
    }
  }
  return nullptr;
}

std::function<int(const Console&, const EndpointInputs&)> Definition::SelectedLocal() const {
  for (const auto& [sub, run] : local_leaves_) {
    if (sub->parsed()) {
      return run;
    }
  }
  return nullptr;
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "pulse-cli: usage: %s\nRun with --help for more information.\n",
               SafeText(message, false).c_str());
  return static_cast<int>(ExitCode::kUsage);
}

// A token goes into a header: it must be visible ASCII (no CR/LF smuggling another header).
bool UsableToken(const std::string& token) {
  for (char c : token) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> CommandPaths() { return Definition().paths(); }

int Main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a reader that went away shows up as a failed write
  Definition definition;
  // The hidden __complete: the candidates for the words after it (completion.h), one a line;
  // nothing at all when there are none or the server cannot be asked.
  if (argc > 1 && std::string_view(argv[1]) == "__complete") {
    const std::vector<std::string> words(argv + 2, argv + argc);
    for (const std::string& c : Complete(definition.app(), definition.choices(),
                                         definition.dynamic(), words, FetchCompletionValues)) {
      std::fwrite(c.data(), 1, c.size(), stdout);
      std::fputc('\n', stdout);
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  if (std::optional<int> answered = PreParse(definition.app(), argc, argv)) {
    return *answered;
  }
  try {
    definition.app().parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return definition.app().exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return definition.app().exit(e);
  } catch (const CLI::CallForVersion& e) {
    return definition.app().exit(e);
  } catch (const CLI::ParseError& e) {
    return UsageError(e.what());
  }
  const Parsed& p = definition.parsed();
  const Console console = StdConsole(DetectConsoleTraits(p.json));
  if (definition.completion_selected()) {
    console.Out(CompletionScript(p.shell, kProgram));
    return 0;
  }
  EndpointInputs inputs;
  if (definition.app().get_option("--server")->count() > 0) {
    inputs.server_flag = p.server;
  }
  if (definition.app().get_option("--context")->count() > 0) {
    inputs.context_flag = p.context_name;
  }
  inputs.config_path = ConfigPath();
  if (const auto local = definition.SelectedLocal()) {
    return local(console, inputs);
  }
  if (definition.ask_incomplete()) {
    return UsageError("ask needs a question (or -i for a conversation)");
  }
  const std::function<int(CommandContext&)> run = definition.Selected();
  if (!run) {
    return UsageError("a subcommand is required");
  }
  Failure failure;
  std::optional<Endpoint> endpoint = ResolveEndpoint(inputs, failure);
  if (!endpoint.has_value()) {
    return Report(console, failure);
  }
  ClientOptions options;
  options.base_url = endpoint->server;
  options.token = endpoint->token;
  options.timeout = absl::Seconds(p.timeout_seconds);
  if (!UsableToken(options.token)) {
    return UsageError("the token (from " + endpoint->token_source +
                      ") holds a space or control character; a token is visible ASCII");
  }
  absl::StatusOr<std::unique_ptr<PulseClient>> client = PulseClient::Open(options);
  if (!client.ok()) {
    return UsageError(std::string(client.status().message()));
  }
  CommandContext ctx(console, **client, options);
  return run(ctx);
}

}  // namespace pulse::cli
