#include "chat_loop_direct.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/adapters/providers/provider_factory.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/adapters/system/random_id_source.h"
#include "pulse/adapters/system/system_clock.h"
#include "pulse/adapters/system/thread_pool_task_runner.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/loop/loop_assembly.h"
#include "pulse/core/patrol/triage.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/ports/event_sink.h"
#include "pulse/core/status_macros.h"

namespace pulse::bench {

namespace agents = adapters::agents;
namespace providers = adapters::providers;
namespace storage = adapters::storage;
namespace system = adapters::system;

struct DirectChatLoop::Parts {
  system::SystemClock clock;
  std::unique_ptr<storage::SqliteStorage> stores;
  std::unique_ptr<agents::DemoFleet> fleet;
  std::unique_ptr<agents::DemoFleetMetricsHistory> history;
  std::unique_ptr<core::ActionService> actions;
  std::unique_ptr<core::TriageFindingVerifier> verifier;
  std::unique_ptr<core::FindingsService> findings;
  std::unique_ptr<system::ThreadPoolTaskRunner> tools;
  std::unique_ptr<system::RandomIdSource> ids;
  std::unique_ptr<core::LlmProvider> provider;
  std::unique_ptr<core::LoopAssembly> chat;
};

namespace {

// pulse-server's tool threads and system prompt (server_app.cc), so the provider requests are
// the server's.
constexpr std::size_t kToolThreads = 4;
constexpr std::string_view kSystemPrompt =
    "You are Pulse Assistant, the operations assistant of this Pulse server. Investigate the "
    "fleet with the tools you are offered before you answer, and base every statement on what "
    "they returned. Infrastructure changes go only through the governed control tool, which "
    "plans an action that a human or policy must approve; never claim a change happened until "
    "a tool result shows it, and after a change read the resource again to verify it. Answer "
    "concisely and say plainly when you could not find something out.";

// What the server's event stream would carry, kept as the server keeps nothing but a count.
class CountingSink final : public core::EventSink {
 public:
  void Emit(const core::LoopEvent& event) override {
    absl::MutexLock lock(&mu_);
    if (event.type == core::LoopEventType::kToolEnd) {
      ++tool_calls_;
      tool_errors_ += event.data_json.find(R"("success":false)") != std::string::npos ? 1 : 0;
    } else if (event.type == core::LoopEventType::kError) {
      error_ = event.data_json;
    }
  }
  int tool_calls() const {
    absl::MutexLock lock(&mu_);
    return tool_calls_;
  }
  int tool_errors() const {
    absl::MutexLock lock(&mu_);
    return tool_errors_;
  }
  std::string error() const {
    absl::MutexLock lock(&mu_);
    return error_;
  }

 private:
  mutable absl::Mutex mu_;
  int tool_calls_ = 0;
  int tool_errors_ = 0;
  std::string error_;
};

}  // namespace

DirectChatLoop::DirectChatLoop(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}
DirectChatLoop::~DirectChatLoop() = default;

absl::StatusOr<std::unique_ptr<DirectChatLoop>> DirectChatLoop::Open(
    const std::string& data_dir, const std::string& provider_base_url) {
  auto p = std::make_unique<Parts>();
  PULSE_ASSIGN_OR_RETURN(p->stores, storage::OpenSqliteStorage(data_dir));
  agents::DemoFleetOptions fleet_options;
  fleet_options.clock = &p->clock;
  PULSE_ASSIGN_OR_RETURN(p->fleet, agents::DemoFleet::OpenDefault(fleet_options));
  p->history = std::make_unique<agents::DemoFleetMetricsHistory>(*p->fleet);
  p->actions = std::make_unique<core::ActionService>(
      *p->stores->actions, *p->fleet, *p->stores->operator_state, *p->stores->audit, p->clock);
  p->verifier = std::make_unique<core::TriageFindingVerifier>(
      *p->fleet, *p->history, p->clock, core::TriageThresholds{}, p->stores->patrol_runs.get());
  p->findings = std::make_unique<core::FindingsService>(
      *p->stores->findings, p->clock, *p->verifier, *p->history, p->stores->operator_state.get());
  PULSE_ASSIGN_OR_RETURN(p->tools, system::ThreadPoolTaskRunner::Open(kToolThreads));
  PULSE_ASSIGN_OR_RETURN(p->ids, system::RandomIdSource::Open());

  providers::ProviderConfig pc;
  pc.provider = "openai-compatible";
  pc.base_url = provider_base_url;
  pc.model = "test-model";
  PULSE_ASSIGN_OR_RETURN(p->provider, providers::MakeProvider(pc));
  core::LoopAssemblyOptions options;
  options.flavour = core::LoopFlavour::kChat;
  options.loop.system_prompt = std::string(kSystemPrompt);
  PULSE_ASSIGN_OR_RETURN(options.loop.route, providers::ResolveRoute(pc));
  const core::LoopPorts ports{*p->provider,    *p->tools, p->clock,  *p->stores->sessions,
                              *p->actions,     *p->ids,   *p->fleet, *p->findings,
                              p->history.get()};
  PULSE_ASSIGN_OR_RETURN(p->chat, core::LoopAssembly::Assemble(ports, std::move(options)));
  return std::unique_ptr<DirectChatLoop>(new DirectChatLoop(std::move(p)));
}

LoopSessionResult DirectChatLoop::RunSession(const std::string& message) {
  core::PolicyInputs inputs;
  inputs.scopes = core::ScopeSet::All();
  inputs.configured_max = core::ControlLevel::kReadOnly;  // pulse-server's default
  inputs.profile = core::FlavourProfile(core::LoopFlavour::kChat);
  core::RunRequest request{"", message, core::InvocationPolicy::Create(inputs), nullptr,
                           core::SessionOwner{"bench-token", "bench"}};
  CountingSink sink;
  absl::StatusOr<core::RunOutcome> outcome = parts_->chat->loop().Run(request, sink);
  LoopSessionResult result;
  result.tool_calls = sink.tool_calls();
  result.tool_errors = sink.tool_errors();
  if (!outcome.ok()) {
    result.why = absl::StrCat("loop: ", outcome.status().ToString());
  } else if (outcome->end != core::RunEnd::kAnswered || !sink.error().empty()) {
    result.why = absl::StrCat("not answered: ", std::string(core::ToString(outcome->end)), " ",
                              sink.error());
  } else {
    result.answered = true;
  }
  return result;
}

}  // namespace pulse::bench
