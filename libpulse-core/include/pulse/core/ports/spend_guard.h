// SpendGuard: money spent on metered model calls across every run, for a cap wider than one run
// or one session (the operator's monthly spend cap, docs/providers.md "Spend caps"). The loop
// asks before each provider call on a metered route and reports each priced call's cost after
// it; the adapter keeps the total durable (pulse-server: the ai_spend table, one row a month).
// Thread-safety: implementations must be safe to call from any thread (chat runs and Patrol
// passes share one guard).
#pragma once

#include "absl/status/status.h"

namespace pulse::core {

class SpendGuard {
 public:
  virtual ~SpendGuard() = default;

  // True when a cap is set: a metered call whose price is unknown cannot be bounded by it,
  // so the loop makes none (cost_unknown). A guard without a cap still records the spend.
  [[nodiscard]] virtual bool Capped() const = 0;

  // OK when a further metered call may be made; ResourceExhausted, with a message for the
  // user (what was spent, what the cap is, when it resets), when the cap is reached. A guard
  // that cannot read its total fails closed (Unavailable): no call is made.
  [[nodiscard]] virtual absl::Status Admit() = 0;

  // A priced call's cost in US dollars (> 0), after the call. Never fails: a total that could
  // not be saved is kept in memory and saved with the next call.
  virtual void Record(double cost_usd) = 0;
};

}  // namespace pulse::core
