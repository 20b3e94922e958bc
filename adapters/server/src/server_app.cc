#include "pulse/adapters/server/server_app.h"

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "fleet_opening.h"
#include "pulse/adapters/agents/composite_metrics_history.h"
#include "pulse/adapters/hostagent/agent_hub.h"
#include "pulse/adapters/http/console_sessions.h"
#include "pulse/adapters/http/http_server.h"
#include "pulse/adapters/http/metrics_registry.h"
#include "pulse/adapters/http/router.h"
#include "pulse/adapters/http/token_authenticator.h"
#include "pulse/adapters/providers/provider_factory.h"
#include "pulse/adapters/proxmox/pve_source.h"
#include "pulse/adapters/server/agent_event_bus.h"
#include "pulse/adapters/server/ai_runtime.h"
#include "pulse/adapters/server/chat_runs.h"
#include "pulse/adapters/server/event_publisher.h"
#include "pulse/adapters/server/fleet_change_publisher.h"
#include "pulse/adapters/server/fleet_sample_recorder.h"
#include "pulse/adapters/server/observed_stores.h"
#include "pulse/adapters/server/patrol_stream.h"
#include "pulse/adapters/server/server_metrics.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/adapters/system/random_id_source.h"
#include "pulse/adapters/system/system_clock.h"
#include "pulse/adapters/system/thread_pool_task_runner.h"
#include "pulse/core/actions/action_reconciler.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/loop/loop_assembly.h"
#include "pulse/core/loop/outbound_context.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/patrol/fix_projection.h"
#include "pulse/core/patrol/patrol_service.h"
#include "pulse/core/patrol/triage.h"
#include "pulse/core/ports/finding_verifier.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {
namespace {

namespace agents = adapters::agents;
namespace http = adapters::http;
namespace providers = adapters::providers;
namespace storage = adapters::storage;
namespace system = adapters::system;

// Tool calls of one turn run on this many threads (the loop caps a turn at 4 at once).
constexpr std::size_t kToolThreads = 4;
// How long a shutdown waits for runs in flight to end after cancelling them.
constexpr absl::Duration kRunStopGrace = absl::Seconds(10);

constexpr std::string_view kSystemPrompt =
    "You are Pulse Assistant, the operations assistant of this Pulse server. Investigate the "
    "fleet with the tools you are offered before you answer, and base every statement on what "
    "they returned. Infrastructure changes go only through the governed control tool, which "
    "plans an action that a human or policy must approve; never claim a change happened until "
    "a tool result shows it, and after a change read the resource again to verify it. Answer "
    "concisely and say plainly when you could not find something out.";

// True when the change put the record in a state it was not in before (a decision that
// leaves an action pending_approval is not a new state).
bool EntersState(const ActionChange& change) {
  return change.created || std::find(change.from_states.begin(), change.from_states.end(),
                                     change.record.state) == change.from_states.end();
}

std::string AssistantLabel(const ServerConfig& config, const AiEngine* engine) {
  if (engine == nullptr) {
    return "not configured";
  }
  std::string label = engine->route.Identity();
  if (!config.api_key_variable.empty() && engine->config.api_key == config.api_key) {
    absl::StrAppend(&label, " (API key from ", config.api_key_variable, ")");
  }
  if (!engine->settings.model_note.empty()) {
    absl::StrAppend(&label, " (model: ", engine->settings.model_note, ")");
  }
  if (engine->settings.updated_at.has_value()) {
    absl::StrAppend(&label, " (settings changed at runtime by ", engine->settings.updated_by, ")");
  }
  const providers::Destination& destination = engine->destination;
  absl::StrAppend(&label, " at ", engine->host, ", destination ",
                  std::string(providers::ToString(destination.locality)), ": ", destination.reason,
                  destination.locality == providers::Locality::kLocal
                      ? "; context is sent unredacted"
                      : "; secrets and localOnly resources are redacted");
  return label;
}

}  // namespace

// Declared in the order they are built; destroyed in reverse, so the HTTP server (last) stops
// before anything its handlers borrow goes away, and the storage (first) closes last.
struct ServerApp::Parts {
  ServerConfig config;
  system::SystemClock clock;
  std::unique_ptr<system::RandomIdSource> ids;
  std::unique_ptr<storage::SqliteStorage> storage;
  // The host agents (docs/agent.md): their registry in memory, over storage's; the fleet's
  // `agents` source reads it and the /api/agents/* routes feed it.
  std::unique_ptr<adapters::hostagent::AgentHub> agent_hub;
  std::unique_ptr<core::Fleet> fleet;
  // The demo fleet's generated history (a demo fleet), or the routing history of a composite
  // (agents::CompositeMetricsHistory); null: the storage's history alone.
  std::unique_ptr<core::MetricsHistory> own_history;
  const core::MetricsHistory* history = nullptr;
  // Copies the samples docker sources take, and proxmox-ve storage's rrddata, into the
  // storage's history.
  std::unique_ptr<FleetSampleRecorder> recorder;
  http::MetricsRegistry registry;
  std::unique_ptr<ServerMetrics> metrics;
  std::unique_ptr<AgentEventBus> bus;
  std::unique_ptr<AgentEventPublisher> publisher;
  std::unique_ptr<FleetChangePublisher> changes;  // the fleet's change feed as fleet.change
  std::unique_ptr<ObservedActionStore> actions;
  // GET /api/ai/patrol/stream: runs (observed run records), their phases and Watch events
  // (PatrolObserver) and finding changes (observed finding writes).
  std::unique_ptr<PatrolStreamHub> patrol_stream;
  std::unique_ptr<ObservedFindingStore> finding_store;
  std::unique_ptr<ObservedPatrolRunStore> patrol_runs;
  // The deterministic re-check of Patrol's own triage keys (patrol/triage.h); any other finding
  // has no verifier, so a verified resolve of it is refused (fail closed).
  std::unique_ptr<core::TriageFindingVerifier> verifier;
  std::unique_ptr<core::ActionService> action_service;
  std::unique_ptr<core::FindingsService> findings;
  // Projects a Patrol fix's action onto its finding after every action change (a wakeup; it
  // re-reads the stored action) and once at start-up (patrol/fix_projection.h).
  std::unique_ptr<core::FixProjector> fixes;
  std::unique_ptr<core::AgentViews> views;
  std::unique_ptr<system::ThreadPoolTaskRunner> tool_runner;
  // The AI settings and the engine built from them (provider, chat loop, Patrol's model),
  // replaced whole by PUT /api/settings/ai.
  std::unique_ptr<AiRuntime> ai;
  std::unique_ptr<ChatRuns> runs;
  std::unique_ptr<core::ActionService> autopilot_actions;  // Patrol at full; same stores
  std::unique_ptr<core::PatrolService> patrol;
  std::unique_ptr<PatrolScheduler> scheduler;
  // Delivers the notification outbox (docs/notifications.md).
  std::unique_ptr<NotificationSender> notification_sender;
  // POST /api/ai/investigate-alert (docs/alerts.md).
  std::unique_ptr<core::AlertIntake> alerts;
  // Fleet changes that start scoped Patrol runs (docs/patrol.md "Runs the fleet starts").
  std::unique_ptr<core::PatrolEventTrigger> triggers;
  SessionLevels levels;
  std::unique_ptr<ServerContext> context;
  std::unique_ptr<http::TokenAuthenticator> authenticator;
  std::unique_ptr<http::ConsoleSessions> console_sessions;  // the console's sign-ins
  std::unique_ptr<http::HttpServer> server;
  bool shut_down = false;

  // A write of the server's own stores may have queued notifications in its transaction: the
  // sender looks now instead of at its next poll (a write from another process waits for it).
  void WakeNotifications() {
    if (notification_sender != nullptr) {
      notification_sender->Wake();
    }
  }
  absl::Status OpenFleet();
  absl::Status OpenServices();
  absl::Status OpenAssistant();
  absl::StatusOr<std::shared_ptr<AiEngine>> BuildEngine(const AiSettings& settings,
                                                        const std::string& api_key,
                                                        const std::string& key_sources);
  void OpenPatrol();
  absl::Status OpenServer();
};

absl::Status ServerApp::Parts::OpenFleet() {
  storage::SqliteCredentialStore* credentials = storage->credentials.get();
  adapters::hostagent::AgentHubOptions hub_options;
  hub_options.clock = &clock;
  hub_options.server_version = PULSE_CORE_VERSION_STRING;
  PULSE_ASSIGN_OR_RETURN(agent_hub,
                         adapters::hostagent::AgentHub::Open(*storage->host_agents, hub_options));
  PULSE_ASSIGN_OR_RETURN(OpenedFleet opened,
                         OpenConfiguredFleet(
                             config, clock,
                             [credentials](std::string_view source) -> absl::StatusOr<std::string> {
                               if (credentials == nullptr) {
                                 return absl::NotFoundError("no credential store");
                               }
                               return credentials->Get(proxmox::FleetCredentialName(source));
                             },
                             agent_hub.get()));
  fleet = std::move(opened.fleet);
  own_history = std::move(opened.demo_history);
  if (opened.composite != nullptr) {
    own_history = std::make_unique<adapters::agents::CompositeMetricsHistory>(
        *opened.composite, std::move(opened.source_histories), *storage->metrics);
  }
  history = own_history != nullptr ? own_history.get() : storage->metrics.get();
  recorder = std::make_unique<FleetSampleRecorder>(*fleet, *storage->metrics, clock);
  return absl::OkStatus();
}

absl::Status ServerApp::Parts::OpenServices() {
  PULSE_ASSIGN_OR_RETURN(metrics, ServerMetrics::Register(registry));
  ServerMetrics* m = metrics.get();
  AgentEventBusOptions bus_options;
  bus_options.on_publish = [m](std::string_view kind) { m->EventPublished(kind); };
  bus = std::make_unique<AgentEventBus>(clock, std::move(bus_options));
  publisher = std::make_unique<AgentEventPublisher>(*bus, *fleet, clock);
  changes = std::make_unique<FleetChangePublisher>(*fleet, *bus);
  AgentEventPublisher* p = publisher.get();
  actions = std::make_unique<ObservedActionStore>(*storage->actions,
                                                  [this, m, p](const ActionChange& change) {
                                                    if (EntersState(change)) {
                                                      m->ActionEntered(change.record.state);
                                                    }
                                                    p->OnActionChange(change);
                                                    WakeNotifications();
                                                    if (fixes != nullptr) {
                                                      // Best effort: a projection lost here is made
                                                      // by the start-up reconciliation.
                                                      fixes->Wake(change.record.id()).IgnoreError();
                                                    }
                                                  });
  patrol_stream = std::make_unique<PatrolStreamHub>(clock);
  PatrolStreamHub* ps = patrol_stream.get();
  finding_store = std::make_unique<ObservedFindingStore>(
      *storage->findings, [p](const core::Finding& finding) { p->OnFindingCreated(finding); },
      [this, ps](const core::Finding& finding, bool created) {
        ps->OnFindingWritten(finding, created);
        WakeNotifications();
      });
  patrol_runs = std::make_unique<ObservedPatrolRunStore>(
      *storage->patrol_runs, [this, ps](const core::PatrolRunRecord& record) {
        ps->OnRunStored(record);
        WakeNotifications();
      });
  core::ActionPolicyOptions action_policy;
  action_policy.require_requester_separation = config.requester_separation;
  if (!config.requester_separation) {
    LogLine(
        "requester separation is off (pulse.json): the token that plans an admin or mfa "
        "action may also approve it");
  }
  action_service = std::make_unique<core::ActionService>(*actions, *fleet, *storage->operator_state,
                                                         *storage->audit, clock, action_policy);
  verifier = std::make_unique<core::TriageFindingVerifier>(
      *fleet, *history, clock, core::TriageThresholds{}, storage->patrol_runs.get());
  findings = std::make_unique<core::FindingsService>(*finding_store, clock, *verifier, *history,
                                                     storage->operator_state.get());
  fixes = std::make_unique<core::FixProjector>(*storage->actions, *findings);
  views = std::make_unique<core::AgentViews>(*fleet, *finding_store, *actions, *action_service,
                                             *storage->operator_state, clock);
  // An execution a previous process admitted but never settled: its outcome is unknown, and it
  // is never dispatched again.
  PULSE_ASSIGN_OR_RETURN(core::ReconcileReport reconciled,
                         core::ReconcileInterruptedExecutions(*actions, *storage->audit, clock));
  if (!reconciled.settled.empty()) {
    LogLine(absl::StrCat("settled ", reconciled.settled.size(),
                         " action(s) interrupted while executing as failed (inconclusive)"));
  }
  // A decision or an execution whose projection onto its finding a restart lost.
  PULSE_ASSIGN_OR_RETURN(std::size_t projected, fixes->ReconcileAll());
  if (projected > 0) {
    LogLine(absl::StrCat("projected the outcome of ", projected,
                         " Patrol fix(es) onto their findings"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<AiEngine>> ServerApp::Parts::BuildEngine(
    const AiSettings& settings, const std::string& api_key, const std::string& key_sources) {
  auto engine = std::make_shared<AiEngine>();
  providers::ProviderConfig pc;
  pc.provider = settings.provider;
  pc.base_url = settings.base_url;
  pc.model = settings.model;
  pc.api_key = api_key;
  pc.key_sources = key_sources;
  pc.locality = config.provider_locality;
  PULSE_ASSIGN_OR_RETURN(providers::ResolvedProvider resolved, providers::ResolveProvider(pc));
  pc.model = resolved.model;
  engine->settings = settings;
  engine->settings.model = resolved.model;
  engine->destination = resolved.destination;
  engine->host = resolved.base_url.host;
  PULSE_ASSIGN_OR_RETURN(engine->route, providers::ResolveRoute(pc));
  PULSE_ASSIGN_OR_RETURN(engine->provider, providers::MakeProvider(pc));

  core::LoopAssemblyOptions options;
  options.flavour = core::LoopFlavour::kChat;
  options.loop.system_prompt = std::string(kSystemPrompt);
  options.loop.route = engine->route;
  if (settings.session_budget_usd > 0) {
    // The loop bounds each session's whole cost (its earlier runs included) on a metered route
    // and fails closed on an unknown price.
    options.loop.max_session_cost_usd = settings.session_budget_usd;
  }
  // The monthly cap: every engine's runs count against the one month total.
  options.loop.spend_guard = &ai->Spend();
  core::OperatorStateStore* operator_state = storage->operator_state.get();
  core::Fleet* fleet_ptr = fleet.get();
  const core::LocalOnlySource local_only = [operator_state, fleet_ptr] {
    return core::LoadLocalOnlyResources(*operator_state, fleet_ptr);
  };
  options.loop.local_only = local_only;
  const core::LoopPorts ports{
      *engine->provider, *tool_runner, clock, *storage->sessions, *action_service, *ids, *fleet,
      *findings,         history};
  PULSE_ASSIGN_OR_RETURN(engine->chat, core::LoopAssembly::Assemble(ports, std::move(options)));

  core::ModelRoute patrol_route = engine->route;
  if (settings.EffectivePatrolModel() != resolved.model) {
    providers::ProviderConfig patrol_config = pc;
    patrol_config.model = settings.patrol_model;
    absl::StatusOr<core::ModelRoute> route = providers::ResolveRoute(patrol_config);
    absl::StatusOr<std::unique_ptr<core::LlmProvider>> made =
        providers::MakeProvider(patrol_config);
    if (!route.ok() || !made.ok()) {
      const absl::Status& bad = !route.ok() ? route.status() : made.status();
      return absl::Status(bad.code(), absl::StrCat("patrol_model: ", bad.message()));
    }
    patrol_route = *std::move(route);
    engine->patrol_provider = *std::move(made);
  }
  engine->patrol.emplace(core::PatrolModel{engine->PatrolProvider(), *storage->sessions,
                                           *tool_runner, std::move(patrol_route), local_only,
                                           &ai->Spend()});
  engine->config = std::move(pc);
  return engine;
}

absl::Status ServerApp::Parts::OpenAssistant() {
  // The tool threads serve every engine, so a provider set at runtime needs no restart.
  PULSE_ASSIGN_OR_RETURN(tool_runner, system::ThreadPoolTaskRunner::Open(kToolThreads));
  ai = std::make_unique<AiRuntime>(*storage->ai_settings, *storage->credentials, *storage->audit,
                                   clock,
                                   [this](const AiSettings& settings, const std::string& api_key,
                                          const std::string& key_sources) {
                                     return BuildEngine(settings, api_key, key_sources);
                                   });
  AiStartup startup;
  startup.provider = config.provider;
  startup.base_url = config.provider_base_url;
  startup.model = config.model;
  startup.api_key = config.api_key;
  startup.key_sources = ProviderKeyVariables(config.provider);
  return ai->Open(startup);
}

void ServerApp::Parts::OpenPatrol() {
  // Autopilot (full, acknowledged by a human) plans under a ceiling that admits elevated
  // capabilities; every other caller keeps the default low_risk ceiling.
  core::ActionPolicyOptions autopilot_policy = action_service->options();
  autopilot_policy.automatic_ceiling = core::AutoAuthorization::kElevated;
  autopilot_actions = std::make_unique<core::ActionService>(
      *actions, *fleet, *storage->operator_state, *storage->audit, clock, autopilot_policy);
  core::PatrolServiceOptions patrol_options;
  patrol_options.autopilot_actions = autopilot_actions.get();
  patrol_options.restart_observations = &verifier->restart_observations();
  patrol_options.observer = patrol_stream.get();
  // Each run takes the model of the AI settings in force when it starts.
  AiRuntime* runtime = ai.get();
  patrol_options.model_source = [runtime](core::PatrolTrigger trigger) {
    return runtime->PatrolModelFor(trigger);
  };
  patrol = std::make_unique<core::PatrolService>(
      *fleet, *findings, *action_service, *storage->operator_state, *patrol_runs, *history, clock,
      *ids, std::nullopt, std::move(patrol_options));
  scheduler = std::make_unique<PatrolScheduler>(*patrol, clock, config.patrol_interval,
                                                config.patrol_on_start);
}

absl::Status ServerApp::Parts::OpenServer() {
  ChatRunsOptions run_options;
  run_options.workers = config.run_workers;
  run_options.queue = config.run_queue;
  runs = std::make_unique<ChatRuns>(run_options);
  NotificationSenderOptions notify_options;
  notify_options.retry.base_delay = config.notify_retry_base;
  notify_options.retry.max_attempts = static_cast<int>(config.notify_max_attempts);  // 1..100
  notify_options.ca_file = config.notify_ca_file;
  notification_sender = std::make_unique<NotificationSender>(
      *storage->notifications, *storage->notification_channels, clock, notify_options);
  // Alerts (trigger alert) and fleet changes (trigger event) start scoped Patrol runs through
  // the same slots and queue as the manual ones; a run that cannot be queued is abandoned there.
  const auto start_run = [patrol = patrol.get(),
                          scheduler = scheduler.get()](core::PatrolTrigger trigger) {
    return [patrol, scheduler,
            trigger](const core::PatrolScope& scope) -> absl::StatusOr<std::string> {
      absl::StatusOr<core::PatrolBegin> begun = patrol->Begin(scope, trigger);
      if (!begun.ok()) {
        return begun.status();
      }
      if (!begun->ticket.has_value()) {
        return absl::FailedPreconditionError(
            absl::StrCat("Patrol run ", begun->running_run_id, " of this scope is running"));
      }
      std::string run_id = begun->ticket->run_id;
      if (!scheduler->Enqueue(*std::move(begun->ticket))) {
        return absl::UnavailableError("the server is shutting down");
      }
      return run_id;
    };
  };
  alerts = std::make_unique<core::AlertIntake>(*fleet, *findings, clock,
                                               start_run(core::PatrolTrigger::kAlert));
  core::EventTriggerOptions trigger_options;
  trigger_options.window = config.patrol_event_window;
  trigger_options.cooldown = config.patrol_event_cooldown;
  trigger_options.max_runs_per_hour = static_cast<int>(config.patrol_event_runs_per_hour);
  triggers = std::make_unique<core::PatrolEventTrigger>(
      clock, start_run(core::PatrolTrigger::kEvent), trigger_options);
  if (config.patrol_event_runs_per_hour > 0) {
    changes->SetTrigger(triggers.get());
  }
  // An aggregate of references: brace-initialized here (make_unique cannot, before C++20
  // parenthesized aggregates reach every compiler CI uses).
  context.reset(new ServerContext{config,  // NOLINT(modernize-make-unique): see above
                                  clock,
                                  *fleet,
                                  *actions,
                                  *storage->operator_state,
                                  *storage->sessions,
                                  *storage->tokens,
                                  *action_service,
                                  *findings,
                                  *views,
                                  *ai,
                                  *runs,
                                  levels,
                                  *bus,
                                  *metrics,
                                  registry,
                                  *patrol,
                                  *patrol_runs,
                                  *scheduler,
                                  *storage->database,
                                  agent_hub.get(),
                                  *history,
                                  *patrol_stream,
                                  *storage->audit,
                                  *storage->notification_channels,
                                  *storage->notifications,
                                  *notification_sender,
                                  *alerts,
                                  *triggers});
  authenticator = std::make_unique<http::TokenAuthenticator>(*storage->tokens, clock);
  console_sessions = std::make_unique<http::ConsoleSessions>(*authenticator, clock);
  http::Router router;
  PULSE_RETURN_IF_ERROR(BindAgentRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindFindingRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindActionRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindAssistantRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindPatrolRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindTokenRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindHostAgentRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindConsoleRoutes(router, *context, *console_sessions));
  PULSE_RETURN_IF_ERROR(BindSettingsRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindNoteRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindNotificationRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindAlertRoutes(router, *context));
  PULSE_RETURN_IF_ERROR(BindMetricsRoutes(router, *context));
  // Every row of the surface table has a handler and every handler is a row.
  PULSE_RETURN_IF_ERROR(router.CheckCoversSurface());
  http::HttpServerOptions options;
  options.console_sessions = console_sessions.get();
  // The reads an event loop answers itself (http_server.h, loop_routes; docs/server.md): views
  // over the stores, and the fleet context when every fleet source lists from memory (the demo
  // and the host agents). Docker, Proxmox and the local host may call out or read files, so the
  // fleet context over them runs on the handler pool. A write in any of these (a token's use
  // recorded, an expired plan swept) sends the request on to the pool.
  options.loop_routes = {"get_patrol_control_status",
                         "get_operations_loop_status",
                         "list_findings",
                         "list_actions",
                         "get_action",
                         "get_operator_state"};
  if (fleet->ListsFromMemory()) {
    options.loop_routes.emplace_back("get_fleet_context");
  }
  options.host = config.listen.host;
  options.port = config.listen.port;
  // Every stream may come from one address (a proxy, the web console's host).
  options.max_connections_per_peer = options.max_connections;
  options.max_subscription_streams = config.max_event_streams;
  options.max_run_streams = config.max_run_streams;
  options.max_streams_per_token = config.max_streams_per_token;
  options.max_host_agent_streams = config.max_host_agent_streams;
  options.on_request = [](const http::RequestRecord& record) {
    if (record.status >= 500) {
      LogLine(absl::StrCat(record.method, " ", record.route, " answered ", record.status));
    }
  };
  absl::StatusOr<std::unique_ptr<http::HttpServer>> opened =
      http::HttpServer::Open(std::move(options), std::move(router), *authenticator, &registry);
  if (!opened.ok()) {
    return absl::Status(opened.status().code(), absl::StrCat("--listen ", config.listen.ToString(),
                                                             ": ", opened.status().message()));
  }
  server = *std::move(opened);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ServerApp>> ServerApp::Open(const ServerConfig& config) {
  PULSE_RETURN_IF_ERROR(core::ValidateManifest());
  auto parts = std::make_unique<Parts>();
  parts->config = config;
  PULSE_ASSIGN_OR_RETURN(parts->ids, system::RandomIdSource::Open());
  absl::StatusOr<std::unique_ptr<storage::SqliteStorage>> opened =
      storage::OpenSqliteStorage(config.data_dir);
  if (!opened.ok()) {
    return absl::Status(opened.status().code(), absl::StrCat("--data-dir ", config.data_dir, ": ",
                                                             opened.status().message()));
  }
  parts->storage = *std::move(opened);
  for (const std::string& repair : parts->storage->database->mode_repairs()) {
    LogLine(repair);
  }
  PULSE_RETURN_IF_ERROR(parts->OpenFleet());
  PULSE_RETURN_IF_ERROR(parts->OpenServices());
  absl::Status assistant = parts->OpenAssistant();
  if (!assistant.ok()) {
    return absl::Status(
        assistant.code(),
        config.provider.empty()
            ? absl::StrCat("the stored AI settings: ", assistant.message())
            : absl::StrCat("--provider ", config.provider, ": ", assistant.message()));
  }
  parts->OpenPatrol();
  PULSE_RETURN_IF_ERROR(parts->OpenServer());
  return std::unique_ptr<ServerApp>(new ServerApp(std::move(parts)));
}

ServerApp::ServerApp(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

ServerApp::~ServerApp() { Shutdown(); }

int ServerApp::port() const { return parts_->server->port(); }

http::HttpServerStats ServerApp::http_stats() const { return parts_->server->stats(); }

namespace {

// Whether a source of the fleet reports its resources' changes itself (docker's events, the
// tasks a proxmox-ve source reads): only then does the change publisher need its thread.
bool HasSelfReportingSource(core::Fleet& fleet) {
  for (const core::FleetSourceStatus& source : fleet.SourceStatuses()) {
    if (source.kind == "docker" || source.kind == "proxmox-ve") {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::Status ServerApp::Start() {
  PULSE_RETURN_IF_ERROR(parts_->server->Start());
  parts_->scheduler->Start();
  parts_->notification_sender->Start();
  if (HasSelfReportingSource(*parts_->fleet)) {
    parts_->changes->Start();
  }
  // The recorder copies what docker and proxmox-ve sources keep (fleet_sample_recorder.h).
  if (parts_->recorder->HasRecordedSource()) {
    parts_->recorder->Start();
  }
  return absl::OkStatus();
}

bool ServerApp::Shutdown() {
  Parts& p = *parts_;
  if (p.shut_down) {
    return true;
  }
  p.shut_down = true;
  // Patrol first: its model calls are cancelled and queued runs abandoned (prompt).
  p.scheduler->Stop();
  p.notification_sender->Stop();
  // Runs first, while the server still writes their streams: each ends with error + done.
  bool runs_ended = p.runs->Shutdown(kRunStopGrace);
  p.changes->Stop();
  p.recorder->Stop();
  p.bus->Close();
  p.patrol_stream->Close();
  p.server->Stop();
  if (!runs_ended) {
    // Their streams are gone now; give the runs one more chance to notice.
    runs_ended = p.runs->Shutdown(kRunStopGrace);
  }
  return runs_ended;
}

std::string ServerApp::Describe() const {
  const Parts& p = *parts_;
  ListenAddress bound = p.config.listen;
  bound.port = p.server->port();
  return absl::StrCat("listening on ", bound.ToString(), " (data dir ", p.config.data_dir,
                      ", fleet ", p.config.fleet, ", assistant ",
                      AssistantLabel(p.config, p.ai->Current().get()), ", control level ",
                      std::string(core::ToString(p.config.control_level)), ", patrol ",
                      p.config.patrol_interval > absl::ZeroDuration()
                          ? absl::StrCat("every ", absl::FormatDuration(p.config.patrol_interval),
                                         p.config.patrol_on_start ? ", first run now" : "")
                          : std::string("manual only"),
                      ")");
}

int RunServer(const ServerConfig& config) {
  // Blocked before any thread starts, so every thread inherits the mask and the signals wait
  // for sigwait below instead of killing the process mid-write.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<std::unique_ptr<ServerApp>> app = ServerApp::Open(config);
  if (!app.ok()) {
    LogLine(absl::StrCat("cannot start: ", app.status().message()));
    return 1;
  }
  if (absl::Status started = (*app)->Start(); !started.ok()) {
    LogLine(absl::StrCat("cannot start: ", started.message()));
    return 1;
  }
  const std::string banner =
      absl::StrCat("pulse-server ", PULSE_CORE_VERSION_STRING, ": ", (*app)->Describe(), "\n");
  std::fwrite(banner.data(), 1, banner.size(), stderr);
  int received = 0;
  while (sigwait(&signals, &received) != 0) {
  }
  LogLine(absl::StrCat("received ", received == SIGINT ? "SIGINT" : "SIGTERM",
                       ": stopping runs and connections"));
  if (!(*app)->Shutdown()) {
    // A run still holds the services; the stores have committed every transaction
    // (synchronous=FULL), so leaving without unwinding loses nothing.
    LogLine("some Assistant runs did not stop in time; exiting without waiting for them");
    std::_Exit(1);
  }
  app->reset();
  LogLine("stopped");
  return 0;
}

}  // namespace pulse::server
