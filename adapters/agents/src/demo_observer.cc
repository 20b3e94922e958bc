// The demo fleet's independent observer. It never looks at the executor's state: it reads
// the snapshot DemoFleet publishes after every change (internal::ObserverView, behind its own
// lock) and judges the capability's end state in its own trust domain, so the core classifies
// its evidence as independent of the executing agent.
#include <algorithm>

#include "absl/time/clock.h"
#include "demo_model.h"
#include "fmt/format.h"
#include "pulse/adapters/agents/demo_fleet.h"

namespace pulse::adapters::agents {
namespace {

constexpr std::string_view kObserverId = "demo-observer:control-plane";
constexpr std::string_view kObserverDomain = "demo-control-plane";

absl::Status NoSuchResource(std::string_view id) {
  return absl::NotFoundError(fmt::format("no resource with id '{}'", id));
}

// Whether the capability's intended end state holds; nullopt for a capability without a
// known postcondition. `expected` describes the end state for messages.
std::optional<bool> Holds(std::string_view capability, const internal::ObservedState& seen,
                          absl::Time dispatched_at, std::string* expected) {
  const bool running = seen.status == "running" || seen.status == "active";
  if (capability == "start") {
    *expected = "running";
    return running;
  }
  if (capability == "stop") {
    *expected = "stopped";
    return seen.status == "stopped" || seen.status == "exited" || seen.status == "inactive";
  }
  if (capability == "restart") {
    *expected = "running, started after the dispatch";
    return running && seen.started_at >= dispatched_at;
  }
  if (capability == "reload") {
    *expected = "active, reloaded after the dispatch";
    return seen.status == "active" && seen.reloaded_at.has_value() &&
           *seen.reloaded_at >= dispatched_at;
  }
  if (capability == "run-now") {
    *expected = "ok, run after the dispatch";
    return seen.status == "ok" && seen.last_run_at.has_value() &&
           *seen.last_run_at >= dispatched_at;
  }
  return std::nullopt;
}

}  // namespace

std::optional<internal::ObservedState> DemoFleet::Observe(const std::string& id) {
  return view_->Get(id);
}

absl::StatusOr<core::PostconditionObservation> DemoFleet::ObservePostcondition(
    const core::PostconditionQuery& query) {
  const absl::Time deadline = Now() + options_.observe_timeout;
  // A bound on looks as well as on time, so a clock that never moves cannot hang the caller.
  const std::int64_t max_looks =
      options_.observe_poll_interval > absl::ZeroDuration()
          ? static_cast<std::int64_t>(
                absl::FDivDuration(options_.observe_timeout, options_.observe_poll_interval)) +
                2
          : 2;
  for (std::int64_t look = 1;; ++look) {
    {
      absl::MutexLock lock(&mu_);
      AdvanceLocked(Now());  // time passes in the simulation; the observer reads the snapshot
    }
    const std::optional<internal::ObservedState> seen = Observe(query.resource_id);
    if (!seen.has_value()) {
      return NoSuchResource(query.resource_id);
    }
    const absl::Time now = Now();
    core::PostconditionObservation obs;
    obs.observer_id = std::string(kObserverId);
    obs.observer_trust_domain = std::string(kObserverDomain);
    obs.observed_at = now;
    std::string expected;
    const std::optional<bool> holds =
        Holds(query.capability_name, *seen, query.dispatched_at, &expected);
    if (!holds.has_value()) {
      obs.status = core::VerificationStatus::kInconclusive;
      obs.reason_code = "no_known_postcondition";
      obs.summary = fmt::format("no postcondition is known for '{}'", query.capability_name);
      return obs;
    }
    if (*holds) {
      obs.status = core::VerificationStatus::kConfirmed;
      obs.reason_code = "postcondition_holds";
      obs.summary = fmt::format("{} is {} ({})", query.resource_id, seen->status, expected);
      return obs;
    }
    if (!seen->busy) {
      obs.status = core::VerificationStatus::kContradicted;
      obs.reason_code = "postcondition_failed";
      obs.summary = fmt::format("expected {} to be {}, observed {}", query.resource_id, expected,
                                seen->status);
      return obs;
    }
    if (now >= deadline || look >= max_looks) {
      obs.status = core::VerificationStatus::kInconclusive;
      obs.reason_code = "still_in_progress";
      obs.summary = fmt::format("{} is still {} after {}", query.resource_id, seen->status,
                                absl::FormatDuration(options_.observe_timeout));
      return obs;
    }
    const absl::Duration wait = std::min(options_.observe_poll_interval, deadline - now);
    if (options_.sleep) {
      options_.sleep(wait);
    } else {
      absl::SleepFor(wait);
    }
  }
}

}  // namespace pulse::adapters::agents
