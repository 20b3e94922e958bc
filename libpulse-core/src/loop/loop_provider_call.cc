// The one door to the provider: every call of a run (turns, retries, the summary call) is
// admitted here (cancellation, outbound policy, money budget), sent as the policy's sanitized
// copy with the run's cancellation flag, and has its usage and cost recorded.
#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "loop_run.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/model/usage.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

// How often a retry wait looks at the cancellation flag.
constexpr absl::Duration kCancelPollInterval = absl::Milliseconds(100);

}  // namespace

bool LoopRun::Cancelled() const {
  return cancelled_ != nullptr && cancelled_->load(std::memory_order_acquire);
}

void LoopRun::FailCancelled() {
  Fail(kErrorCodeCancelled, kReasonCancelled, "The run was cancelled before it finished.");
}

bool LoopRun::PrepareOutbound() {
  if (outbound_.has_value()) {
    return true;
  }
  const LoopOptions& o = loop_.options_;
  std::vector<LocalOnlyResource> local_only;
  // A local model server sees everything, so it never needs (or waits for) the set.
  if (o.route.route != InferenceRoute::kLocalModelServer && o.local_only) {
    absl::StatusOr<std::vector<LocalOnlyResource>> loaded = o.local_only();
    if (!loaded.ok()) {
      Fail(kErrorCodeEngineError, kReasonLocalOnlyUnavailable,
           "The local-only resource settings could not be read, so no context may be sent to "
           "a model outside the local trust boundary. Retry when the store is reachable.");
      return false;
    }
    local_only = std::move(loaded).value();
  }
  outbound_.emplace(o.route.route, local_only);
  return true;
}

bool LoopRun::AdmitProviderCall() {
  if (Cancelled()) {
    FailCancelled();
    return false;
  }
  const LoopOptions& o = loop_.options_;
  if (!PrepareOutbound()) {
    return false;
  }
  if (!BudgetApplicable(o.route.route)) {
    return true;  // no per-token cost: no money budget bounds it
  }
  const bool capped = o.max_cost_usd.has_value() || o.max_session_cost_usd.has_value() ||
                      (o.spend_guard != nullptr && o.spend_guard->Capped());
  if (capped && (!UsablePrice(o.route).has_value() || counters_.cost_unknown)) {
    const std::string label = RouteLabel(o.route);
    Fail(kErrorCodeBoundedFailure, kReasonCostUnknown,
         absl::StrCat("The run has a money budget but the price of ",
                      label.empty() ? std::string("the model") : label,
                      " is unknown, so the cost of a call cannot be bounded. Configure the "
                      "model's price or remove the budget."));
    return false;
  }
  if (o.max_cost_usd.has_value()) {
    const double cap = *o.max_cost_usd;
    if (std::isnan(cap) || counters_.cost_usd >= cap) {
      Fail(kErrorCodeBoundedFailure, kReasonCostBudgetExhausted,
           absl::StrCat("The run spent its money budget of ", cap, " USD."));
      return false;
    }
  }
  if (o.max_session_cost_usd.has_value()) {
    const double cap = *o.max_session_cost_usd;
    if (std::isnan(cap) || session_.usage_totals.priced_cost_usd >= cap) {
      Fail(kErrorCodeBoundedFailure, kReasonCostBudgetExhausted,
           absl::StrCat("The session spent its money budget of ", cap,
                        " USD. Start a new session, or raise the per-session cap in the AI "
                        "settings."));
      return false;
    }
  }
  if (o.spend_guard != nullptr) {
    if (absl::Status admitted = o.spend_guard->Admit(); !admitted.ok()) {
      Fail(kErrorCodeBoundedFailure, kReasonSpendCapReached, ToStd(admitted.message()));
      return false;
    }
  }
  return true;
}

absl::Status LoopRun::CallProvider(const LlmRequest& request,
                                   absl::FunctionRef<void(const LlmStreamEvent&)> on_event) {
  if (!outbound_.has_value()) {
    // AdmitProviderCall prepares the policy; without it nothing may be sent (fail closed).
    return absl::InternalError("the outbound context policy was not prepared");
  }
  const LlmRequest outbound = outbound_->Apply(request);
  ++counters_.provider_calls;
  TokenUsage used;
  absl::Status status = loop_.provider_.Stream(outbound, [&](const LlmStreamEvent& event) {
    if (event.kind == LlmStreamEvent::Kind::kUsage) {
      used.input_tokens += std::max<std::int64_t>(0, event.usage.input_tokens);
      used.output_tokens += std::max<std::int64_t>(0, event.usage.output_tokens);
      return;
    }
    on_event(event);
  });

  const ModelRoute& route = loop_.options_.route;
  const CallCost cost = CostOf(route, used);
  counters_.input_tokens += used.input_tokens;
  counters_.output_tokens += used.output_tokens;
  if (cost.cost_usd.has_value()) {
    counters_.cost_usd += *cost.cost_usd;
    if (loop_.options_.spend_guard != nullptr && *cost.cost_usd > 0) {
      loop_.options_.spend_guard->Record(*cost.cost_usd);
    }
  } else {
    counters_.cost_unknown = true;
  }
  TurnUsage entry;
  entry.turn = counters_.turns;
  entry.route = RouteLabel(route);
  entry.input_tokens = used.input_tokens;
  entry.output_tokens = used.output_tokens;
  entry.cost_usd = cost.cost_usd;
  entry.budget_applicable = cost.budget_applicable;
  AddUsage(session_.usage_totals, entry);
  session_.usage.push_back(std::move(entry));
  if (session_.usage.size() > kMaxSessionUsageEntries) {
    session_.usage.erase(
        session_.usage.begin(),
        session_.usage.end() - static_cast<std::ptrdiff_t>(kMaxSessionUsageEntries));
  }
  return status;
}

bool LoopRun::SleepUnlessCancelled(absl::Duration delay) {
  if (cancelled_ == nullptr) {
    loop_.runner_.SleepFor(delay);
    return true;
  }
  // TaskRunner::SleepFor cannot be interrupted, so a cancellable wait is cut into slices.
  absl::Duration left = delay;
  while (left > absl::ZeroDuration()) {
    if (Cancelled()) {
      return false;
    }
    const absl::Duration slice = std::min(left, kCancelPollInterval);
    loop_.runner_.SleepFor(slice);
    left -= slice;
  }
  return !Cancelled();
}

}  // namespace pulse::core
