#include "pulse/core/findings/finding_identity.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pulse/core/model/short_digest.h"

namespace pulse::core {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kKeyAliases = {{
    {"high-cpu", "cpu-high"},
    {"high-memory", "memory-high"},
    {"high-disk", "disk-high"},
}};

constexpr std::array<std::string_view, 40> kStopWords = {
    "the",  "and",  "for",  "with", "from", "that", "this", "are",  "was",    "were",
    "has",  "have", "had",  "not",  "but",  "its",  "into", "over", "than",   "then",
    "been", "will", "can",  "all",  "any",  "our",  "out",  "per",  "via",    "due",
    "too",  "very", "more", "less", "now",  "one",  "two",  "may",  "should", "being",
};

constexpr std::array<std::string_view, 6> kStorageWords = {"storage", "pool", "array",
                                                           "unraid",  "zfs",  "ceph"};
constexpr std::array<std::string_view, 3> kStorageIdentityNoise = {"storage", "pool", "array"};
constexpr std::array<std::string_view, 8> kCapacityWords = {"capacity", "usage", "used", "free",
                                                            "full",     "space", "tb",   "gb"};

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

template <std::size_t N>
bool Contains(const std::array<std::string_view, N>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// Lowercase alphanumeric runs of any length, in order.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  for (char raw : text) {
    const char c = AsciiLower(raw);
    if (IsLowerAlnum(c)) {
      current.push_back(c);
    } else if (!current.empty()) {
      words.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) {
    words.push_back(std::move(current));
  }
  return words;
}

std::string CaseFold(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), AsciiLower);
  return out;
}

std::string FindingText(const Finding& f) {
  std::string text;
  text.reserve(f.title.size() + f.description.size() + f.resource_name.size() + 2);
  text.append(f.title).append(" ").append(f.description).append(" ").append(f.resource_name);
  return text;
}

bool MentionsStorage(const Finding& f) {
  if (f.resource_type == "storage") {
    return true;
  }
  for (const std::string& w : Words(FindingText(f))) {
    if (Contains(kStorageWords, w)) {
      return true;
    }
  }
  return false;
}

bool MentionsCapacity(const Finding& f) {
  const std::string text = FindingText(f);
  if (text.find('%') != std::string::npos) {
    return true;
  }
  for (const std::string& w : Words(text)) {
    if (Contains(kCapacityWords, w)) {
      return true;
    }
  }
  return false;
}

bool IsStorageCapacityRisk(const Finding& f) {
  return f.category != Category::kBackup && f.category != Category::kSecurity &&
         MentionsStorage(f) && MentionsCapacity(f);
}

bool IsStorageResource(const Finding& f) {
  if (f.resource_type == "storage") {
    return true;
  }
  for (const std::string& w : Words(f.resource_id + " " + f.resource_name)) {
    if (Contains(kStorageIdentityNoise, w)) {
      return true;
    }
  }
  return false;
}

bool SameStorageIdentity(const Finding& a, const Finding& b) {
  const std::string ia = StorageIdentityOf(a);
  return !ia.empty() && ia == StorageIdentityOf(b);
}

// Display names are not identities (every node has a `local-zfs`): only the canonical id, which
// carries the parent, and the storage identity derived from it relate two findings.
bool RelatedResource(const Finding& a, const Finding& b) {
  if (!a.resource_id.empty() && a.resource_id == b.resource_id) {
    return true;
  }
  return SameStorageIdentity(a, b);
}

double Jaccard(const std::set<std::string>& a, const std::set<std::string>& b) {
  if (a.empty() && b.empty()) {
    return 1.0;
  }
  std::size_t common = 0;
  for (const std::string& w : a) {
    common += b.count(w);
  }
  const std::size_t total = a.size() + b.size() - common;
  return static_cast<double>(common) / static_cast<double>(total);
}

}  // namespace

std::string NormalizeFindingKey(std::string_view key) {
  std::string out;
  out.reserve(std::min(key.size(), kMaxNormalizedKeyBytes));
  bool pending_separator = false;
  for (char raw : key) {
    const char c = AsciiLower(raw);
    if (!IsLowerAlnum(c)) {
      pending_separator = true;
      continue;
    }
    const bool separate = pending_separator && !out.empty();
    if (out.size() + (separate ? 2 : 1) > kMaxNormalizedKeyBytes) {
      break;  // cut at the limit; a word is never followed by a dangling '-'
    }
    if (separate) {
      out.push_back('-');
    }
    pending_separator = false;
    out.push_back(c);
  }
  while (!out.empty() && out.back() == '-') {
    out.pop_back();
  }
  for (const auto& [alias, canonical] : kKeyAliases) {
    if (out == alias) {
      return std::string(canonical);
    }
  }
  return out;
}

std::string FindingKeyFor(std::string_view key, std::string_view title) {
  std::string normalized = NormalizeFindingKey(key);
  if (normalized.empty()) {
    normalized = NormalizeFindingKey(title);
  }
  if (normalized.empty()) {
    normalized = kFallbackFindingKey;
  }
  return normalized;
}

std::string FindingIdFor(std::string_view resource_id, Category category,
                         std::string_view normalized_key) {
  std::string preimage;
  preimage.reserve(resource_id.size() + normalized_key.size() + 16);
  preimage.append(resource_id)
      .append(":")
      .append(ToString(category))
      .append(":")
      .append(normalized_key);
  return findings_internal::ShortDigestHex(preimage);
}

std::set<std::string> TitleKeywords(std::string_view text) {
  std::set<std::string> out;
  for (std::string& w : Words(text)) {
    if (w.size() > 2 && !Contains(kStopWords, w)) {
      out.insert(std::move(w));
    }
  }
  return out;
}

double KeywordOverlap(std::string_view a, std::string_view b) {
  return Jaccard(TitleKeywords(a), TitleKeywords(b));
}

double SemanticSimilarity(const Finding& a, const Finding& b) {
  double score = 0;
  if (a.resource_id == b.resource_id) {
    score += 0.3;
  }
  if (a.category == b.category) {
    score += 0.2;
  }
  if (!a.key.empty() && a.key == b.key) {
    score += 0.4;
  }
  score += 0.2 * KeywordOverlap(a.title, b.title);
  score += 0.1 * KeywordOverlap(a.description, b.description);
  return std::min(score, 1.0);
}

namespace {

bool ContainsStorageNoun(std::string_view text) {
  const std::string folded = CaseFold(text);
  for (std::string_view noun : kStorageIdentityNoise) {
    if (folded.find(noun) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool MayBeStorageResource(const Finding& f) {
  return f.resource_type == "storage" || ContainsStorageNoun(f.resource_id) ||
         ContainsStorageNoun(f.resource_name);
}

std::string StorageIdentityOf(const Finding& f) {
  std::string identity;
  if (!IsStorageResource(f)) {
    return identity;
  }
  for (const std::string& w : Words(f.resource_id)) {
    if (Contains(kStorageIdentityNoise, w)) {
      continue;
    }
    if (!identity.empty()) {
      identity.push_back('-');
    }
    identity.append(w);
  }
  return identity;
}

std::vector<std::string> StorageIdentityWords(std::string_view identity) { return Words(identity); }

bool HasStorageIdentity(const Finding& f) { return !StorageIdentityOf(f).empty(); }

// A storage identity without any word (e.g. "%") matches nothing, never every storage finding.
bool MatchesRelatedResource(const RelatedResourceFilter& filter, const Finding& f) {
  if (!filter.resource_id.empty() && f.resource_id == filter.resource_id) {
    return true;
  }
  if (filter.storage_identity.empty() || !MayBeStorageResource(f)) {
    return false;
  }
  const std::vector<std::string> words = StorageIdentityWords(filter.storage_identity);
  const std::string id = CaseFold(f.resource_id);
  for (const std::string& word : words) {
    if (id.find(word) == std::string::npos) {
      return false;
    }
  }
  return !words.empty();
}

std::optional<double> SiblingEquivalence(const Finding& existing, const Finding& incoming) {
  if (existing.id == incoming.id || !RelatedResource(existing, incoming)) {
    return std::nullopt;
  }
  const double similarity = SemanticSimilarity(existing, incoming);
  const std::string title_a = NormalizeFindingKey(existing.title);
  if (!title_a.empty() && title_a == NormalizeFindingKey(incoming.title)) {
    return similarity;
  }
  if ((existing.category == Category::kCapacity || incoming.category == Category::kCapacity) &&
      IsStorageCapacityRisk(existing) && IsStorageCapacityRisk(incoming)) {
    return similarity;
  }
  if (existing.category == incoming.category && similarity >= kSiblingMinSimilarity) {
    return similarity;
  }
  return std::nullopt;
}

}  // namespace pulse::core
