// CompositeFleet: one Fleet over several sources (fleet_sources.h). It merges their resources,
// relationships, metrics, logs and capabilities and routes every per-resource call, dispatch
// included, to the source that owns the resource.
//
// Id scheme (docs/fleet.md): a resource keeps its source's canonical id unless an earlier
// source in the list has a resource with the same id; then, and for any id whose local part
// begins with '@' (reserved for this), it is `<type>:@<source>/<local>` (node:pve1 of source
// lab2 becomes node:@lab2/pve1). Parents and relationship ends are translated the same way.
// Every resource carries the attribute `pulse.source` = its source's name.
//
// A source that fails to list (any error) is down: its resources as last seen stay listed
// with status `unknown`, and the other sources answer as usual. Per-resource reads of a down
// source's resources answer the source's own error (GetResource answers the remembered
// resource, status unknown). SourceStatuses() reports each source for the server's surfaces.
// ChangesSince merges the sources' change feeds into one, in the composite's ids (docs/fleet.md,
// "Changes").
// Thread-safety: every method may be called concurrently (one mutex guards the index; sources
// are called outside it and must be thread-safe themselves, as the port requires).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::adapters::agents {

struct CompositeSource {
  std::string name;  // IsFleetSourceName
  std::string kind;
  std::unique_ptr<core::Fleet> fleet;
};

// The attribute naming a resource's source.
inline constexpr std::string_view kSourceAttribute = "pulse.source";

class CompositeFleet final : public core::Fleet {
 public:
  // InvalidArgument for no sources, more than kMaxFleetSources, a bad or repeated name or a
  // missing fleet. Lists every source once (a source that is down starts down).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<CompositeFleet>> Create(
      std::vector<CompositeSource> sources);
  ~CompositeFleet() override;
  CompositeFleet(const CompositeFleet&) = delete;
  CompositeFleet& operator=(const CompositeFleet&) = delete;

  // ---- core::Fleet ------------------------------------------------------------------------
  // Whole-fleet reads list every source again.
  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override;
  // True when every source's listing answers from memory (the merge itself does).
  bool ListsFromMemory() const override;
  // Known when every source's is: advanced when one of theirs changes or the merged view is
  // rebuilt (a source that went down or came back).
  std::optional<std::uint64_t> ListingGeneration() override;
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override;
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& query) override;
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override;
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& query) override;
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override;
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& query) override;
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override;
  // Routed to the owning source with the source's id; the source keeps the attempt ids.
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override;
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& query) override;
  absl::StatusOr<core::ExecOutput> RunReadOnlyCommand(std::string_view resource_id,
                                                      std::string_view command) override;

  // Each call first takes what every source reported since the previous call (their feeds
  // answer from memory, so a source that is down holds up nothing), orders that batch by time,
  // gives each change the composite's id of its resource (translated as a listing would: a
  // resource the composite has not listed yet keeps its plain id unless an earlier source
  // holds it) and the source's name, and numbers it in the composite's own sequence. The
  // newest kFleetMaxChanges are kept. A change naming an id that is not canonical is dropped.
  std::vector<core::FleetChange> ChangesSince(std::uint64_t after_seq, std::size_t max) override;

  // ---- sources ----------------------------------------------------------------------------
  std::vector<core::FleetSourceStatus> SourceStatuses() override;
  // The owning source's name and the id the resource has there. NotFound for an unknown id.
  [[nodiscard]] absl::StatusOr<std::pair<std::string, std::string>> Locate(std::string_view id);
  // The source fleet by name (nullptr when there is none), e.g. for a kind-specific history.
  core::Fleet* SourceFleet(std::string_view name);

 private:
  struct Entry {
    std::size_t source = 0;
    std::string source_id;
  };
  struct Seen {  // one source's last successful listing, in its own ids
    std::vector<core::FleetResource> resources;
    std::vector<core::FleetRelationship> relationships;
  };

  explicit CompositeFleet(std::vector<CompositeSource> sources);
  // Lists every source (outside the lock) and rebuilds the merged view.
  void Refresh();
  // The owner of `id`; refreshes once on a miss (at most once per second).
  std::optional<Entry> Find(std::string_view id);
  void RebuildLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the sources' new changes into changes_.
  void PullChanges() ABSL_EXCLUSIVE_LOCKS_REQUIRED(changes_mu_);
  // The composite id of source `source`'s `id`; nullopt when it cannot have one.
  std::optional<std::string> CompositeIdLocked(std::size_t source, const std::string& id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::vector<CompositeSource> sources_;
  absl::Mutex changes_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one pull of the feeds at a time
  std::vector<std::uint64_t> change_cursors_ ABSL_GUARDED_BY(changes_mu_);  // per source
  std::deque<core::FleetChange> changes_ ABSL_GUARDED_BY(changes_mu_);
  std::uint64_t next_change_ ABSL_GUARDED_BY(changes_mu_) = 1;
  absl::Mutex mu_;
  std::vector<std::optional<Seen>> seen_ ABSL_GUARDED_BY(mu_);
  std::vector<core::FleetSourceStatus> states_ ABSL_GUARDED_BY(mu_);
  // The merged view, in composite ids.
  std::map<std::string, core::FleetResource> resources_ ABSL_GUARDED_BY(mu_);
  std::vector<core::FleetRelationship> relationships_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Entry, std::less<>> owners_ ABSL_GUARDED_BY(mu_);
  // Per source: its id -> the composite id.
  std::vector<std::map<std::string, std::string>> to_composite_ ABSL_GUARDED_BY(mu_);
  absl::Time last_miss_refresh_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // ListingGeneration: the sources' generations it last saw, and its own.
  std::vector<std::uint64_t> source_generations_ ABSL_GUARDED_BY(mu_);
  std::uint64_t listing_generation_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pulse::adapters::agents
