// Query semantics shared by the Fleet adapters (adapters/agents: demo, local host, composite;
// adapters/docker), so every source answers bounds, filters, topology walks, log excerpts,
// metric windows and reference resolution the same way (and the same way as
// pulse::testing::FakeFleet). Pure functions over the port's plain values; they live in the core
// so adapters share them without an adapter-to-adapter edge (docs/architecture.md).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core::fleetq {

// InvalidArgument for a limit outside 1..kFleetMaxResults.
absl::Status ValidateResourceQuery(const FleetResourceQuery& query);
// Exact (case-insensitive) type/status/technology filters and the id-or-name substring.
bool MatchesQuery(const FleetResource& resource, const FleetResourceQuery& query);

// InvalidArgument for depth outside 1..8 or max_resources outside 1..kFleetMaxResults.
absl::Status ValidateTopologyQuery(const FleetTopologyQuery& query);
// The neighbourhood of query.root_id (which must exist in `resources`) within query.depth
// edges either way, or everything for an empty root; edges among the included resources.
FleetTopology BuildTopology(const std::map<std::string, FleetResource>& resources,
                            const std::vector<FleetRelationship>& relationships,
                            const FleetTopologyQuery& query);
// The same from a map the caller gives up: the listed resources are moved out of it.
FleetTopology BuildTopology(std::map<std::string, FleetResource>&& resources,
                            const std::vector<FleetRelationship>& relationships,
                            const FleetTopologyQuery& query);

struct TimedLine {
  absl::Time at;
  std::string text;
};

// InvalidArgument for line or byte bounds outside the port's caps.
absl::Status ValidateLogQuery(const FleetLogQuery& query);
// The newest lines (optionally since query.since) within the line and byte bounds, oldest
// first, each prefixed with its RFC 3339 time.
FleetLogExcerpt ExcerptLines(const std::vector<TimedLine>& lines, const FleetLogQuery& query);

// InvalidArgument for an empty metric, start >= end or max_points outside 1..5000.
absl::Status ValidateMetricQuery(const FleetMetricQuery& query);
// Points with start <= at < end, averaged into at most max_points consecutive buckets (each
// bucket keeps its newest timestamp).
std::vector<FleetMetricPoint> SelectPoints(const std::vector<FleetMetricPoint>& points,
                                           const FleetMetricQuery& query);

// A candidate for reference resolution: a canonical id and the provider coordinates that name
// it (display name, vmid, unit name, ...).
struct ReferenceCandidate {
  std::string id;
  std::vector<std::string> aliases;
};

// Maps `reference` to one canonical id: an exact canonical id wins; otherwise every candidate
// with an alias equal to it (ASCII case-insensitive). InvalidArgument for an empty, overlong
// or non-printable reference; NotFound when nothing matches; FailedPrecondition naming the
// candidates (sorted) when more than one does.
absl::StatusOr<std::string> ResolveAmong(std::string_view reference,
                                         const std::vector<ReferenceCandidate>& candidates);

std::string AsciiLower(std::string_view text);

// RFC 3339 UTC with seconds, e.g. 2026-01-01T10:00:00Z.
std::string Rfc3339(absl::Time at);

// True for member names that conventionally hold secrets (password, secret, token, key, ...).
bool IsSecretKey(std::string_view key);

}  // namespace pulse::core::fleetq
