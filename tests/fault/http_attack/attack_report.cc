// The parts of attack.h that are not the event loop: targets, names, source addresses, the
// descriptor limit and the report's summaries.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "attack.h"
#include "pulse/core/string_view.h"

namespace pulse::testing::attack {

absl::StatusOr<Target> ParseTarget(std::string_view url) {
  std::string_view rest = url;
  if (rest.substr(0, 7) == "http://") {
    rest.remove_prefix(7);
  }
  rest = rest.substr(0, rest.find('/'));
  const std::size_t colon = rest.rfind(':');
  Target target;
  if (colon == std::string_view::npos ||
      !absl::SimpleAtoi(core::ToAbsl(rest.substr(colon + 1)), &target.port) || target.port <= 0 ||
      target.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected http://HOST:PORT, got '", core::ToAbsl(url), "'"));
  }
  target.host = std::string(rest.substr(0, colon));
  if (target.host == "localhost") {
    target.host = "127.0.0.1";
  }
  in_addr addr{};
  if (::inet_pton(AF_INET, target.host.c_str(), &addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("not an IPv4 address: '", target.host, "'"));
  }
  return target;
}

std::uint64_t RaiseFileLimit(std::uint64_t wanted) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return 0;
  }
  if (limit.rlim_cur < wanted) {
    limit.rlim_cur = std::min<rlim_t>(wanted, limit.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur;
}

std::vector<std::string> LoopbackSources(int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(absl::StrCat("127.0.", 1 + i / 254, ".", 1 + i % 254));
  }
  return out;
}

std::string_view AttackName(AttackKind kind) {
  switch (kind) {
    case AttackKind::kRequestLine:
      return "request-line";
    case AttackKind::kHeaderValue:
      return "header-value";
    case AttackKind::kHeaderCount:
      return "header-count";
    case AttackKind::kSlowloris:
      return "slowloris";
    case AttackKind::kStreams:
      return "streams";
  }
  return "?";
}

absl::StatusOr<AttackKind> ParseAttackKind(std::string_view name) {
  for (AttackKind kind : {AttackKind::kRequestLine, AttackKind::kHeaderValue,
                          AttackKind::kHeaderCount, AttackKind::kSlowloris, AttackKind::kStreams}) {
    if (name == AttackName(kind)) {
      return kind;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown attack '", core::ToAbsl(name),
                   "' (request-line, header-value, header-count, slowloris, streams)"));
}

std::int64_t AttackReport::Served() const {
  std::int64_t served = 0;
  for (const auto& [status, count] : statuses) {
    if (status >= 200 && status < 300) {
      served += count;
    }
  }
  return served;
}

std::int64_t AttackReport::StreamsNotReady() const {
  return std::count_if(streams.begin(), streams.end(),
                       [](const StreamRecord& r) { return !r.ready; });
}

std::int64_t AttackReport::StreamsEndedEarly() const {
  return std::count_if(streams.begin(), streams.end(),
                       [](const StreamRecord& r) { return r.ended_early; });
}

std::int64_t AttackReport::MinHeartbeats() const {
  std::int64_t least = -1;
  for (const StreamRecord& r : streams) {
    if (r.ready && (least < 0 || r.heartbeats < least)) {
      least = r.heartbeats;
    }
  }
  return least;
}

Millis AttackReport::MaxSilence() const {
  Millis most{0};
  for (const StreamRecord& r : streams) {
    if (r.ready) {
      most = std::max(most, r.max_silence);
    }
  }
  return most;
}

std::int64_t AttackReport::StreamsShortOfHeartbeats(Millis interval) const {
  std::int64_t short_of = 0;
  for (const StreamRecord& r : streams) {
    const std::int64_t expected = r.held / interval - 1;
    if (r.ready && r.heartbeats < expected) {
      ++short_of;
    }
  }
  return short_of;
}

std::string AttackReport::StatusSummary() const {
  std::string out;
  for (const auto& [status, count] : statuses) {
    absl::StrAppend(&out, out.empty() ? "" : ",", status, ":", count);
  }
  return out.empty() ? "none" : out;
}

void AttackReport::Absorb(const AttackReport& later) {
  elapsed += later.elapsed;
  stopped_early = stopped_early || later.stopped_early;
  opened += later.opened;
  connect_failed += later.connect_failed;
  closed_by_server += later.closed_by_server;
  open_at_end += later.open_at_end;
  outlived += later.outlived;
  longest_open = std::max(longest_open, later.longest_open);
  for (const auto& [status, count] : later.statuses) {
    statuses[status] += count;
  }
  bytes_sent += later.bytes_sent;
  bytes_received += later.bytes_received;
  ramp = std::max(ramp, later.ramp);
  streams.insert(streams.end(), later.streams.begin(), later.streams.end());
}

}  // namespace pulse::testing::attack
