// AiRuntime: the AI settings pulse-server runs with (docs/server.md, "AI settings at runtime")
// and the live objects built from them — the chat loop and Patrol's model — as one immutable
// AiEngine that a change replaces whole. A run takes the engine in force when it starts
// (Current, PatrolModelFor) and holds it to the end, so a change reaches the next run and runs
// in flight finish on the old engine, which is destroyed when the last of them lets go.
// Settings come from the start-up configuration and the settings stored by an earlier change
// (the rule is in Open); a change is stored (the key sealed in the credential store), then
// swapped in, then audited. The key is never logged, audited or answered.
// Thread-safety: every method may be called from any thread; changes are serialized.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/providers/provider_factory.h"
#include "pulse/adapters/storage/sqlite_ai_settings_store.h"
#include "pulse/adapters/storage/sqlite_credential_store.h"
#include "pulse/core/loop/loop_assembly.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/patrol/patrol_service.h"
#include "pulse/core/ports/audit_log.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/spend_guard.h"

namespace pulse::server {

// The settings in force, without the key.
struct AiSettings {
  std::string provider;           // registry name; "" = no provider (the Assistant is off)
  std::string base_url;           // "" = the provider's default
  std::string model;              // the chat model
  std::string patrol_model;       // "" = the chat model
  double monthly_budget_usd = 0;  // 0 = no cap
  double session_budget_usd = 0;  // 0 = no cap
  bool api_key_set = false;
  std::optional<absl::Time> updated_at;  // unset: start-up settings no one changed
  std::string updated_by;                // token id of the last change
  // How the model was chosen when no one named it (start-up without a model: the provider's
  // list, or the registry's default and why); "" when it was named.
  std::string model_note;

  // The model Patrol runs with: patrol_model, else model.
  const std::string& EffectivePatrolModel() const {
    return patrol_model.empty() ? model : patrol_model;
  }
};

// A PUT /api/settings/ai body, decoded: an unset member is unchanged.
struct AiSettingsChange {
  std::optional<std::string> provider;
  std::optional<std::string> base_url;
  std::optional<std::string> model;
  std::optional<std::string> patrol_model;
  // Set to a key: replace it; set to nullopt: remove it; unset: unchanged.
  std::optional<std::optional<std::string>> api_key;
  std::optional<double> monthly_budget_usd;
  std::optional<double> session_budget_usd;
};

// The outcome of one tool-call preflight of a model: one cheap request that offers a trivial
// tool and asks the model to call it (RunToolPreflight).
struct ModelPreflight {
  enum class Outcome { kOk, kNoToolCall, kProviderFailed };
  std::string model;  // provider:model
  Outcome outcome = Outcome::kOk;
  std::string message;  // what happened, for an operator; never the key
  absl::Time checked_at;
};
// Wire: ok, no_tool_call, provider_failed.
std::string_view ToString(ModelPreflight::Outcome outcome);

// The live objects of one configuration. Built by an AiEngineBuilder; immutable afterwards
// except that the loops run.
struct AiEngine {
  AiSettings settings;
  adapters::providers::ProviderConfig config;  // the chat model's, with the key
  core::ModelRoute route;
  adapters::providers::Destination destination;
  std::string host;  // the endpoint's host, for the start-up line
  std::unique_ptr<core::LlmProvider> provider;
  std::unique_ptr<core::LoopAssembly> chat;
  // Patrol's own provider when its model differs from the chat model; null: `provider`.
  std::unique_ptr<core::LlmProvider> patrol_provider;
  std::optional<core::PatrolModel> patrol;

  core::LlmProvider& PatrolProvider() const {
    return patrol_provider != nullptr ? *patrol_provider : *provider;
  }
  // `config` with Patrol's model.
  adapters::providers::ProviderConfig PatrolConfig() const {
    adapters::providers::ProviderConfig patrol_config = config;
    patrol_config.model = settings.EffectivePatrolModel();
    return patrol_config;
  }
};

// Builds the engine of `settings` with `api_key`; `key_sources` is where a missing key should
// come from (ProviderConfig::key_sources). InvalidArgument for settings the provider registry
// refuses (provider_factory.h's messages; never the key). The engine's settings carry the
// model the registry resolved.
using AiEngineBuilder = std::function<absl::StatusOr<std::shared_ptr<AiEngine>>(
    const AiSettings& settings, const std::string& api_key, const std::string& key_sources)>;

// The start-up configuration: flags, else pulse.json, else nothing (server_config.h).
struct AiStartup {
  std::string provider;
  std::string base_url;
  std::string model;
  std::string api_key;      // from the environment
  std::string key_sources;  // the environment variables it is read from
};

// The timeouts of the settings' own provider requests (the tool-call preflight, the model
// list GET answers and a change picks from): a silent endpoint holds a PUT, a GET or a
// scheduled Patrol run no longer than this.
inline constexpr adapters::providers::HttpTimeouts kSettingsProbeTimeouts{
    absl::Seconds(5), absl::Seconds(20), absl::Seconds(20), absl::Seconds(30)};

// The model-list request at start-up when no model is configured: short, so a silent
// provider delays the server's start by seconds, not minutes.
inline constexpr adapters::providers::HttpTimeouts kStartupListTimeouts{
    absl::Seconds(2), absl::Seconds(5), absl::Seconds(5), absl::Seconds(8)};

// Why a Patrol run has no model although a provider is set (PatrolModelChoice).
inline constexpr std::string_view kSkipModelCannotCallTools = "model_cannot_call_tools";
inline constexpr std::string_view kSkipPreflightFailed = "model_preflight_failed";

// The monthly spend cap (AiSettings::monthly_budget_usd) as the loop's SpendGuard: the metered
// spend of the calendar month (UTC) across every chat and Patrol run, kept in the ai_spend
// table and cached here. A cap of 0 records the spend but refuses nothing.
class MonthlySpend final : public core::SpendGuard {
 public:
  // `cap` answers the cap in force (0 = none); called without MonthlySpend's lock held.
  MonthlySpend(adapters::storage::SqliteAiSettingsStore& store, const core::Clock& clock,
               std::function<double()> cap);

  bool Capped() const override;
  // ResourceExhausted when this month's spend has reached the cap (the message names both and
  // when it resets); Unavailable when a cap is set and the month's total cannot be read.
  absl::Status Admit() override;
  // Adds to the month's total; a total that cannot be saved now is saved with the next call.
  void Record(double cost_usd) override;

  // This month's spend ("YYYY-MM" UTC, and its total); the store's error when unreadable.
  absl::StatusOr<std::pair<std::string, double>> ThisMonth();

 private:
  // The total of `month`, loading it when the month changed. Errors: the store's.
  absl::StatusOr<double> TotalLocked(const std::string& month) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string MonthNow() const;

  adapters::storage::SqliteAiSettingsStore& store_;
  const core::Clock& clock_;
  const std::function<double()> cap_;
  absl::Mutex mu_;
  std::string month_ ABSL_GUARDED_BY(mu_);   // "" until loaded
  double total_ ABSL_GUARDED_BY(mu_) = 0;    // month_'s total, unsaved cost included
  double unsaved_ ABSL_GUARDED_BY(mu_) = 0;  // recorded but not yet in the store
};

class AiRuntime {
 public:
  AiRuntime(adapters::storage::SqliteAiSettingsStore& store,
            adapters::storage::SqliteCredentialStore& credentials, core::AuditLog& audit,
            const core::Clock& clock, AiEngineBuilder build);

  // Settles the settings to start with and builds their engine. The rule: a provider given
  // at start-up (flag or pulse.json) wins, with its base URL, model and key where given; what
  // it leaves unset comes from the stored settings when they name the same provider. Without
  // a start-up provider the stored settings apply whole. The Patrol model and the spend caps
  // only ever come from the stored settings. A provider without a model, after that, gets the
  // first chat model its list names (kStartupListTimeouts), else the registry's default
  // (AiSettings::model_note says which). Errors: the store's; InvalidArgument when the
  // resulting settings do not build (the message names the field).
  [[nodiscard]] absl::Status Open(const AiStartup& startup);

  // The engine in force; null when no provider is set.
  std::shared_ptr<AiEngine> Current() const;
  AiSettings Settings() const;

  // Applies `change` for `actor`: merges it into the settings in force (a new provider
  // without a base URL, model or key starts from none of the old one's: a key is never sent
  // to another provider), picks a model from the provider's list when none is given (the
  // first the endpoint lists), builds the engine, stores the settings and the key, swaps the
  // engine in, audits the change and runs the tool-call preflight of each model the change
  // set. Nothing changes on an error: InvalidArgument for settings that do not build (or no
  // model and an empty list), FailedPrecondition when no model is given and the provider's
  // list cannot be read, Unavailable when the audit log or a store fails.
  [[nodiscard]] absl::StatusOr<AiSettings> Update(const AiSettingsChange& change,
                                                  const core::ActionActor& actor);

  // The last preflight of each model (provider:model), newest result per model.
  std::vector<ModelPreflight> Preflights() const;
  // The last preflight of Patrol's model in force; nullopt when none ran.
  std::optional<ModelPreflight> PatrolPreflight() const;

  // Patrol's model for a run (PatrolServiceOptions::model_source): none without a provider;
  // for a scheduled run the model is checked first, and one that fails the check is not used
  // (kSkipModelCannotCallTools or kSkipPreflightFailed). Manual runs use the last result.
  // When the monthly spend cap is reached, no model either (core::kSkipSpendCapReached).
  core::PatrolModelChoice PatrolModelFor(core::PatrolTrigger trigger);

  // The monthly spend cap every engine's runs are held to (LoopOptions::spend_guard).
  MonthlySpend& Spend() { return spend_; }

 private:
  ModelPreflight RunPreflight(const adapters::providers::ProviderConfig& config);
  // Start-up without a model: the first chat model the provider lists, else (the list cannot
  // be read or has none) the registry's default; says which in s.model_note.
  void PickStartupModel(AiSettings& s, const std::string& key) const;
  absl::Status AuditChange(const AiSettings& before, const AiSettings& after,
                           const core::ActionActor& actor, bool key_changed);

  adapters::storage::SqliteAiSettingsStore& store_;
  adapters::storage::SqliteCredentialStore& credentials_;
  core::AuditLog& audit_;
  const core::Clock& clock_;
  const AiEngineBuilder build_;

  absl::Mutex update_mu_;  // one change at a time (taken before mu_)
  mutable absl::Mutex mu_;
  AiSettings settings_ ABSL_GUARDED_BY(mu_);
  std::string api_key_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<AiEngine> engine_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ModelPreflight> preflights_ ABSL_GUARDED_BY(mu_);
  MonthlySpend spend_;
};

// Asks the model of `config` to call a trivial tool, once, over a provider of its own with
// kSettingsProbeTimeouts: kOk when the response calls the tool, kNoToolCall when it answers
// without calling it, kProviderFailed when the request failed.
ModelPreflight RunToolPreflight(const adapters::providers::ProviderConfig& config, absl::Time now);

// "provider:model", the identity preflights are kept under.
std::string ModelIdentity(const std::string& provider, const std::string& model);

}  // namespace pulse::server
