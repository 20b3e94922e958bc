// The outbound context policy: what a language model may see of a run's context. The agentic
// loop applies it to a copy of every provider request just before the call (turns, retries and
// the summary call alike), so the stored transcript keeps the real data and the provider never
// receives the raw form. For every route but a local model server two invariants hold:
//   1. secrets are redacted (RedactSecrets) in the system prompt, user and assistant text,
//      tool-call arguments and tool results;
//   2. local-only resources (OperatorState::local_only) appear only as aggregates. In a tool
//      result that parses as JSON, an object describing one (a string member named in
//      kLocalOnlyIdMembers equal to its id) is withheld: inside an array it is removed and the
//      array gains one trailing element {"withheld_local_only_resources": N} counting the
//      removed objects; anywhere else (the root, an object member) it is replaced by
//      {"withheld_local_only_resources": 1}. An object member whose name is a local-only id is
//      removed and its object gains the member "withheld_local_only_resources": N. After that,
//      every occurrence of a local-only id or display name in any text becomes
//      kLocalOnlyPlaceholder.
// A local model server receives the request unchanged (local models get full context).
// Ids and names match case-insensitively (ASCII) at token boundaries (an identifier character
// [A-Za-z0-9_] or a non-ASCII byte next to a match that starts or ends with one prevents it),
// so vm:101 never matches inside vm:1012. Work is linear in the input: each position costs at
// most the longest pattern (ids are at most kMaxResourceIdBytes, names kMaxLocalOnlyNameBytes),
// JSON is parsed with bounded size and depth, and text that does not parse is treated as text.
// Immutable after construction: safe to share between threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/core/model/model_route.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/operator_state_store.h"

namespace pulse::core {

// What a local-only id or name is replaced with in text.
inline constexpr std::string_view kLocalOnlyPlaceholder = "[local-only resource]";
// The member that counts withheld local-only objects.
inline constexpr std::string_view kWithheldLocalOnlyMember = "withheld_local_only_resources";
// The members that identify the resource an object describes.
inline constexpr std::array<std::string_view, 5> kLocalOnlyIdMembers = {
    "id", "resource_id", "resourceId", "canonical_id", "canonicalId"};
// Display names shorter than this are too ambiguous to replace in prose (their ids still are,
// and objects are still withheld by id); longer than the maximum are ignored.
inline constexpr std::size_t kMinLocalOnlyNameBytes = 3;
inline constexpr std::size_t kMaxLocalOnlyNameBytes = 512;
// Tool results up to this size are parsed as JSON; larger ones are handled as text.
inline constexpr std::size_t kMaxOutboundJsonBytes = 8 << 20;

// One resource whose identifiers and details never leave the local trust boundary.
struct LocalOnlyResource {
  std::string id;                  // canonical id
  std::vector<std::string> names;  // display names the fleet knows for it (may be empty)

  friend bool operator==(const LocalOnlyResource&, const LocalOnlyResource&) = default;
};

// The current local-only resources, read again for every run.
using LocalOnlySource = std::function<absl::StatusOr<std::vector<LocalOnlyResource>>()>;

// The local-only resources of `store`, each with the display name `fleet` reports for it (no
// name when the fleet does not know the resource, or when `fleet` is null). Any other store or
// fleet error is returned: the caller cannot know what to withhold, so it must fail closed.
[[nodiscard]] absl::StatusOr<std::vector<LocalOnlyResource>> LoadLocalOnlyResources(
    OperatorStateStore& store, Fleet* fleet);

class OutboundContextPolicy {
 public:
  // Passes everything through for InferenceRoute::kLocalModelServer; sanitizes otherwise.
  explicit OutboundContextPolicy(InferenceRoute route,
                                 const std::vector<LocalOnlyResource>& local_only = {});

  // True when the policy changes nothing (a local model server).
  bool passes_through() const { return pass_through_; }

  // A copy of `request` with every message sanitized: text (system, user, assistant),
  // tool-call arguments as text, and tool results with SanitizeToolResult (after the loop's
  // untrusted-data frame, when the result carries one). Tools, tool choice, max_tokens, the
  // cancellation flag and each call's opaque provider_state (not text: the provider's own
  // bytes, which it refuses altered) are kept.
  LlmRequest Apply(const LlmRequest& request) const;

  // `text` with secrets redacted and local-only ids and names replaced.
  std::string SanitizeText(std::string_view text) const;

  // A tool result: JSON gets the structural local-only pass first, then all of it SanitizeText.
  // JSON that needs no structural change keeps its original formatting.
  std::string SanitizeToolResult(std::string_view content) const;

 private:
  std::string ReplaceLocalOnly(std::string_view text) const;
  // The trie child of `node` for byte `c` (already lowercased), or -1.
  int Child(int node, unsigned char c) const;
  void AddPattern(std::string_view pattern);

  bool pass_through_ = false;
  absl::flat_hash_set<std::string> ids_;  // lowercased
  std::size_t max_id_bytes_ = 0;
  // A trie of the lowercased patterns: node 0 is the root; terminal_[n] marks a pattern end.
  absl::flat_hash_map<std::uint64_t, int> edges_;
  std::vector<bool> terminal_;
};

}  // namespace pulse::core
