#include "stream_slots.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/wire_enum.h"

namespace pulse::adapters::http::internal {
namespace {

// The metric label values of a refusal: budget, and reason.
constexpr std::array<core::WireName<StreamBudget>, 3> kBudgetNames = {{
    {StreamBudget::kSubscription, "subscriptions"},
    {StreamBudget::kRun, "runs"},
    {StreamBudget::kHostAgent, "host_agents"},
}};

constexpr std::array<core::WireName<StreamSlots::Refusal>, 2> kReasonNames = {{
    {StreamSlots::Refusal::kBudget, "budget"},
    {StreamSlots::Refusal::kPerToken, "per_token"},
}};

std::string_view ReasonName(StreamSlots::Refusal reason) {
  return core::WireNameOf(kReasonNames, reason, "budget");
}

}  // namespace

std::string_view BudgetName(StreamBudget budget) {
  return core::WireNameOf(kBudgetNames, budget, "runs");
}

StreamSlot& StreamSlot::operator=(StreamSlot&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    budget_ = other.budget_;
    token_id_ = std::move(other.token_id_);
  }
  return *this;
}

void StreamSlot::Release() {
  if (StreamSlots* owner = std::exchange(owner_, nullptr)) {
    owner->Give(budget_, token_id_);
  }
}

void StreamSlots::SetMetrics(GaugeFamily* slots, CounterFamily* refusals) {
  absl::MutexLock lock(&mu_);
  slots_gauge_ = slots;
  refusals_counter_ = refusals;
  for (StreamBudget budget :
       {StreamBudget::kSubscription, StreamBudget::kRun, StreamBudget::kHostAgent}) {
    ExportLocked(budget);
    if (refusals_counter_ != nullptr) {
      for (Refusal reason : {Refusal::kPerToken, Refusal::kBudget}) {
        refusals_counter_->Increment({BudgetName(budget), ReasonName(reason)}, 0);
      }
    }
  }
}

std::size_t& StreamSlots::CountOf(StreamBudget budget) {
  switch (budget) {
    case StreamBudget::kSubscription:
      return subscriptions_;
    case StreamBudget::kHostAgent:
      return host_agents_;
    case StreamBudget::kRun:
      break;
  }
  return runs_;
}

void StreamSlots::ExportLocked(StreamBudget budget) {
  if (slots_gauge_ != nullptr) {
    slots_gauge_->Set({BudgetName(budget), "in_use"}, static_cast<double>(CountOf(budget)));
    slots_gauge_->Set({BudgetName(budget), "max"}, static_cast<double>(Max(budget)));
  }
}

StreamSlots::Taken StreamSlots::Acquire(StreamBudget budget, const std::string& token_id) {
  absl::MutexLock lock(&mu_);
  std::optional<Refusal> refusal;
  const auto held = per_token_.find(token_id);
  if (held != per_token_.end() && held->second >= limits_.per_token) {
    refusal = Refusal::kPerToken;
  } else if (CountOf(budget) >= Max(budget)) {
    refusal = Refusal::kBudget;
  }
  if (refusal.has_value()) {
    ++refusals_[{budget, *refusal}];
    if (refusals_counter_ != nullptr) {
      refusals_counter_->Increment({BudgetName(budget), ReasonName(*refusal)});
    }
    return Taken{StreamSlot(), refusal};
  }
  ++CountOf(budget);
  ++per_token_[token_id];
  ExportLocked(budget);
  return Taken{StreamSlot(this, budget, token_id), std::nullopt};
}

void StreamSlots::Give(StreamBudget budget, const std::string& token_id) {
  absl::MutexLock lock(&mu_);
  std::size_t& count = CountOf(budget);
  if (count > 0) {
    --count;
  }
  auto held = per_token_.find(token_id);
  if (held != per_token_.end() && --held->second == 0) {
    per_token_.erase(held);
  }
  ExportLocked(budget);
}

std::size_t StreamSlots::InUse(StreamBudget budget) const {
  absl::MutexLock lock(&mu_);
  switch (budget) {
    case StreamBudget::kSubscription:
      return subscriptions_;
    case StreamBudget::kHostAgent:
      return host_agents_;
    case StreamBudget::kRun:
      break;
  }
  return runs_;
}

std::size_t StreamSlots::Max(StreamBudget budget) const {
  switch (budget) {
    case StreamBudget::kSubscription:
      return limits_.subscriptions;
    case StreamBudget::kHostAgent:
      return limits_.host_agents;
    case StreamBudget::kRun:
      break;
  }
  return limits_.runs;
}

std::size_t StreamSlots::Refusals(StreamBudget budget, Refusal reason) const {
  absl::MutexLock lock(&mu_);
  auto it = refusals_.find({budget, reason});
  return it == refusals_.end() ? 0 : it->second;
}

core::AgentError StreamSlots::RefusalError(StreamBudget budget, Refusal reason) const {
  core::AgentError error;
  if (reason == Refusal::kPerToken) {
    error = core::MakeAgentError(
        core::AgentErrorCode::kTooManyStreams,
        absl::StrCat("this token already holds ", limits_.per_token,
                     " open streams, its limit; close one before opening another"));
    error.details.emplace("limit", absl::StrCat(limits_.per_token));
  } else {
    error = core::MakeAgentError(core::AgentErrorCode::kServiceUnavailable,
                                 absl::StrCat("no more ", std::string(BudgetName(budget)),
                                              " streams can be opened now; retry later"));
    error.details.emplace("limit", absl::StrCat(Max(budget)));
  }
  error.details.emplace("budget", std::string(BudgetName(budget)));
  return error;
}

}  // namespace pulse::adapters::http::internal
