#include "suggest.h"

#include <algorithm>
#include <utility>

namespace pulse::cli {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  constexpr std::size_t kMaxCompared = 64;
  const std::size_t extra = (a.size() > kMaxCompared ? a.size() - kMaxCompared : 0) +
                            (b.size() > kMaxCompared ? b.size() - kMaxCompared : 0);
  a = a.substr(0, kMaxCompared);
  b = b.substr(0, kMaxCompared);
  // Three rows of the dynamic programme: i-2, i-1, i.
  std::vector<std::size_t> before(b.size() + 1);
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    prev[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()] + extra;
}

std::vector<std::string> Closest(std::string_view word,
                                 const std::vector<std::string>& candidates) {
  constexpr std::size_t kMaxSuggestions = 3;
  const std::size_t limit = std::min<std::size_t>(2, std::max<std::size_t>(1, word.size() / 3));
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, index)
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string& candidate = candidates[i];
    const bool prefix = word.size() >= 2 && candidate.size() > word.size() &&
                        std::string_view(candidate).substr(0, word.size()) == word;
    const std::size_t distance = EditDistance(word, candidate);
    if (distance == 0) {
      continue;  // the word itself is known: nothing to suggest
    }
    if (distance <= limit || prefix) {
      scored.emplace_back(prefix ? 0 : distance, i);
    }
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [distance, index] : scored) {
    if (out.size() == kMaxSuggestions) {
      break;
    }
    out.push_back(candidates[index]);
  }
  return out;
}

}  // namespace pulse::cli
