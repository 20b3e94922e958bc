// MetricsRegistry: counters, gauges and fixed-bucket histograms rendered in the Prometheus
// text exposition format (version 0.0.4) for GET /metrics. Families are registered once at
// wiring time; updates after that take one uncontended mutex per family and never allocate
// for a label set seen before. Label values are sanitized to UTF-8 and escaped (\\, \", \n),
// so hostile text cannot forge a series or a line. A family holds at most
// kMaxSeriesPerFamily label sets; updates for further ones are ignored, so label values
// taken from requests cannot exhaust memory. Thread-safe; families live as long as the
// registry.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace pulse::adapters::http {

inline constexpr std::size_t kMaxSeriesPerFamily = 4096;
inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Latency buckets in seconds (5 ms .. 10 s).
std::vector<double> DefaultLatencyBuckets();

using LabelValues = std::initializer_list<std::string_view>;

class MetricFamily {
 public:
  virtual ~MetricFamily() = default;
  const std::string& name() const { return name_; }

 protected:
  MetricFamily(std::string name, std::string help, std::vector<std::string> label_names);
  friend class MetricsRegistry;

  // The series key for `values`, or "" (ignored) when the count does not match the label
  // names. Sanitizes each value.
  std::string Key(LabelValues values) const;
  // `{a="x",b="y"}` for a key made by Key(); "" without labels. `extra` is appended last
  // (the histogram's le label).
  std::string LabelText(const std::string& key, std::string_view extra = {}) const;
  virtual void Render(std::string& out) const = 0;

  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
};

class CounterFamily final : public MetricFamily {
 public:
  // Adds `amount` (negative or non-finite amounts are ignored: counters only go up).
  void Increment(LabelValues labels, double amount = 1);
  // The current value of one series (0 when unseen); for tests and self-checks.
  double Value(LabelValues labels) const;

 private:
  using MetricFamily::MetricFamily;
  friend class MetricsRegistry;
  void Render(std::string& out) const override;

  mutable absl::Mutex mu_;
  std::map<std::string, double> series_ ABSL_GUARDED_BY(mu_);
};

class GaugeFamily final : public MetricFamily {
 public:
  void Set(LabelValues labels, double value);
  void Add(LabelValues labels, double delta);
  double Value(LabelValues labels) const;

 private:
  using MetricFamily::MetricFamily;
  friend class MetricsRegistry;
  void Render(std::string& out) const override;

  mutable absl::Mutex mu_;
  std::map<std::string, double> series_ ABSL_GUARDED_BY(mu_);
};

class HistogramFamily final : public MetricFamily {
 public:
  // Records one observation (a non-finite value is ignored).
  void Observe(LabelValues labels, double value);
  // Observations so far in one series.
  std::uint64_t Count(LabelValues labels) const;

 private:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> bounds);
  friend class MetricsRegistry;
  void Render(std::string& out) const override;

  struct Series {
    std::vector<std::uint64_t> buckets;  // per bound, not cumulative
    std::uint64_t count = 0;
    double sum = 0;
  };
  const std::vector<double> bounds_;  // ascending, finite
  mutable absl::Mutex mu_;
  std::map<std::string, Series> series_ ABSL_GUARDED_BY(mu_);
};

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // Registers a family. InvalidArgument for a name outside [a-zA-Z_:][a-zA-Z0-9_:]*, a label
  // name outside [a-zA-Z_][a-zA-Z0-9_]* or starting with "__", a repeated label name, or
  // (histograms) bounds that are empty, not finite or not strictly ascending, or a label
  // named "le"; AlreadyExists for a name registered before. The family lives as long as the
  // registry.
  [[nodiscard]] absl::StatusOr<CounterFamily*> AddCounter(std::string name, std::string help,
                                                          std::vector<std::string> label_names);
  [[nodiscard]] absl::StatusOr<GaugeFamily*> AddGauge(std::string name, std::string help,
                                                      std::vector<std::string> label_names);
  [[nodiscard]] absl::StatusOr<HistogramFamily*> AddHistogram(std::string name, std::string help,
                                                              std::vector<std::string> label_names,
                                                              std::vector<double> bounds);

  // Every family in registration order: "# HELP", "# TYPE", then its series sorted by label
  // values.
  std::string Render() const;

 private:
  absl::Status CheckNew(const std::string& name, const std::vector<std::string>& labels) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<MetricFamily>> families_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::adapters::http
