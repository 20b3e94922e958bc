// FleetContextCache: the resources[] arrays of recent fleet contexts (GET
// /api/agent/fleet-context), so that reading an unchanged fleet context again costs the fleet
// listing, a comparison and a copy instead of the finding counts, the pending plans, the
// operator states and the encoding of every resource. AgentViews serves an entry only while it
// is the array a fresh read would build, byte for byte:
//   * the fleet's ListingGeneration is known and the one read before the array was built (then
//     the fleet is not listed at all), or else the fleet listed now shows what it showed when
//     the array was built: the same resources in the same order with the same id, type, name,
//     technology and status (the only fleet fields the array shows);
//   * the finding, action and operator-state stores' WriteGenerations are the ones read before
//     the array was built (any write through those stores misses);
//   * `now` is neither before the instant the array was built (a clock set back misses) nor at
//     or after its expiry: the first instant time alone changes it (a snooze of a listed
//     resource's finding ends, a counted plan passes its TTL, a shown maintenance window opens
//     or closes).
// The rest of the body (sources[], generatedAt) is written for every reply.
// At most kFleetContextCacheEntries entries (the least recently used goes), each at most
// kFleetContextCacheMaxBytes (a larger array is not kept).
// Thread-safety: safe from any thread; one mutex, held for a lookup or an insert only, never
// across a store read or a copy of an array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/agent/agent_query.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core {

inline constexpr std::size_t kFleetContextCacheEntries = 8;
inline constexpr std::size_t kFleetContextCacheMaxBytes = std::size_t{4} << 20;

// The generations an array was built under (FindingStore, ActionStore and
// OperatorStateStore::WriteGeneration, Fleet::ListingGeneration; read before the build).
struct FleetContextGenerations {
  std::uint64_t findings = 0;
  std::uint64_t actions = 0;
  std::uint64_t operator_state = 0;
  std::optional<std::uint64_t> fleet;  // nullopt: the fleet cannot tell, so it is listed

  friend bool operator==(const FleetContextGenerations&, const FleetContextGenerations&) = default;
};

struct FleetContextCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;  // lookups that found no entry that may be served
};

class FleetContextCache {
 public:
  // The cache key of a query: every filter, length-prefixed.
  [[nodiscard]] static std::string Key(const FleetContextQuery& query);

  // The array for `key` if it was stored at `generations` and may be served at `now` (see the
  // header comment), from a listing that shows what `listing` shows; with no `listing`, only
  // when the fleet's generation is known (it stands for the listing). nullptr otherwise.
  [[nodiscard]] std::shared_ptr<const std::string> Find(const std::string& key,
                                                        const FleetContextGenerations& generations,
                                                        const std::vector<FleetResource>* listing,
                                                        absl::Time now);

  // Keeps `array`, built at `built_at` from `listing` under `generations`, valid until
  // `expires_at` (nullopt: until a write or a change in the listing). Replaces an entry of the
  // same key.
  void Store(const std::string& key, const FleetContextGenerations& generations,
             const std::vector<FleetResource>& listing, absl::Time built_at,
             std::optional<absl::Time> expires_at, std::shared_ptr<const std::string> array);

  [[nodiscard]] FleetContextCacheStats Stats() const;

 private:
  // What the array shows of one listed resource.
  struct Shown {
    std::string id;
    std::string type;
    std::string name;
    std::string technology;
    std::string status;
  };
  struct Entry {
    std::string key;
    FleetContextGenerations generations;
    std::vector<Shown> listing;
    absl::Time built_at;
    std::optional<absl::Time> expires_at;
    std::shared_ptr<const std::string> array;
  };

  static bool ShowsSame(const std::vector<Shown>& kept, const std::vector<FleetResource>& listing);

  mutable absl::Mutex mu_;
  std::list<Entry> entries_ ABSL_GUARDED_BY(mu_);  // most recently used first
  FleetContextCacheStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::core
