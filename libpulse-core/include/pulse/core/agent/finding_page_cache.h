// FindingPageCache: the bodies of recent active-only findings pages (GET
// /api/ai/patrol/findings without include_resolved or include_hidden), so that reading an
// unchanged page again costs a lookup and a copy instead of a store read, a decode and an encode
// of every finding on it. AgentViews serves an entry only while it is the page a fresh read
// would build, byte for byte: the finding store's WriteGeneration is the one read before the
// page was (any write through the store misses), and `now` is neither before the instant the
// page was built (a clock set back misses) nor at or after its expiry, the earliest snooze end
// in the page's range (FindingStore::NextSnoozeEnd), the first instant time alone changes it.
// At most kFindingPageCacheEntries entries (the least recently used goes), each at most
// kFindingPageCacheMaxBodyBytes (a larger page is not kept).
// Thread-safety: safe from any thread; one mutex, held for a lookup or an insert only, never
// across a store read or a copy of a body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pulse::core {

inline constexpr std::size_t kFindingPageCacheEntries = 16;
inline constexpr std::size_t kFindingPageCacheMaxBodyBytes = std::size_t{2} << 20;

// A cached page: the response body and its X-Next-Cursor value, if any.
struct CachedFindingPage {
  std::string body;
  std::optional<std::string> next_cursor;
};

struct FindingPageCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;  // lookups that found no entry that may be served
};

class FindingPageCache {
 public:
  // The cache key of a page: its resource filter, its cursor as sent and its effective limit.
  [[nodiscard]] static std::string Key(const std::optional<std::string>& resource_id,
                                       const std::optional<std::string>& cursor, std::size_t limit);

  // The entry for `key` if it was stored at `generation` and may be served at `now` (see the
  // header comment); nullopt otherwise.
  [[nodiscard]] std::optional<CachedFindingPage> Find(const std::string& key,
                                                      std::uint64_t generation, absl::Time now);

  // Keeps `page`, built at `built_at` from a store whose WriteGeneration read `generation`
  // before the read, valid until `expires_at` (nullopt: until a write). Replaces an entry of
  // the same key unless that one was stored at a later generation.
  void Store(const std::string& key, std::uint64_t generation, absl::Time built_at,
             std::optional<absl::Time> expires_at, CachedFindingPage page);

  [[nodiscard]] FindingPageCacheStats Stats() const;

 private:
  struct Entry {
    std::string key;
    std::uint64_t generation = 0;
    absl::Time built_at;
    std::optional<absl::Time> expires_at;
    std::shared_ptr<const CachedFindingPage> page;  // shared, so a hit copies it unlocked
  };

  mutable absl::Mutex mu_;
  std::list<Entry> entries_ ABSL_GUARDED_BY(mu_);  // most recently used first
  FindingPageCacheStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::core
