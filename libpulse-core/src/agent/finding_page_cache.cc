#include "pulse/core/agent/finding_page_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace pulse::core {

std::string FindingPageCache::Key(const std::optional<std::string>& resource_id,
                                  const std::optional<std::string>& cursor, std::size_t limit) {
  // Length-prefixed, so no two different triples make the same key.
  std::string key = absl::StrCat(limit, ";");
  if (resource_id.has_value()) {
    absl::StrAppend(&key, "r", resource_id->size(), ":", *resource_id);
  }
  absl::StrAppend(&key, ";");
  if (cursor.has_value()) {
    absl::StrAppend(&key, "c", cursor->size(), ":", *cursor);
  }
  return key;
}

std::optional<CachedFindingPage> FindingPageCache::Find(const std::string& key,
                                                        std::uint64_t generation, absl::Time now) {
  std::shared_ptr<const CachedFindingPage> page;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key != key) {
        continue;
      }
      if (it->generation == generation && now >= it->built_at &&
          (!it->expires_at.has_value() || now < *it->expires_at)) {
        page = it->page;
        entries_.splice(entries_.begin(), entries_, it);
      }
      break;
    }
    if (page == nullptr) {
      ++stats_.misses;
      return std::nullopt;
    }
    ++stats_.hits;
  }
  return *page;
}

void FindingPageCache::Store(const std::string& key, std::uint64_t generation, absl::Time built_at,
                             std::optional<absl::Time> expires_at, CachedFindingPage page) {
  if (page.body.size() > kFindingPageCacheMaxBodyBytes) {
    return;
  }
  auto shared = std::make_shared<const CachedFindingPage>(std::move(page));
  absl::MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      if (it->generation > generation) {
        return;  // a read that started after a later write already stored its page
      }
      entries_.erase(it);
      break;
    }
  }
  entries_.push_front(Entry{key, generation, built_at, expires_at, std::move(shared)});
  while (entries_.size() > kFindingPageCacheEntries) {
    entries_.pop_back();
  }
}

FindingPageCacheStats FindingPageCache::Stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace pulse::core
