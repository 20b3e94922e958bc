// The agents' names for the shared Fleet query semantics, which live in the core
// (pulse/core/agent/fleet_queries.h) so the docker adapter uses them too without depending on
// this one.
#pragma once

#include "pulse/core/agent/fleet_queries.h"

namespace pulse::adapters::agents::internal {

using core::fleetq::AsciiLower;
using core::fleetq::BuildTopology;
using core::fleetq::ExcerptLines;
using core::fleetq::IsSecretKey;
using core::fleetq::MatchesQuery;
using core::fleetq::ReferenceCandidate;
using core::fleetq::ResolveAmong;
using core::fleetq::Rfc3339;
using core::fleetq::SelectPoints;
using core::fleetq::TimedLine;
using core::fleetq::ValidateLogQuery;
using core::fleetq::ValidateMetricQuery;
using core::fleetq::ValidateResourceQuery;
using core::fleetq::ValidateTopologyQuery;

}  // namespace pulse::adapters::agents::internal
