#include "watch_evidence.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/string_view.h"

namespace pulse::core::patrol_internal {
namespace {

struct MetricRule {
  std::string_view fact;
  double TriageThresholds::*warning;
  double TriageThresholds::*critical;
};

// The facts the triage rules compare with a threshold (triage.h), with the levels in force.
constexpr std::array<MetricRule, 4> kMetricRules = {{
    {"cpu_pct", &TriageThresholds::cpu_pct, &TriageThresholds::cpu_critical_pct},
    {"memory_pct", &TriageThresholds::memory_pct, &TriageThresholds::memory_critical_pct},
    {"disk_pct", &TriageThresholds::disk_pct, &TriageThresholds::disk_critical_pct},
    {"usage_pct", &TriageThresholds::storage_pct, &TriageThresholds::storage_critical_pct},
}};

bool IsMetricFact(std::string_view key) {
  return std::any_of(kMetricRules.begin(), kMetricRules.end(),
                     [key](const MetricRule& rule) { return rule.fact == key; });
}

std::string Clip(std::string_view text) {
  std::string out = TruncateUtf8(text, kWatchEvidenceMaxValueBytes);
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

std::string TimeText(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// "memory_pct 96.0 (warning >= 90, critical >= 98: WARNING)" for each metric fact present;
// sets `over` when one is at or over its warning level.
std::vector<std::string> MetricLines(const FleetStatus& status, const TriageThresholds& t,
                                     bool& over) {
  std::vector<std::string> out;
  for (const MetricRule& rule : kMetricRules) {
    auto it = status.facts.find(std::string(rule.fact));
    double value = 0;
    if (it == status.facts.end() || !absl::SimpleAtod(it->second, &value)) {
      continue;
    }
    const double warning = t.*rule.warning;
    const double critical = t.*rule.critical;
    std::string_view level = value >= critical ? ": CRITICAL" : value >= warning ? ": WARNING" : "";
    over = over || value >= warning;
    out.push_back(absl::StrFormat("%s %.1f (warning >= %g, critical >= %g%s)", rule.fact, value,
                                  warning, critical, level));
  }
  return out;
}

std::string OperatorLine(const OperatorStateProjection& op) {
  std::vector<std::string> parts;
  if (op.maintenance_end_at.has_value()) {
    parts.push_back(
        absl::StrCat("in a maintenance window until ", TimeText(*op.maintenance_end_at)));
  }
  if (op.intentionally_offline) {
    parts.push_back("intentionally offline");
  }
  if (op.muted) {
    parts.push_back("monitoring muted");
  }
  if (op.never_auto_remediate) {
    parts.push_back("never auto-remediate");
  }
  if (op.criticality != Criticality::kUnset) {
    parts.push_back(absl::StrCat("criticality ", ToAbsl(ToString(op.criticality))));
  }
  return absl::StrJoin(parts, ", ");
}

std::string FindingLine(const Finding& f, absl::Time now) {
  std::string line =
      absl::StrCat("    finding ", f.id, " [", f.key, "] ", ToAbsl(ToString(f.severity)), " ",
                   ToAbsl(ToString(f.category)), ", ", ToAbsl(ToString(DeriveLoopState(f, now))),
                   ", \"", Clip(f.title), "\", detected ", TimeText(f.detected_at), ", raised ",
                   f.times_raised, "x, last seen ", TimeText(f.last_seen_at));
  if (f.regression_count > 0) {
    absl::StrAppend(&line, ", regressed ", f.regression_count, "x");
  }
  if (f.investigation_outcome.has_value()) {
    absl::StrAppend(&line, ", investigation ", ToAbsl(ToString(*f.investigation_outcome)));
  }
  std::vector<std::string> events;
  const std::size_t n = f.lifecycle.size();
  for (std::size_t i = n > kWatchEvidenceMaxEvents ? n - kWatchEvidenceMaxEvents : 0; i < n; ++i) {
    const LifecycleEvent& e = f.lifecycle[i];
    events.push_back(absl::StrCat(ToAbsl(ToString(e.type)), " ", TimeText(e.at)));
  }
  if (!events.empty()) {
    absl::StrAppend(&line, "; lifecycle: ", absl::StrJoin(events, ", "));
  }
  return line;
}

struct Rendered {
  std::string text;
  bool notable = false;
  const std::string* id = nullptr;
};

Rendered RenderOne(const ResourceEvidence& e, const TriageThresholds& t, absl::Time now) {
  Rendered r;
  r.id = &e.resource.id;
  const FleetResource& res = e.resource;
  std::string status = e.status.has_value() ? e.status->status : res.status;
  r.text = absl::StrCat("- ", res.id, " \"", Clip(res.name), "\" (", res.type, "): ", Clip(status));
  if (!e.previous_status.empty() && e.previous_status != status) {
    absl::StrAppend(&r.text, " (was ", Clip(e.previous_status), " at the previous run)");
    r.notable = true;
  }
  if (!e.status.has_value()) {
    absl::StrAppend(&r.text, "; status unreadable this run");
  } else if (!e.status->summary.empty()) {
    absl::StrAppend(&r.text, "; ", Clip(e.status->summary));
  }
  r.text += "\n";
  if (e.status.has_value()) {
    bool over = false;
    std::vector<std::string> metrics = MetricLines(*e.status, t, over);
    r.notable = r.notable || over;
    if (!metrics.empty()) {
      absl::StrAppend(&r.text, "    metrics: ", absl::StrJoin(metrics, "; "), "\n");
    }
    std::vector<std::string> facts;
    for (const auto& [key, value] : e.status->facts) {
      if (IsMetricFact(key)) {
        continue;
      }
      if (facts.size() == kWatchEvidenceMaxFacts) {
        facts.push_back("...");
        break;
      }
      facts.push_back(absl::StrCat(Clip(key), "=", Clip(value)));
    }
    if (!facts.empty()) {
      absl::StrAppend(&r.text, "    facts: ", absl::StrJoin(facts, ", "), "\n");
    }
  }
  if (e.restarts_in_window.has_value() && *e.restarts_in_window > 0) {
    absl::StrAppend(&r.text, "    restarts: +", *e.restarts_in_window, " within ",
                    absl::FormatDuration(t.crash_loop_window), "\n");
    r.notable = true;
  }
  if (e.operator_state.has_value()) {
    const std::string op = OperatorLine(*e.operator_state);
    if (!op.empty()) {
      absl::StrAppend(&r.text, "    operator: ", op, "\n");
      r.notable = true;
    }
  }
  const std::size_t shown = std::min(e.findings.size(), kWatchEvidenceMaxFindings);
  for (std::size_t i = 0; i < shown; ++i) {
    absl::StrAppend(&r.text, FindingLine(e.findings[i], now), "\n");
  }
  if (const std::size_t more = e.findings.size() - shown + e.more_findings; more > 0) {
    absl::StrAppend(&r.text, "    ... ", more,
                    " more finding(s): read them with patrol_get_findings\n");
  }
  r.notable = r.notable || !e.findings.empty() || e.more_findings > 0;
  return r;
}

}  // namespace

std::string RenderWatchEvidence(const std::vector<ResourceEvidence>& items,
                                const TriageThresholds& thresholds, absl::Time now,
                                std::size_t withheld, const WatchEvidenceLimits& limits) {
  std::vector<Rendered> rendered;
  rendered.reserve(items.size());
  for (const ResourceEvidence& e : items) {
    rendered.push_back(RenderOne(e, e.thresholds.value_or(thresholds), now));
  }
  std::stable_sort(rendered.begin(), rendered.end(), [](const Rendered& a, const Rendered& b) {
    if (a.notable != b.notable) {
      return a.notable;
    }
    return *a.id < *b.id;
  });
  std::string out = absl::StrCat(
      "Evidence at the start of this run (", items.size(),
      " resource(s) in scope; live status, metrics against the Patrol thresholds, changes since "
      "the previous run, operator state and active findings with their recent lifecycle):\n");
  std::size_t shown = 0;
  for (const Rendered& r : rendered) {
    if (shown == limits.max_resources || out.size() + r.text.size() > limits.max_bytes) {
      break;
    }
    out += r.text;
    ++shown;
  }
  if (shown < rendered.size()) {
    absl::StrAppend(&out, "... ", rendered.size() - shown,
                    " more resource(s) not shown here (the summary is capped at ",
                    limits.max_resources, " resources and ", limits.max_bytes,
                    " bytes): read them with the tools if they matter.\n");
  }
  if (withheld > 0) {
    absl::StrAppend(&out, withheld,
                    " local-only resource(s) withheld from this summary by operator state.\n");
  }
  return out;
}

std::string StatusMemory::Exchange(const std::string& id, const std::string& status) {
  absl::MutexLock lock(&mu_);
  auto it = statuses_.find(id);
  if (it == statuses_.end()) {
    if (statuses_.size() < kMaxResources) {
      statuses_.emplace(id, status);
    }
    return {};
  }
  return std::exchange(it->second, status);
}

}  // namespace pulse::core::patrol_internal
