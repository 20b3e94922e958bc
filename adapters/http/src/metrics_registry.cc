#include "pulse/adapters/http/metrics_registry.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::http {
namespace {

constexpr std::size_t kMaxLabelValueBytes = 256;

bool IsMetricName(std::string_view name) {
  if (name.empty()) {
    return false;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) {
      return false;
    }
  }
  return true;
}

bool IsLabelName(std::string_view name) {
  if (name.empty() || name.substr(0, 2) == "__") {
    return false;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) {
      return false;
    }
  }
  return true;
}

std::string EscapeLabelValue(std::string_view raw) {
  const std::string clean = core::BoundedCleanText(raw, kMaxLabelValueBytes);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    switch (c) {
      case '\\':
        out.append("\\\\");
        break;
      case '"':
        out.append("\\\"");
        break;
      case '\n':
        out.append("\\n");
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : core::SanitizeUtf8(help)) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) {
    return "NaN";
  }
  if (std::isinf(v)) {
    return v > 0 ? "+Inf" : "-Inf";
  }
  return fmt::format("{}", v);
}

void RenderHeader(std::string& out, const std::string& name, const std::string& help,
                  std::string_view type) {
  absl::StrAppend(&out, "# HELP ", name, " ", EscapeHelp(help), "\n");
  absl::StrAppend(&out, "# TYPE ", name, " ", core::ToAbsl(type), "\n");
}

absl::Status CheckBounds(const std::vector<double>& bounds) {
  if (bounds.empty()) {
    return absl::InvalidArgumentError("a histogram needs at least one bucket bound");
  }
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      return absl::InvalidArgumentError("histogram bounds must be finite and strictly ascending");
    }
  }
  return absl::OkStatus();
}

// Stores a new family and returns the registry-owned pointer.
template <class F>
F* Keep(std::vector<std::unique_ptr<MetricFamily>>& families, std::unique_ptr<F> family) {
  F* raw = family.get();
  families.push_back(std::move(family));
  return raw;
}

// The value of `key`'s series, created at zero while the family has room; null once it holds
// kMaxSeriesPerFamily series (the update is then dropped). Call with the family's lock held.
double* SeriesSlot(std::map<std::string, double>& series, std::string key) {
  auto it = series.find(key);
  if (it == series.end()) {
    if (series.size() >= kMaxSeriesPerFamily) {
      return nullptr;
    }
    it = series.emplace(std::move(key), 0.0).first;
  }
  return &it->second;
}

}  // namespace

std::vector<double> DefaultLatencyBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

MetricFamily::MetricFamily(std::string name, std::string help, std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)) {}

std::string MetricFamily::Key(LabelValues values) const {
  if (values.size() != label_names_.size()) {
    return "";
  }
  std::string key;
  std::size_t i = 0;
  for (std::string_view value : values) {
    absl::StrAppend(&key, i == 0 ? "" : ",", label_names_[i], "=\"", EscapeLabelValue(value), "\"");
    ++i;
  }
  // A family without labels has one series; give it a non-empty key.
  return label_names_.empty() ? std::string(1, '-') : key;
}

std::string MetricFamily::LabelText(const std::string& key, std::string_view extra) const {
  const std::string labels = label_names_.empty() ? "" : key;
  if (labels.empty() && extra.empty()) {
    return "";
  }
  std::string out = "{" + labels;
  if (!extra.empty()) {
    absl::StrAppend(&out, labels.empty() ? "" : ",", core::ToAbsl(extra));
  }
  out.push_back('}');
  return out;
}

// ---- counters ----

void CounterFamily::Increment(LabelValues labels, double amount) {
  if (!std::isfinite(amount) || amount < 0) {
    return;
  }
  std::string key = Key(labels);
  if (key.empty()) {
    return;
  }
  absl::MutexLock lock(&mu_);
  if (double* slot = SeriesSlot(series_, std::move(key))) {
    *slot += amount;
  }
}

double CounterFamily::Value(LabelValues labels) const {
  absl::MutexLock lock(&mu_);
  auto it = series_.find(Key(labels));
  return it == series_.end() ? 0 : it->second;
}

void CounterFamily::Render(std::string& out) const {
  RenderHeader(out, name_, help_, "counter");
  absl::MutexLock lock(&mu_);
  for (const auto& [key, value] : series_) {
    absl::StrAppend(&out, name_, LabelText(key), " ", FormatValue(value), "\n");
  }
}

// ---- gauges ----

void GaugeFamily::Set(LabelValues labels, double value) {
  std::string key = Key(labels);
  if (key.empty()) {
    return;
  }
  absl::MutexLock lock(&mu_);
  if (double* slot = SeriesSlot(series_, std::move(key))) {
    *slot = value;
  }
}

void GaugeFamily::Add(LabelValues labels, double delta) {
  std::string key = Key(labels);
  if (key.empty()) {
    return;
  }
  absl::MutexLock lock(&mu_);
  if (double* slot = SeriesSlot(series_, std::move(key))) {
    *slot += delta;
  }
}

double GaugeFamily::Value(LabelValues labels) const {
  absl::MutexLock lock(&mu_);
  auto it = series_.find(Key(labels));
  return it == series_.end() ? 0 : it->second;
}

void GaugeFamily::Render(std::string& out) const {
  RenderHeader(out, name_, help_, "gauge");
  absl::MutexLock lock(&mu_);
  for (const auto& [key, value] : series_) {
    absl::StrAppend(&out, name_, LabelText(key), " ", FormatValue(value), "\n");
  }
}

// ---- histograms ----

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names, std::vector<double> bounds)
    : MetricFamily(std::move(name), std::move(help), std::move(label_names)),
      bounds_(std::move(bounds)) {}

void HistogramFamily::Observe(LabelValues labels, double value) {
  if (!std::isfinite(value)) {
    return;
  }
  std::string key = Key(labels);
  if (key.empty()) {
    return;
  }
  absl::MutexLock lock(&mu_);
  auto it = series_.find(key);
  if (it == series_.end()) {
    if (series_.size() >= kMaxSeriesPerFamily) {
      return;
    }
    Series fresh;
    fresh.buckets.assign(bounds_.size(), 0);
    it = series_.emplace(std::move(key), std::move(fresh)).first;
  }
  Series& s = it->second;
  const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  if (bucket != bounds_.end()) {
    ++s.buckets[static_cast<std::size_t>(bucket - bounds_.begin())];
  }
  ++s.count;
  s.sum += value;
}

std::uint64_t HistogramFamily::Count(LabelValues labels) const {
  absl::MutexLock lock(&mu_);
  auto it = series_.find(Key(labels));
  return it == series_.end() ? 0 : it->second.count;
}

void HistogramFamily::Render(std::string& out) const {
  RenderHeader(out, name_, help_, "histogram");
  absl::MutexLock lock(&mu_);
  for (const auto& [key, s] : series_) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
      cumulative += s.buckets[i];
      absl::StrAppend(&out, name_, "_bucket",
                      LabelText(key, absl::StrCat("le=\"", FormatValue(bounds_[i]), "\"")), " ",
                      cumulative, "\n");
    }
    absl::StrAppend(&out, name_, "_bucket", LabelText(key, "le=\"+Inf\""), " ", s.count, "\n");
    absl::StrAppend(&out, name_, "_sum", LabelText(key), " ", FormatValue(s.sum), "\n");
    absl::StrAppend(&out, name_, "_count", LabelText(key), " ", s.count, "\n");
  }
}

// ---- registry ----

absl::Status MetricsRegistry::CheckNew(const std::string& name,
                                       const std::vector<std::string>& labels) const {
  if (!IsMetricName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("invalid metric name \"", name, "\""));
  }
  std::set<std::string> seen;
  for (const std::string& label : labels) {
    if (!IsLabelName(label) || !seen.insert(label).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("metric ", name, " has an invalid or repeated label \"", label, "\""));
    }
  }
  for (const auto& family : families_) {
    if (family->name() == name) {
      return absl::AlreadyExistsError(absl::StrCat("metric ", name, " is already registered"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CounterFamily*> MetricsRegistry::AddCounter(std::string name, std::string help,
                                                           std::vector<std::string> label_names) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckNew(name, label_names); !s.ok()) {
    return s;
  }
  return Keep(families_, std::unique_ptr<CounterFamily>(new CounterFamily(
                             std::move(name), std::move(help), std::move(label_names))));
}

absl::StatusOr<GaugeFamily*> MetricsRegistry::AddGauge(std::string name, std::string help,
                                                       std::vector<std::string> label_names) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckNew(name, label_names); !s.ok()) {
    return s;
  }
  return Keep(families_, std::unique_ptr<GaugeFamily>(new GaugeFamily(
                             std::move(name), std::move(help), std::move(label_names))));
}

absl::StatusOr<HistogramFamily*> MetricsRegistry::AddHistogram(std::string name, std::string help,
                                                               std::vector<std::string> label_names,
                                                               std::vector<double> bounds) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckNew(name, label_names); !s.ok()) {
    return s;
  }
  if (std::find(label_names.begin(), label_names.end(), "le") != label_names.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("histogram ", name, " may not use the label \"le\""));
  }
  if (absl::Status s = CheckBounds(bounds); !s.ok()) {
    return s;
  }
  return Keep(families_,
              std::unique_ptr<HistogramFamily>(new HistogramFamily(
                  std::move(name), std::move(help), std::move(label_names), std::move(bounds))));
}

std::string MetricsRegistry::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  for (const auto& family : families_) {
    family->Render(out);
  }
  return out;
}

}  // namespace pulse::adapters::http
