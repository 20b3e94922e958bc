// Finding identity and equivalence: the normalized dedupe key, the deterministic finding id,
// keyword overlap, and the rule that decides when a newly reported finding is the same real
// problem as an existing active sibling (docs/architecture.md "Findings"). Pure functions.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pulse/core/model/finding.h"
#include "pulse/core/model/finding_types.h"
#include "pulse/core/ports/finding_store.h"

namespace pulse::core {

// Longest normalized key; longer input is cut here (and any trailing '-' removed).
inline constexpr std::size_t kMaxNormalizedKeyBytes = 128;
// The key used when neither the key nor the title has any letter or digit.
inline constexpr char kFallbackFindingKey[] = "llm-finding";
// Below or at this title-keyword overlap, a same-id re-detection replaced the content.
inline constexpr double kContentReplacedMaxTitleOverlap = 0.2;
// Same-category siblings at or above this SemanticSimilarity are one problem.
inline constexpr double kSiblingMinSimilarity = 0.78;

// Key normalization, in order: ASCII letters lowercased; every run of characters other than
// [a-z0-9] (whitespace, '_', '-', punctuation, non-ASCII bytes) becomes one '-', so input is
// trimmed and inner whitespace collapsed; leading and trailing '-' removed; cut to
// kMaxNormalizedKeyBytes; then the alias table maps the directional synonyms onto the
// verifier vocabulary (high-cpu -> cpu-high, high-memory -> memory-high, high-disk ->
// disk-high) and nothing else. "  High_CPU  " -> "cpu-high"; "Disk  usage 90%" ->
// "disk-usage-90". Idempotent: Normalize(Normalize(k)) == Normalize(k).
std::string NormalizeFindingKey(std::string_view key);

// The key of a report: the normalized key, else the normalized title, else
// kFallbackFindingKey.
std::string FindingKeyFor(std::string_view key, std::string_view title);

// hex(sha256("<resource_id>:<category>:<normalized_key>"))[0:16]: 16 lowercase hex digits,
// wire-compatible with the reference. `normalized_key` must already be normalized (it never
// contains ':', and the category never does, so the preimage is unambiguous).
std::string FindingIdFor(std::string_view resource_id, Category category,
                         std::string_view normalized_key);

// Lowercase alphanumeric runs longer than two characters, minus a fixed English stop-word
// list.
std::set<std::string> TitleKeywords(std::string_view text);
// |a ∩ b| / |a ∪ b|; 1 when both are empty (nothing suggests a change).
double KeywordOverlap(std::string_view a, std::string_view b);

// 0..1: +0.3 same resource id, +0.2 same category, +0.4 same non-empty key,
// +0.2 * title overlap, +0.1 * description overlap; capped at 1.
double SemanticSimilarity(const Finding& a, const Finding& b);

// The storage identity of `f`: when it is on a storage resource (resource_type "storage", or
// "storage", "pool" or "array" among the words of its resource id or name), the lowercase
// alphanumeric words of its canonical resource id without "storage", "pool" and "array",
// joined by '-' ("storage:pve2/local-zfs" -> "pve2-local-zfs"); otherwise, or when no word is
// left, "". The name never contributes: it is a display name, shared by the same storage on
// every node, while the canonical id carries the node (the parent).
std::string StorageIdentityOf(const Finding& f);

// The words RelatedResourceFilter::storage_identity is matched by: its lowercase alphanumeric
// runs, in order (any other character separates).
std::vector<std::string> StorageIdentityWords(std::string_view identity);

// Whether StorageIdentityOf(f) is not empty: only then can a finding on another resource id be
// its sibling.
bool HasStorageIdentity(const Finding& f);

// Whether `f` may be on a storage resource in the sense of RelatedResourceFilter.
// Stores that pre-filter in a query keep exactly this predicate (or a superset).
bool MayBeStorageResource(const Finding& f);

// Whether `f` matches `filter` (RelatedResourceFilter); a superset of the findings with which
// SiblingEquivalence can pair a finding `g` when filter is {g.resource_id,
// StorageIdentityOf(g)}.
bool MatchesRelatedResource(const RelatedResourceFilter& filter, const Finding& f);

// Whether `incoming` (not yet stored) is the same real problem as the active `existing`
// finding, and how strongly (the similarity, for picking the best of several siblings).
// Requires different ids and a related resource: the same canonical resource id, or the same
// non-empty storage identity (StorageIdentityOf). A display name alone never relates two
// findings: `local-zfs` on pve1 and on pve2, or `nginx` on two nodes, are different resources
// with different problems. Then any of:
//   (a) equal non-empty normalized titles;
//   (b) both are storage-capacity risks (storage wording or type plus a capacity signal:
//       capacity, usage, used, free, full, space, %, tb, gb), at least one is in category
//       capacity and neither is backup or security, so backup, health and pool-vs-device
//       findings stay separate;
//   (c) the same category and SemanticSimilarity >= kSiblingMinSimilarity, which keeps
//       distinct symptoms on one resource (CPU vs memory) apart.
// nullopt when not equivalent. `existing` being active is the caller's check.
std::optional<double> SiblingEquivalence(const Finding& existing, const Finding& incoming);

}  // namespace pulse::core
