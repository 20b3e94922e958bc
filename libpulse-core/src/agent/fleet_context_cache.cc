#include "pulse/core/agent/fleet_context_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/model/finding_types.h"
#include "pulse/core/string_view.h"

namespace pulse::core {

std::string FleetContextCache::Key(const FleetContextQuery& query) {
  // Length-prefixed, so no two different queries make the same key.
  std::string key = query.has_findings ? "f1;" : "f0;";
  if (query.severity.has_value()) {
    absl::StrAppend(&key, "s", ToAbsl(ToString(*query.severity)));
  }
  absl::StrAppend(&key, ";t", query.technology.size(), ":", query.technology, ";r",
                  query.resource_type.size(), ":", query.resource_type);
  return key;
}

bool FleetContextCache::ShowsSame(const std::vector<Shown>& kept,
                                  const std::vector<FleetResource>& listing) {
  if (kept.size() != listing.size()) {
    return false;
  }
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const Shown& a = kept[i];
    const FleetResource& b = listing[i];
    if (a.id != b.id || a.type != b.type || a.name != b.name || a.technology != b.technology ||
        a.status != b.status) {
      return false;
    }
  }
  return true;
}

std::shared_ptr<const std::string> FleetContextCache::Find(
    const std::string& key, const FleetContextGenerations& generations,
    const std::vector<FleetResource>* listing, absl::Time now) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<const std::string> array;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key != key) {
      continue;
    }
    if (it->generations == generations && now >= it->built_at &&
        (!it->expires_at.has_value() || now < *it->expires_at) &&
        (listing != nullptr ? ShowsSame(it->listing, *listing) : generations.fleet.has_value())) {
      array = it->array;
      entries_.splice(entries_.begin(), entries_, it);
    }
    break;
  }
  if (array == nullptr) {
    ++stats_.misses;
  } else {
    ++stats_.hits;
  }
  return array;
}

void FleetContextCache::Store(const std::string& key, const FleetContextGenerations& generations,
                              const std::vector<FleetResource>& listing, absl::Time built_at,
                              std::optional<absl::Time> expires_at,
                              std::shared_ptr<const std::string> array) {
  if (array == nullptr || array->size() > kFleetContextCacheMaxBytes) {
    return;
  }
  Entry entry{key, generations, {}, built_at, expires_at, std::move(array)};
  entry.listing.reserve(listing.size());
  for (const FleetResource& r : listing) {
    entry.listing.push_back(Shown{r.id, r.type, r.name, r.technology, r.status});
  }
  absl::MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      entries_.erase(it);
      break;
    }
  }
  entries_.push_front(std::move(entry));
  while (entries_.size() > kFleetContextCacheEntries) {
    entries_.pop_back();
  }
}

FleetContextCacheStats FleetContextCache::Stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace pulse::core
