#include "pulse/adapters/storage/sqlite_metrics_history.h"

#include <SQLiteCpp/Statement.h>

#include <cmath>
#include <limits>
#include <utility>

#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

struct EncodedPoint {
  const MetricPoint* point;
  std::int64_t at_ns;
};

absl::StatusOr<std::int64_t> CheckPoint(std::string_view target_id, std::string_view metric,
                                        const core::MetricSample& sample) {
  if (target_id.empty() || metric.empty()) {
    return absl::InvalidArgumentError("target and metric are required");
  }
  if (absl::Status s = CheckText(target_id, "metric target id"); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckText(metric, "metric name"); !s.ok()) {
    return s;
  }
  return EncodeTime(sample.at, "sample time");
}

// SQL has no NaN (SQLite stores it as NULL); NULL stands for NaN both ways.
void BindValue(SQLite::Statement& statement, int index, double value) {
  if (std::isnan(value)) {
    statement.bind(index);
  } else {
    statement.bind(index, value);
  }
}

// A time as a bound for the range query, saturating at the representable ends.
std::int64_t Bound(absl::Time t) { return absl::ToUnixNanos(t); }

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteMetricsHistory>> SqliteMetricsHistory::Open(
    SqliteDatabase& database) {
  return std::make_unique<SqliteMetricsHistory>(database);
}

absl::StatusOr<std::vector<core::MetricSample>> SqliteMetricsHistory::Samples(
    std::string_view target_id, std::string_view metric, absl::Time start, absl::Time end) const {
  if (target_id.empty() || metric.empty()) {
    return absl::InvalidArgumentError("target and metric are required");
  }
  if (end < start) {
    return absl::InvalidArgumentError("end is before start");
  }
  std::vector<core::MetricSample> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db,
                        "SELECT at_ns, value FROM metric_samples WHERE target_id = ? AND "
                        "metric = ? AND at_ns >= ? AND at_ns <= ? ORDER BY at_ns");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, std::string(target_id));
    q.bind(2, std::string(metric));
    q.bind(3, static_cast<std::int64_t>(Bound(start)));
    q.bind(4, static_cast<std::int64_t>(Bound(end)));
    while (q.executeStep()) {
      core::MetricSample sample;
      sample.at = DecodeTime(q.getColumn(0).getInt64());
      sample.value = q.getColumn(1).isNull() ? std::numeric_limits<double>::quiet_NaN()
                                             : q.getColumn(1).getDouble();
      out.push_back(sample);
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

absl::Status SqliteMetricsHistory::Append(std::string_view target_id, std::string_view metric,
                                          const core::MetricSample& sample) {
  return AppendBatch({MetricPoint{std::string(target_id), std::string(metric), sample}});
}

absl::Status SqliteMetricsHistory::AppendBatch(const std::vector<MetricPoint>& points) {
  std::vector<EncodedPoint> encoded;
  encoded.reserve(points.size());
  for (const MetricPoint& p : points) {
    absl::StatusOr<std::int64_t> at = CheckPoint(p.target_id, p.metric, p.sample);
    if (!at.ok()) {
      return at.status();
    }
    encoded.push_back({&p, *at});
  }
  if (encoded.empty()) {
    return absl::OkStatus();
  }
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_insert(
        db, "INSERT INTO metric_samples (target_id, metric, at_ns, value) VALUES (?, ?, ?, ?)");
    SQLite::Statement& insert = *prepared_insert;
    for (const EncodedPoint& e : encoded) {
      insert.bind(1, e.point->target_id);
      insert.bind(2, e.point->metric);
      insert.bind(3, static_cast<std::int64_t>(e.at_ns));
      BindValue(insert, 4, e.point->sample.value);
      insert.exec();
      insert.reset();
      insert.clearBindings();
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::int64_t> SqliteMetricsHistory::DeleteBefore(absl::Time cutoff) {
  std::int64_t deleted = 0;
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_del(db, "DELETE FROM metric_samples WHERE at_ns < ?");
    SQLite::Statement& del = *prepared_del;
    del.bind(1, static_cast<std::int64_t>(Bound(cutoff)));
    deleted = del.exec();
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return deleted;
}

}  // namespace pulse::adapters::storage
