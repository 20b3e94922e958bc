#include "pulse/core/agent/fleet_queries.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <set>
#include <type_traits>
#include <utility>

namespace pulse::core::fleetq {

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

std::string Rfc3339(absl::Time at) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", at, absl::UTCTimeZone());
}

bool IsSecretKey(std::string_view key) {
  const std::string lower = AsciiLower(key);
  for (std::string_view word :
       {"password", "passwd", "secret", "token", "apikey", "api_key", "private", "credential"}) {
    if (lower.find(word) != std::string::npos) {
      return true;
    }
  }
  return lower == "key" || (lower.size() > 4 && lower.substr(lower.size() - 4) == "_key");
}

absl::Status ValidateResourceQuery(const FleetResourceQuery& query) {
  if (query.limit == 0 || query.limit > kFleetMaxResults) {
    return absl::InvalidArgumentError("limit must be 1..1000");
  }
  return absl::OkStatus();
}

namespace {

bool FilterMatches(const std::string& filter, const std::string& value) {
  return filter.empty() || AsciiLower(filter) == AsciiLower(value);
}

}  // namespace

bool MatchesQuery(const FleetResource& r, const FleetResourceQuery& query) {
  if (!FilterMatches(query.type, r.type) || !FilterMatches(query.status, r.status) ||
      !FilterMatches(query.technology, r.technology)) {
    return false;
  }
  if (query.text.empty()) {
    return true;
  }
  const std::string needle = AsciiLower(query.text);
  return AsciiLower(r.id).find(needle) != std::string::npos ||
         AsciiLower(r.name).find(needle) != std::string::npos;
}

absl::Status ValidateTopologyQuery(const FleetTopologyQuery& query) {
  if (query.depth < 1 || query.depth > 8) {
    return absl::InvalidArgumentError("depth must be 1..8");
  }
  if (query.max_resources == 0 || query.max_resources > kFleetMaxResults) {
    return absl::InvalidArgumentError("max_resources must be 1..1000");
  }
  return absl::OkStatus();
}

namespace {

// The whole fleet (no root): the first `max_resources` resources in id order and the
// relationships between two of them, without the neighbourhood search's sets. The map is keyed
// by id, so its order is the id order. From a map the caller gives up, the resources are moved.
template <typename Map>
FleetTopology WholeTopology(Map&& resources, const std::vector<FleetRelationship>& relationships,
                            std::size_t max_resources) {
  FleetTopology out;
  out.resources.reserve(std::min(resources.size(), max_resources));
  auto it = resources.begin();
  for (; it != resources.end() && out.resources.size() < max_resources; ++it) {
    if constexpr (std::is_rvalue_reference_v<Map&&>) {
      out.resources.push_back(std::move(it->second));
    } else {
      out.resources.push_back(it->second);
    }
  }
  out.truncated = it != resources.end();
  // Kept: present, and (when truncated) not after the last kept key.
  // max_resources >= 1 (ValidateTopologyQuery), so a truncated listing kept at least one.
  const std::string* last = out.truncated ? &std::prev(it)->first : nullptr;
  const auto kept = [&resources, last](const std::string& id) {
    return (last == nullptr || id <= *last) && resources.count(id) != 0;
  };
  for (const FleetRelationship& rel : relationships) {
    if (kept(rel.from_id) && kept(rel.to_id)) {
      out.relationships.push_back(rel);
    }
  }
  if (!std::is_sorted(out.resources.begin(), out.resources.end(),
                      [](const FleetResource& a, const FleetResource& b) { return a.id < b.id; })) {
    std::sort(out.resources.begin(), out.resources.end(),
              [](const FleetResource& a, const FleetResource& b) { return a.id < b.id; });
  }
  return out;
}

// A root's neighbourhood within query.depth edges; the root is kept under truncation.
FleetTopology RootedTopology(const std::map<std::string, FleetResource>& resources,
                             const std::vector<FleetRelationship>& relationships,
                             const FleetTopologyQuery& query) {
  std::set<std::string> included;
  std::deque<std::pair<std::string, int>> frontier = {{query.root_id, 0}};
  included.insert(query.root_id);
  while (!frontier.empty()) {
    auto [id, d] = frontier.front();
    frontier.pop_front();
    if (d == query.depth) {
      continue;
    }
    for (const FleetRelationship& rel : relationships) {
      const std::string* next = rel.from_id == id ? &rel.to_id
                                : rel.to_id == id ? &rel.from_id
                                                  : nullptr;
      if (next != nullptr && included.insert(*next).second) {
        frontier.emplace_back(*next, d + 1);
      }
    }
  }
  FleetTopology out;
  std::set<std::string> kept;
  // The root first, so truncation never drops it; then the rest in id order.
  if (auto it = resources.find(query.root_id); it != resources.end()) {
    out.resources.push_back(it->second);
    kept.insert(it->first);
  }
  for (const std::string& id : included) {
    if (kept.count(id) != 0) {
      continue;
    }
    if (out.resources.size() == query.max_resources) {
      out.truncated = true;
      break;
    }
    auto it = resources.find(id);
    if (it != resources.end()) {
      out.resources.push_back(it->second);
      kept.insert(id);
    }
  }
  std::sort(out.resources.begin(), out.resources.end(),
            [](const FleetResource& a, const FleetResource& b) { return a.id < b.id; });
  for (const FleetRelationship& rel : relationships) {
    if (kept.count(rel.from_id) != 0 && kept.count(rel.to_id) != 0) {
      out.relationships.push_back(rel);
    }
  }
  return out;
}

}  // namespace

FleetTopology BuildTopology(const std::map<std::string, FleetResource>& resources,
                            const std::vector<FleetRelationship>& relationships,
                            const FleetTopologyQuery& query) {
  if (query.root_id.empty()) {
    return WholeTopology(resources, relationships, query.max_resources);
  }
  return RootedTopology(resources, relationships, query);
}

FleetTopology BuildTopology(std::map<std::string, FleetResource>&& resources,
                            const std::vector<FleetRelationship>& relationships,
                            const FleetTopologyQuery& query) {
  if (query.root_id.empty()) {
    return WholeTopology(std::move(resources), relationships, query.max_resources);
  }
  return RootedTopology(resources, relationships, query);
}

absl::Status ValidateLogQuery(const FleetLogQuery& query) {
  if (query.max_lines == 0 || query.max_lines > kFleetMaxLogLines) {
    return absl::InvalidArgumentError("max_lines must be 1..1000");
  }
  if (query.max_bytes == 0 || query.max_bytes > kFleetMaxLogBytes) {
    return absl::InvalidArgumentError("max_bytes must be 1..262144");
  }
  return absl::OkStatus();
}

FleetLogExcerpt ExcerptLines(const std::vector<TimedLine>& lines, const FleetLogQuery& query) {
  FleetLogExcerpt out;
  std::size_t bytes = 0;
  std::vector<std::string> newest_first;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (query.since.has_value() && it->at < *query.since) {
      break;  // lines are oldest first, so everything older follows
    }
    std::string line = Rfc3339(it->at) + " " + it->text;
    if (newest_first.size() == query.max_lines || bytes + line.size() > query.max_bytes) {
      out.truncated = true;
      break;
    }
    bytes += line.size();
    newest_first.push_back(std::move(line));
  }
  out.lines.assign(std::make_move_iterator(newest_first.rbegin()),
                   std::make_move_iterator(newest_first.rend()));
  return out;
}

absl::Status ValidateMetricQuery(const FleetMetricQuery& query) {
  if (query.metric.empty()) {
    return absl::InvalidArgumentError("metric is required");
  }
  if (!(query.start < query.end)) {
    return absl::InvalidArgumentError("start must be before end");
  }
  if (query.max_points == 0 || query.max_points > kFleetMaxMetricPoints) {
    return absl::InvalidArgumentError("max_points must be 1..5000");
  }
  return absl::OkStatus();
}

std::vector<FleetMetricPoint> SelectPoints(const std::vector<FleetMetricPoint>& points,
                                           const FleetMetricQuery& query) {
  std::vector<FleetMetricPoint> window;
  for (const FleetMetricPoint& p : points) {
    if (p.at >= query.start && p.at < query.end) {
      window.push_back(p);
    }
  }
  if (window.size() <= query.max_points) {
    return window;
  }
  std::vector<FleetMetricPoint> out;
  out.reserve(query.max_points);
  const std::size_t n = window.size();
  for (std::size_t b = 0; b < query.max_points; ++b) {
    const std::size_t begin = b * n / query.max_points;
    const std::size_t end = (b + 1) * n / query.max_points;
    double sum = 0;
    for (std::size_t i = begin; i < end; ++i) {
      sum += window[i].value;
    }
    out.push_back({window[end - 1].at, sum / static_cast<double>(end - begin)});
  }
  return out;
}

absl::StatusOr<std::string> ResolveAmong(std::string_view reference,
                                         const std::vector<ReferenceCandidate>& candidates) {
  if (reference.empty() || reference.size() > kMaxResourceIdBytes) {
    return absl::InvalidArgumentError("a reference must be 1..256 bytes");
  }
  for (const char c : reference) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7f) {
      return absl::InvalidArgumentError("a reference must be printable ASCII without spaces");
    }
  }
  for (const ReferenceCandidate& c : candidates) {
    if (c.id == reference) {
      return c.id;
    }
  }
  const std::string wanted = AsciiLower(reference);
  std::set<std::string> matches;
  for (const ReferenceCandidate& c : candidates) {
    for (const std::string& alias : c.aliases) {
      if (!alias.empty() && AsciiLower(alias) == wanted) {
        matches.insert(c.id);
      }
    }
  }
  if (matches.empty()) {
    return absl::NotFoundError("no resource matches the reference '" + std::string(reference) +
                               "'");
  }
  if (matches.size() > 1) {
    std::string list;
    for (const std::string& id : matches) {
      list += (list.empty() ? "" : ", ") + id;
    }
    return absl::FailedPreconditionError("the reference '" + std::string(reference) +
                                         "' is ambiguous; it matches " + list);
  }
  return *matches.begin();
}

}  // namespace pulse::core::fleetq
