// Internal to adapters/http: the budgets of open event streams. Subscriptions (the agent event
// stream) and runs (chat, resume, answer) each have a budget of their own, so a flood of one
// kind never starves the other, and every token may hold at most `per_token` streams of both
// kinds together, so one credential cannot take a whole budget. A slot is taken before the
// handler runs (a refused run never starts) and given back when its stream ends. Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "pulse/adapters/http/metrics_registry.h"
#include "pulse/adapters/http/router.h"
#include "pulse/core/errors/agent_error.h"

namespace pulse::adapters::http::internal {

// Wire name of a budget: "subscriptions", "runs" or "host_agents" (the metrics label).
std::string_view BudgetName(StreamBudget budget);

struct StreamSlotLimits {
  std::size_t subscriptions = 0;
  std::size_t runs = 0;
  std::size_t per_token = 0;
  std::size_t host_agents = 0;
};

class StreamSlots;

// One taken slot; gives it back when destroyed (or on Release). Move-only.
class StreamSlot {
 public:
  StreamSlot() = default;
  StreamSlot(StreamSlots* owner, StreamBudget budget, std::string token_id)
      : owner_(owner), budget_(budget), token_id_(std::move(token_id)) {}
  ~StreamSlot() { Release(); }
  StreamSlot(StreamSlot&& other) noexcept { *this = std::move(other); }
  StreamSlot& operator=(StreamSlot&& other) noexcept;
  StreamSlot(const StreamSlot&) = delete;
  StreamSlot& operator=(const StreamSlot&) = delete;

  bool held() const { return owner_ != nullptr; }
  void Release();

 private:
  StreamSlots* owner_ = nullptr;
  StreamBudget budget_ = StreamBudget::kRun;
  std::string token_id_;
};

class StreamSlots {
 public:
  enum class Refusal { kPerToken, kBudget };

  explicit StreamSlots(StreamSlotLimits limits) : limits_(limits) {}

  // Exports pulse_http_stream_slots{budget,state=in_use|max} and
  // pulse_http_stream_refusals_total{budget,reason=per_token|budget} into these families
  // (both nullable; they must outlive this). Call once, before the first Acquire.
  void SetMetrics(GaugeFamily* slots, CounterFamily* refusals);

  // A slot of `budget` for `token_id` ("" for an unauthenticated caller), or why not.
  struct Taken {
    StreamSlot slot;
    std::optional<Refusal> refusal;
  };
  Taken Acquire(StreamBudget budget, const std::string& token_id);

  std::size_t InUse(StreamBudget budget) const;
  std::size_t Max(StreamBudget budget) const;
  std::size_t per_token() const { return limits_.per_token; }
  // Refusals since start, by budget and reason.
  std::size_t Refusals(StreamBudget budget, Refusal reason) const;

  // The agent envelope for a refusal: 429 too_many_streams (per token) or 503
  // service_unavailable (budget full), each with details {budget, limit}.
  core::AgentError RefusalError(StreamBudget budget, Refusal reason) const;

 private:
  friend class StreamSlot;
  void Give(StreamBudget budget, const std::string& token_id) ABSL_LOCKS_EXCLUDED(mu_);
  std::size_t& CountOf(StreamBudget budget) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ExportLocked(StreamBudget budget) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StreamSlotLimits limits_;
  mutable absl::Mutex mu_;
  std::size_t subscriptions_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t runs_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t host_agents_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::size_t> per_token_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<StreamBudget, Refusal>, std::size_t> refusals_ ABSL_GUARDED_BY(mu_);
  GaugeFamily* slots_gauge_ ABSL_GUARDED_BY(mu_) = nullptr;
  CounterFamily* refusals_counter_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace pulse::adapters::http::internal
