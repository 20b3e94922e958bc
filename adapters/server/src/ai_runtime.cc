#include "pulse/adapters/server/ai_runtime.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "pulse/core/status_macros.h"

namespace pulse::server {
namespace {

namespace providers = adapters::providers;
namespace storage = adapters::storage;

constexpr char kPreflightTool[] = "pulse_preflight_echo";
constexpr char kPreflightSchema[] =
    R"({"type":"object","properties":{"word":{"type":"string"}},"required":["word"],)"
    R"("additionalProperties":false})";
// Where a key set at runtime comes from, for the missing-key message.
constexpr char kRuntimeKeySource[] = "api_key in PUT /api/settings/ai";
// Enough for one tool call; a model that writes prose instead is cut short, which is the answer.
constexpr int kPreflightMaxTokens = 128;

// The stored key; "" when none is stored.
absl::StatusOr<std::string> StoredKey(const storage::SqliteCredentialStore& credentials) {
  absl::StatusOr<std::string> key = credentials.Get(storage::kAiSettingsCredential);
  if (absl::IsNotFound(key.status())) {
    return std::string();
  }
  return key;
}

storage::StoredAiSettings ToStored(const AiSettings& s) {
  storage::StoredAiSettings out;
  out.provider = s.provider;
  out.base_url = s.base_url;
  out.model = s.model;
  out.patrol_model = s.patrol_model;
  out.monthly_budget_usd = s.monthly_budget_usd;
  out.session_budget_usd = s.session_budget_usd;
  out.updated_at = s.updated_at.value_or(absl::UnixEpoch());
  out.updated_by = s.updated_by;
  return out;
}

// "old -> new" for the audit, or nothing when the field did not change.
void Changed(std::map<std::string, std::string>& details, const char* field,
             const std::string& before, const std::string& after) {
  if (before != after) {
    details[field] =
        absl::StrCat(before.empty() ? "(none)" : before, " -> ", after.empty() ? "(none)" : after);
  }
}

}  // namespace

std::string_view ToString(ModelPreflight::Outcome outcome) {
  switch (outcome) {
    case ModelPreflight::Outcome::kOk:
      return "ok";
    case ModelPreflight::Outcome::kNoToolCall:
      return "no_tool_call";
    case ModelPreflight::Outcome::kProviderFailed:
      return "provider_failed";
  }
  return "provider_failed";
}

std::string ModelIdentity(const std::string& provider, const std::string& model) {
  return absl::StrCat(provider, ":", model);
}

ModelPreflight RunToolPreflight(const providers::ProviderConfig& config, absl::Time now) {
  ModelPreflight out;
  out.model = ModelIdentity(config.provider, config.model);
  out.checked_at = now;
  providers::ProviderConfig bounded = config;
  bounded.timeouts = kSettingsProbeTimeouts;
  absl::StatusOr<std::unique_ptr<core::LlmProvider>> provider = providers::MakeProvider(bounded);
  if (!provider.ok()) {
    out.outcome = ModelPreflight::Outcome::kProviderFailed;
    out.message = absl::StrCat("the provider could not be set up: ", provider.status().message());
    return out;
  }
  core::LlmRequest request;
  request.messages.push_back(core::Message::System(
      "This is a check that tool calls work. Call the tool pulse_preflight_echo with the word "
      "\"ready\" and nothing else."));
  request.messages.push_back(core::Message::User("Call pulse_preflight_echo now."));
  request.tools.push_back(core::ToolDefinition{
      kPreflightTool, "Echoes a word back; used to check that tool calls work.", kPreflightSchema});
  request.max_tokens = kPreflightMaxTokens;
  bool called = false;
  std::string other_tool;
  const absl::Status streamed =
      (*provider)->Stream(request, [&](const core::LlmStreamEvent& event) {
        if (event.kind == core::LlmStreamEvent::Kind::kToolCall) {
          if (event.tool_call.name == kPreflightTool) {
            called = true;
          } else {
            other_tool = event.tool_call.name;
          }
        }
      });
  if (!streamed.ok()) {
    // Provider errors name neither the key nor the endpoint (provider_factory.h).
    out.outcome = ModelPreflight::Outcome::kProviderFailed;
    out.message = absl::StrCat("the provider failed: ", streamed.message());
  } else if (called) {
    out.outcome = ModelPreflight::Outcome::kOk;
    out.message = "the model called the tool";
  } else {
    out.outcome = ModelPreflight::Outcome::kNoToolCall;
    out.message = other_tool.empty() ? "the model answered without calling the tool"
                                     : "the model called a tool it was not offered";
  }
  return out;
}

MonthlySpend::MonthlySpend(storage::SqliteAiSettingsStore& store, const core::Clock& clock,
                           std::function<double()> cap)
    : store_(store), clock_(clock), cap_(std::move(cap)) {}

std::string MonthlySpend::MonthNow() const {
  return absl::FormatTime("%Y-%m", clock_.Now(), absl::UTCTimeZone());
}

bool MonthlySpend::Capped() const { return cap_() > 0; }

absl::StatusOr<double> MonthlySpend::TotalLocked(const std::string& month) {
  if (month == month_) {
    return total_;
  }
  if (!month_.empty() && unsaved_ > 0 && store_.AddSpend(month_, unsaved_).ok()) {
    unsaved_ = 0;  // the last month's unsaved cost, saved late (else it is lost with the month)
  }
  PULSE_ASSIGN_OR_RETURN(double stored, store_.MonthSpend(month));
  month_ = month;
  total_ = stored;
  unsaved_ = 0;
  return total_;
}

absl::Status MonthlySpend::Admit() {
  const double cap = cap_();
  if (cap <= 0) {
    return absl::OkStatus();
  }
  const std::string month = MonthNow();
  absl::MutexLock lock(&mu_);
  absl::StatusOr<double> total = TotalLocked(month);
  if (!total.ok()) {
    return absl::UnavailableError(
        "This month's model spend cannot be read, so the monthly spend cap cannot be checked: "
        "no call is made.");
  }
  if (*total >= cap) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "This month's metered model spend, %.4f USD, has reached the monthly spend cap of %.2f "
        "USD (AI settings). It resets on the first of next month (UTC), or raise the cap.",
        *total, cap));
  }
  return absl::OkStatus();
}

void MonthlySpend::Record(double cost_usd) {
  if (!(cost_usd > 0)) {
    return;
  }
  const std::string month = MonthNow();
  absl::MutexLock lock(&mu_);
  if (!TotalLocked(month).ok()) {
    // Unreadable now: this call's cost is not counted (a store that cannot be read cannot be
    // added to either); Admit fails closed meanwhile when a cap is set, and the total is loaded
    // afresh on the next call.
    month_.clear();
    return;
  }
  total_ += cost_usd;
  unsaved_ += cost_usd;
  if (store_.AddSpend(month_, unsaved_).ok()) {
    unsaved_ = 0;
  }
}

absl::StatusOr<std::pair<std::string, double>> MonthlySpend::ThisMonth() {
  const std::string month = MonthNow();
  absl::MutexLock lock(&mu_);
  PULSE_ASSIGN_OR_RETURN(double total, TotalLocked(month));
  return std::make_pair(month, total);
}

AiRuntime::AiRuntime(storage::SqliteAiSettingsStore& store,
                     storage::SqliteCredentialStore& credentials, core::AuditLog& audit,
                     const core::Clock& clock, AiEngineBuilder build)
    : store_(store),
      credentials_(credentials),
      audit_(audit),
      clock_(clock),
      build_(std::move(build)),
      spend_(store, clock, [this] { return Settings().monthly_budget_usd; }) {}

void AiRuntime::PickStartupModel(AiSettings& s, const std::string& key) const {
  providers::ProviderConfig listing;
  listing.provider = s.provider;
  listing.base_url = s.base_url;
  listing.api_key = key;
  listing.timeouts = kStartupListTimeouts;
  absl::StatusOr<std::vector<providers::ModelInfo>> models = providers::ListModels(listing);
  if (models.ok()) {
    if (std::optional<std::string> chat = providers::FirstChatModel(*models); chat.has_value()) {
      s.model = *std::move(chat);
      s.model_note = "the first chat model the provider lists";
      return;
    }
    s.model_note = "the provider lists no chat model, so the registry's default";
    return;
  }
  // The registry's default is the fallback (the build reports a provider that has none): a
  // provider that is down at start-up must not keep the server from starting.
  s.model_note = absl::StrCat("the provider's model list could not be read (",
                              models.status().message(), "), so the registry's default");
}

absl::Status AiRuntime::Open(const AiStartup& startup) {
  PULSE_ASSIGN_OR_RETURN(std::optional<storage::StoredAiSettings> stored, store_.Load());
  AiSettings s;
  std::string key;
  const bool stored_applies =
      stored.has_value() && (startup.provider.empty() || stored->provider == startup.provider);
  if (stored_applies) {
    PULSE_ASSIGN_OR_RETURN(key, StoredKey(credentials_));
    s.provider = stored->provider;
    s.base_url = stored->base_url;
    s.model = stored->model;
    s.patrol_model = stored->patrol_model;
    s.updated_at = stored->updated_at;
    s.updated_by = stored->updated_by;
  }
  if (stored.has_value()) {
    s.monthly_budget_usd = stored->monthly_budget_usd;
    s.session_budget_usd = stored->session_budget_usd;
  }
  if (!startup.provider.empty()) {
    s.provider = startup.provider;
    if (!startup.base_url.empty() || !stored_applies) {
      s.base_url = startup.base_url;
    }
    if (!startup.model.empty() || !stored_applies) {
      s.model = startup.model;
    }
    if (!startup.api_key.empty()) {
      key = startup.api_key;
    }
  }
  s.api_key_set = !key.empty();
  if (!s.provider.empty() && s.model.empty()) {
    PickStartupModel(s, key);
  }
  std::shared_ptr<AiEngine> engine;
  if (!s.provider.empty()) {
    PULSE_ASSIGN_OR_RETURN(engine, build_(s, key, startup.key_sources));
    s = engine->settings;
  }
  absl::MutexLock lock(&mu_);
  settings_ = std::move(s);
  api_key_ = std::move(key);
  engine_ = std::move(engine);
  return absl::OkStatus();
}

std::shared_ptr<AiEngine> AiRuntime::Current() const {
  absl::MutexLock lock(&mu_);
  return engine_;
}

AiSettings AiRuntime::Settings() const {
  absl::MutexLock lock(&mu_);
  return settings_;
}

absl::StatusOr<AiSettings> AiRuntime::Update(const AiSettingsChange& change,
                                             const core::ActionActor& actor) {
  absl::MutexLock serialized(&update_mu_);
  AiSettings before;
  std::string key;
  {
    absl::MutexLock lock(&mu_);
    before = settings_;
    key = api_key_;
  }
  AiSettings next = before;
  const bool provider_changed = change.provider.has_value() && *change.provider != before.provider;
  bool key_changed = false;
  if (provider_changed) {
    // Nothing of the old provider's carries over; above all its key goes to no one else.
    next.provider = *change.provider;
    next.base_url.clear();
    next.model.clear();
    next.patrol_model.clear();
    key_changed = !key.empty();
    key.clear();
  }
  if (change.base_url.has_value()) {
    next.base_url = *change.base_url;
  }
  if (change.model.has_value()) {
    next.model = *change.model;
  }
  if (change.patrol_model.has_value()) {
    next.patrol_model = *change.patrol_model;
  }
  if (change.api_key.has_value()) {
    key_changed = key_changed || change.api_key->value_or("") != key;
    key = change.api_key->value_or("");
  }
  if (change.monthly_budget_usd.has_value()) {
    next.monthly_budget_usd = *change.monthly_budget_usd;
  }
  if (change.session_budget_usd.has_value()) {
    next.session_budget_usd = *change.session_budget_usd;
  }
  if (next.provider.empty()) {
    return absl::InvalidArgumentError("provider: no provider is set; name one");
  }
  if (provider_changed || change.model.has_value()) {
    next.model_note.clear();  // the start-up choice no longer describes the model
  }
  const bool model_picked = next.model.empty();
  if (model_picked) {
    // The provider's own list at configuration time, not an id baked into this release.
    providers::ProviderConfig listing;
    listing.provider = next.provider;
    listing.base_url = next.base_url;
    listing.api_key = key;
    listing.timeouts = kSettingsProbeTimeouts;
    absl::StatusOr<std::vector<providers::ModelInfo>> models = providers::ListModels(listing);
    if (absl::IsInvalidArgument(models.status())) {
      return models.status();
    }
    if (!models.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("model: none was given and the provider's model list could not be read (",
                       models.status().message(), "); name a model"));
    }
    if (models->empty()) {
      return absl::InvalidArgumentError(
          "model: none was given and the provider lists no model; name one");
    }
    std::optional<std::string> chat = providers::FirstChatModel(*models);
    if (!chat.has_value()) {
      return absl::InvalidArgumentError(
          "model: none was given and the provider lists no chat model; name one");
    }
    next.model = *std::move(chat);
  }
  next.api_key_set = !key.empty();
  next.updated_at = clock_.Now();
  next.updated_by = actor.id;
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<AiEngine> engine, build_(next, key, kRuntimeKeySource));
  next = engine->settings;
  // Audited before anything is stored: a change the audit cannot record is not made.
  PULSE_RETURN_IF_ERROR(AuditChange(before, next, actor, key_changed));
  if (key_changed) {
    absl::Status sealed =
        key.empty() ? credentials_.Delete(storage::kAiSettingsCredential)
                    : credentials_.Put(storage::kAiSettingsCredential, key, *next.updated_at);
    if (!sealed.ok() && !absl::IsNotFound(sealed)) {
      return absl::UnavailableError(absl::StrCat("the credential store: ", sealed.message()));
    }
  }
  if (absl::Status saved = store_.Save(ToStored(next)); !saved.ok()) {
    return absl::UnavailableError(absl::StrCat("the settings store: ", saved.message()));
  }
  {
    absl::MutexLock lock(&mu_);
    settings_ = next;
    api_key_ = key;
    engine_ = engine;
  }
  // The preflight of each model this change set, on the engine now in force.
  const std::string chat_id = ModelIdentity(next.provider, next.model);
  if (provider_changed || model_picked || change.model.has_value() || change.base_url.has_value() ||
      change.api_key.has_value()) {
    RunPreflight(engine->config);
  }
  const std::string patrol_id = ModelIdentity(next.provider, next.EffectivePatrolModel());
  if (change.patrol_model.has_value() && patrol_id != chat_id) {
    RunPreflight(engine->PatrolConfig());
  }
  return next;
}

ModelPreflight AiRuntime::RunPreflight(const providers::ProviderConfig& config) {
  ModelPreflight result = RunToolPreflight(config, clock_.Now());
  absl::MutexLock lock(&mu_);
  preflights_[result.model] = result;
  return result;
}

std::vector<ModelPreflight> AiRuntime::Preflights() const {
  absl::MutexLock lock(&mu_);
  std::vector<ModelPreflight> out;
  for (const auto& [id, result] : preflights_) {
    out.push_back(result);
  }
  return out;
}

std::optional<ModelPreflight> AiRuntime::PatrolPreflight() const {
  absl::MutexLock lock(&mu_);
  if (settings_.provider.empty()) {
    return std::nullopt;
  }
  auto it = preflights_.find(ModelIdentity(settings_.provider, settings_.EffectivePatrolModel()));
  if (it == preflights_.end()) {
    return std::nullopt;
  }
  return it->second;
}

core::PatrolModelChoice AiRuntime::PatrolModelFor(core::PatrolTrigger trigger) {
  std::shared_ptr<AiEngine> engine = Current();
  if (engine == nullptr || !engine->patrol.has_value()) {
    return {};
  }
  if (!spend_.Admit().ok()) {
    return {nullptr, std::string(core::kSkipSpendCapReached)};
  }
  const std::string id =
      ModelIdentity(engine->settings.provider, engine->settings.EffectivePatrolModel());
  std::optional<ModelPreflight> check;
  if (trigger == core::PatrolTrigger::kScheduled) {
    check = RunPreflight(engine->PatrolConfig());
  } else {
    absl::MutexLock lock(&mu_);
    if (auto it = preflights_.find(id); it != preflights_.end()) {
      check = it->second;
    }
  }
  if (check.has_value() && check->outcome != ModelPreflight::Outcome::kOk) {
    return {nullptr, std::string(check->outcome == ModelPreflight::Outcome::kNoToolCall
                                     ? kSkipModelCannotCallTools
                                     : kSkipPreflightFailed)};
  }
  // The run holds the whole engine: a change meanwhile does not pull its model away.
  const core::PatrolModel* model = &*engine->patrol;
  return {std::shared_ptr<const core::PatrolModel>(std::move(engine), model), ""};
}

absl::Status AiRuntime::AuditChange(const AiSettings& before, const AiSettings& after,
                                    const core::ActionActor& actor, bool key_changed) {
  core::AuditEntry entry;
  entry.at = after.updated_at.value_or(clock_.Now());
  entry.category = "settings";
  entry.event = "ai_settings_changed";
  entry.subject_id = "ai";
  entry.actor_kind = std::string(core::ToString(actor.kind));
  entry.actor_id = actor.id;
  entry.message = "the AI settings were changed";
  Changed(entry.details, "provider", before.provider, after.provider);
  Changed(entry.details, "base_url", before.base_url, after.base_url);
  Changed(entry.details, "model", before.model, after.model);
  Changed(entry.details, "patrol_model", before.patrol_model, after.patrol_model);
  Changed(entry.details, "monthly_budget_usd", absl::StrCat(before.monthly_budget_usd),
          absl::StrCat(after.monthly_budget_usd));
  Changed(entry.details, "session_budget_usd", absl::StrCat(before.session_budget_usd),
          absl::StrCat(after.session_budget_usd));
  if (key_changed) {
    // Whether a key is set, never the key. In the message: the audit log redacts any detail
    // whose name names a secret, this one included.
    entry.message = after.api_key_set ? "the AI settings were changed; the API key was replaced"
                                      : "the AI settings were changed; the API key was removed";
  }
  absl::Status appended = audit_.Append(entry);
  if (!appended.ok()) {
    return absl::UnavailableError(absl::StrCat("the audit log: ", appended.message()));
  }
  return absl::OkStatus();
}

}  // namespace pulse::server
