// AgentEventPublisher: turns the changes the observed stores report into agent events
// (docs/server.md "Events, metrics, health") on the bus: approval.pending when an action starts
// waiting for a decision, action.completed when one ends completed or failed (refusals persisted as
// failed included), finding.created for a new finding that is active (not auto-dismissed or
// suppressed). Each event has a full and a redacted payload: a subscriber without ai:execute
// gets commandRedacted:true instead of the command.
// Thread-safe (stateless apart from the borrowed bus, fleet and clock, which must outlive it).
#pragma once

#include <string>

#include "pulse/adapters/server/agent_event_bus.h"
#include "pulse/adapters/server/observed_stores.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::server {

// "<capability>" or "<capability> <params>", the params as compact JSON with the value of
// every param the resource's catalogue declares sensitive replaced by "[redacted]" (every
// value when the catalogue cannot be read or no longer lists the capability).
std::string ActionCommandText(const core::ActionRecord& record, core::Fleet& fleet);

class AgentEventPublisher {
 public:
  AgentEventPublisher(AgentEventBus& bus, core::Fleet& fleet, const core::Clock& clock)
      : bus_(bus), fleet_(fleet), clock_(clock) {}

  void OnActionChange(const ActionChange& change);
  void OnFindingCreated(const core::Finding& finding);

 private:
  void PublishApprovalPending(const core::ActionRecord& record);
  void PublishActionCompleted(const core::ActionRecord& record);

  AgentEventBus& bus_;
  core::Fleet& fleet_;
  const core::Clock& clock_;
};

}  // namespace pulse::server
