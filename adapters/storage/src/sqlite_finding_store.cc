#include "pulse/adapters/storage/sqlite_finding_store.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "notification_rows.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/findings/finding_json.h"
#include "pulse/core/model/finding_types.h"
#include "pulse/core/notifications/notification_events.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

// Storage-identity words matched in SQL; longer identities are narrowed by the first ones and
// decided by core::MatchesRelatedResource.
constexpr std::size_t kMaxIdentityWords = 8;

// The stored form of a finding, checked to decode back to exactly `finding`.
absl::StatusOr<std::string> EncodeFinding(const core::Finding& finding) {
  std::string json = core::FindingToJson(finding);
  absl::StatusOr<core::Finding> back = core::FindingFromJson(json);
  if (!back.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("finding cannot be stored: ", back.status().message()));
  }
  if (*back != finding) {
    return absl::InvalidArgumentError(
        "finding cannot be stored exactly: a text field is not valid UTF-8 or holds a NUL, or a "
        "number is not finite");
  }
  return json;
}

absl::StatusOr<core::StoredFinding> DecodeRow(SQLite::Statement& row) {
  absl::StatusOr<core::Finding> finding = core::FindingFromJson(row.getColumn(1).getString());
  if (!finding.ok()) {
    return absl::DataLossError(absl::StrCat("stored finding ", row.getColumn(0).getString(),
                                            " does not decode: ", finding.status().message()));
  }
  return core::StoredFinding{*std::move(finding), row.getColumn(2).getInt64()};
}

// A finding's row, copied out under the connection lock and decoded (DecodeRaw) after it is
// released: decoding dominates the cost of a read of many findings, and every other request
// waits for that lock.
struct RawRow {
  std::string id;
  std::string json;
  std::int64_t version = 0;
};

// The row of a SELECT id, record_json, version.
RawRow CopyRow(SQLite::Statement& q) {
  return RawRow{q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt64()};
}

absl::StatusOr<core::StoredFinding> DecodeRaw(const RawRow& row) {
  absl::StatusOr<core::Finding> finding = core::FindingFromJson(row.json);
  if (!finding.ok()) {
    return absl::DataLossError(
        absl::StrCat("stored finding ", row.id, " does not decode: ", finding.status().message()));
  }
  return core::StoredFinding{*std::move(finding), row.version};
}

// The time-independent half of core::IsActive, kept as a column so List can pre-filter in SQL.
// It must never be narrower than IsActive (List re-checks IsActive on every row it reads); the
// contract's activity filter test pins the two together.
bool IsOpen(const core::Finding& f) {
  return !f.resolved_at.has_value() && !f.suppressed && !f.dismissed_reason.has_value();
}

// The list order's columns (migration 9): severity_key ascending is most severe first,
// detected_key ascending is newest first, so one ascending index serves the whole order.
int SeverityKey(core::Severity severity) { return 3 - core::SeverityRank(severity); }

std::int64_t DetectedKey(absl::Time detected_at) {
  const std::int64_t ns = absl::ToUnixNanos(detected_at);  // saturating
  return ns == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max()
                                                        : -ns;
}

// Rows read per statement while filling a page: a page of `limit` rarely needs more, since the
// SQL filter is exact except for snoozes that lapse between Puts (IsActive decides those).
constexpr std::size_t kPageBatchSlack = 16;

// What a read of the earliest snooze end answers: its error, or that instant (nullopt: none).
absl::StatusOr<std::optional<absl::Time>> EarliestSnoozeEnd(
    const absl::Status& status, const std::optional<std::int64_t>& earliest_ns) {
  if (!status.ok()) {
    return status;
  }
  if (!earliest_ns.has_value()) {
    return std::optional<absl::Time>();
  }
  return std::optional<absl::Time>(absl::FromUnixNanos(*earliest_ns));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteFindingStore>> SqliteFindingStore::Open(
    SqliteDatabase& database) {
  return std::make_unique<SqliteFindingStore>(database);
}

absl::StatusOr<core::StoredFinding> SqliteFindingStore::Get(std::string_view id) const {
  std::optional<core::StoredFinding> found;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, "SELECT id, record_json, version FROM findings WHERE id = ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, std::string(id));
    if (!q.executeStep()) {
      return absl::OkStatus();
    }
    absl::StatusOr<core::StoredFinding> stored = DecodeRow(q);
    if (!stored.ok()) {
      return stored.status();
    }
    found = *std::move(stored);
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (!found.has_value()) {
    return absl::NotFoundError("no such finding");
  }
  return *std::move(found);
}

absl::StatusOr<std::vector<core::StoredFinding>> SqliteFindingStore::GetBatch(
    const std::vector<std::string>& ids) const {
  // One read transaction and one prepared statement for the batch (a seek by primary key per
  // id); the rows are copied out under the connection lock and decoded after it is released.
  std::vector<RawRow> rows;
  rows.reserve(ids.size());
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    rows.clear();
    Prepared prepared_q(db, "SELECT record_json, version FROM findings WHERE id = ?");
    SQLite::Statement& q = *prepared_q;
    for (const std::string& id : ids) {
      q.reset();
      q.bind(1, id);
      if (q.executeStep()) {
        rows.push_back(RawRow{id, q.getColumn(0).getString(), q.getColumn(1).getInt64()});
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  std::vector<core::StoredFinding> out;
  out.reserve(rows.size());
  for (RawRow& row : rows) {
    absl::StatusOr<core::StoredFinding> stored = DecodeRaw(row);
    if (!stored.ok()) {
      return stored.status();
    }
    out.push_back(*std::move(stored));
  }
  return out;
}

absl::StatusOr<std::vector<core::StoredFinding>> SqliteFindingStore::List(
    const core::FindingFilter& filter) const {
  std::optional<std::int64_t> active_ns;
  if (filter.active_at.has_value()) {
    // Saturating is safe here: the SQL clause only narrows, and IsActive decides below.
    active_ns = absl::ToUnixNanos(*filter.active_at);
  }
  // Only constant fragments are concatenated; every value is bound.
  std::string sql = "SELECT id, record_json, version FROM findings WHERE 1 = 1";
  if (filter.resource_id.has_value()) {
    sql += " AND resource_id = :resource";
  }
  if (filter.category.has_value()) {
    sql += " AND category = :category";
  }
  // The words of a storage identity, each bound as a LIKE pattern (words are [a-z0-9] only, so
  // they hold no wildcard; LIKE is ASCII case-insensitive like the core's fold); the first
  // kMaxIdentityWords suffice, since the rows are re-checked.
  std::vector<std::string> identity_words;
  if (filter.related_to.has_value()) {
    // Each term is served by an index (findings_by_resource, findings_on_storage); the rows are
    // re-checked after decoding. Display names take no part (RelatedResourceFilter).
    const core::RelatedResourceFilter& related = *filter.related_to;
    std::string terms;
    if (!related.resource_id.empty()) {
      terms += "resource_id = :related_id";
    }
    for (const std::string& word : core::StorageIdentityWords(related.storage_identity)) {
      if (identity_words.size() == kMaxIdentityWords) {
        break;
      }
      identity_words.push_back(absl::StrCat("%", word, "%"));
    }
    if (!identity_words.empty()) {  // an identity without a word matches nothing
      terms += terms.empty() ? "(" : " OR (";
      terms += "may_be_storage = 1";
      for (std::size_t i = 0; i < identity_words.size(); ++i) {
        absl::StrAppend(&terms, " AND resource_id LIKE :word", i);
      }
      terms += ")";
    }
    sql += terms.empty() ? " AND 0 = 1" : absl::StrCat(" AND (", terms, ")");
  }
  if (active_ns.has_value()) {
    sql += " AND is_open = 1 AND (snoozed_until_ns IS NULL OR snoozed_until_ns <= :now)";
  }
  sql += " ORDER BY id";
  // Rows are copied out under the connection lock and decoded after it is released: decoding
  // dominates the cost of a list, and every other request waits for that lock.
  std::vector<RawRow> rows;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, sql);
    SQLite::Statement& q = *prepared_q;
    if (filter.resource_id.has_value()) {
      q.bind(":resource", *filter.resource_id);
    }
    if (filter.category.has_value()) {
      q.bind(":category", std::string(core::ToString(*filter.category)));
    }
    if (filter.related_to.has_value() && !filter.related_to->resource_id.empty()) {
      q.bind(":related_id", filter.related_to->resource_id);
    }
    for (std::size_t i = 0; i < identity_words.size(); ++i) {
      q.bind(absl::StrCat(":word", i).c_str(), identity_words[i]);
    }
    if (active_ns.has_value()) {
      q.bind(":now", static_cast<std::int64_t>(*active_ns));
    }
    while (q.executeStep()) {
      rows.push_back(CopyRow(q));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  std::vector<core::StoredFinding> out;
  out.reserve(rows.size());
  for (RawRow& row : rows) {
    absl::StatusOr<core::StoredFinding> stored = DecodeRaw(row);
    if (!stored.ok()) {
      return stored.status();
    }
    if (filter.active_at.has_value() && !core::IsActive(stored->finding, *filter.active_at)) {
      continue;
    }
    if (filter.related_to.has_value() &&
        !core::MatchesRelatedResource(*filter.related_to, stored->finding)) {
      continue;
    }
    out.push_back(*std::move(stored));
  }
  return out;
}

absl::StatusOr<std::vector<core::StoredFinding>> SqliteFindingStore::ListPage(
    const core::FindingPageQuery& query) const {
  if (query.after.has_value() && query.after->id.empty()) {
    return absl::InvalidArgumentError("page position without an id");
  }
  std::vector<core::StoredFinding> out;
  if (query.limit == 0) {
    return out;
  }
  // Only constant fragments are concatenated; every value is bound. The row value comparison
  // and ORDER BY follow findings_open_page / findings_page / findings_resource_page, so SQLite
  // seeks to the cursor and reads forward: the cost is the page, not the store.
  std::string sql = "SELECT id, record_json, version, severity_key, detected_key FROM findings";
  sql += query.resource_id.has_value() ? " WHERE resource_id = :resource" : " WHERE 1 = 1";
  const char* active = "is_open = 1 AND (snoozed_until_ns IS NULL OR snoozed_until_ns <= :now)";
  // Hidden findings (snoozed, dismissed, suppressed) are the rows neither active nor resolved;
  // core::InFindingPage has the last word on each row read.
  // Only the active filter names :now (SQLiteCpp refuses to bind a name the statement lacks).
  const bool binds_now = !query.include_hidden;
  if (query.include_resolved && query.include_hidden) {
    // every row
  } else if (query.include_hidden) {
    sql += " AND is_resolved = 0";
  } else if (query.include_resolved) {
    absl::StrAppend(&sql, " AND ((", active, ") OR is_resolved = 1)");
  } else {
    absl::StrAppend(&sql, " AND ", active);
  }
  sql += " AND severity_key <= :max_key";
  sql += " AND (severity_key, detected_key, id) > (:after_key, :after_detected, :after_id)";
  sql += " ORDER BY severity_key, detected_key, id LIMIT :batch";

  std::int64_t after_key = -1;
  std::int64_t after_detected = std::numeric_limits<std::int64_t>::min();
  std::string after_id;
  if (query.after.has_value()) {
    after_key = SeverityKey(query.after->severity);
    after_detected = DetectedKey(query.after->detected_at);
    after_id = query.after->id;
  }
  const std::size_t batch = query.limit + kPageBatchSlack;
  const std::int64_t now_ns = absl::ToUnixNanos(query.now);
  // Each batch continues after the last row read, until the page is full or the range ends.
  while (out.size() < query.limit) {
    std::vector<RawRow> rows;
    absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
      Prepared prepared_q(db, sql);
      SQLite::Statement& q = *prepared_q;
      if (query.resource_id.has_value()) {
        q.bind(":resource", *query.resource_id);
      }
      if (binds_now) {
        q.bind(":now", static_cast<std::int64_t>(now_ns));
      }
      q.bind(":max_key", static_cast<std::int64_t>(SeverityKey(query.min_severity)));
      q.bind(":after_key", after_key);
      q.bind(":after_detected", after_detected);
      q.bind(":after_id", after_id);
      q.bind(":batch", static_cast<std::int64_t>(batch));
      while (q.executeStep()) {
        rows.push_back(CopyRow(q));
        after_key = q.getColumn(3).getInt64();
        after_detected = q.getColumn(4).getInt64();
        after_id = rows.back().id;
      }
      return absl::OkStatus();
    });
    if (!status.ok()) {
      return status;
    }
    for (RawRow& row : rows) {
      if (out.size() == query.limit) {
        break;
      }
      absl::StatusOr<core::StoredFinding> stored = DecodeRaw(row);
      if (!stored.ok()) {
        return stored.status();
      }
      if (!core::InFindingPage(query, stored->finding)) {
        continue;
      }
      out.push_back(*std::move(stored));
    }
    if (rows.size() < batch) {
      break;
    }
  }
  return out;
}

absl::StatusOr<std::optional<absl::Time>> SqliteFindingStore::NextSnoozeEnd(
    const core::FindingPageQuery& query,
    const std::optional<core::FindingPagePosition>& through) const {
  if (query.include_resolved || query.include_hidden) {
    return absl::InvalidArgumentError("snooze ends are reported for active-only pages");
  }
  if ((query.after.has_value() && query.after->id.empty()) ||
      (through.has_value() && through->id.empty())) {
    return absl::InvalidArgumentError("page position without an id");
  }
  // The same range as ListPage's active query (findings_open_page, or findings_resource_page
  // for one resource), read in the page order from the cursor and stopped past `through` here:
  // SQLite does not end an index range at a row-value upper bound, so a bound in SQL would
  // read on to the end of the store.
  std::string sql = "SELECT snoozed_until_ns, severity_key, detected_key, id FROM findings";
  sql += query.resource_id.has_value() ? " WHERE resource_id = :resource" : " WHERE 1 = 1";
  sql += " AND is_open = 1 AND severity_key <= :max_key";
  sql += " AND (severity_key, detected_key, id) > (:after_key, :after_detected, :after_id)";
  sql += " ORDER BY severity_key, detected_key, id";
  const std::int64_t now_ns = absl::ToUnixNanos(query.now);
  std::optional<std::int64_t> earliest;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    earliest.reset();
    Prepared prepared_q(db, sql);
    SQLite::Statement& q = *prepared_q;
    if (query.resource_id.has_value()) {
      q.bind(":resource", *query.resource_id);
    }
    q.bind(":max_key", static_cast<std::int64_t>(SeverityKey(query.min_severity)));
    if (query.after.has_value()) {
      q.bind(":after_key", static_cast<std::int64_t>(SeverityKey(query.after->severity)));
      q.bind(":after_detected", DetectedKey(query.after->detected_at));
      q.bind(":after_id", query.after->id);
    } else {
      q.bind(":after_key", std::int64_t{-1});
      q.bind(":after_detected", std::numeric_limits<std::int64_t>::min());
      q.bind(":after_id", std::string());
    }
    while (q.executeStep()) {
      if (through.has_value()) {
        const std::tuple<std::int64_t, std::int64_t, std::string_view> row{
            q.getColumn(1).getInt64(), q.getColumn(2).getInt64(),
            std::string_view(static_cast<const char*>(q.getColumn(3).getBlob()),
                             static_cast<std::size_t>(q.getColumn(3).getBytes()))};
        const std::tuple<std::int64_t, std::int64_t, std::string_view> bound{
            SeverityKey(through->severity), DetectedKey(through->detected_at), through->id};
        if (row > bound) {
          break;
        }
      }
      if (q.getColumn(0).isNull()) {
        continue;
      }
      const std::int64_t until = q.getColumn(0).getInt64();
      if (until > now_ns && (!earliest.has_value() || until < *earliest)) {
        earliest = until;
      }
    }
    return absl::OkStatus();
  });
  return EarliestSnoozeEnd(status, earliest);
}

absl::StatusOr<std::vector<core::ActiveFindingCounts>> SqliteFindingStore::CountActiveByResource(
    absl::Time now, const std::vector<std::string>& resource_ids) const {
  absl::StatusOr<core::ActiveFindingCountsUntil> counted =
      CountActiveUntilChange(now, resource_ids);
  if (!counted.ok()) {
    return counted.status();
  }
  return std::move(counted->counts);
}

absl::StatusOr<core::ActiveFindingCountsUntil> SqliteFindingStore::CountActiveUntilChange(
    absl::Time now, const std::vector<std::string>& resource_ids) const {
  std::vector<std::string> ids = resource_ids;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  core::ActiveFindingCountsUntil out;
  std::optional<std::int64_t> earliest;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    out.counts.clear();
    earliest.reset();
    // One seek per resource into findings_open_counts (a covering partial index): no row is
    // decoded and findings of other resources are never read. Per severity: the findings not
    // snoozed at `now`, and the earliest snooze end after it.
    Prepared prepared_q(db,
                        "SELECT severity_key, "
                        "sum(snoozed_until_ns IS NULL OR snoozed_until_ns <= ?2), "
                        "min(CASE WHEN snoozed_until_ns > ?2 THEN snoozed_until_ns END) "
                        "FROM findings WHERE resource_id = ?1 AND is_open = 1 "
                        "GROUP BY severity_key");
    SQLite::Statement& q = *prepared_q;
    const auto now_ns = static_cast<std::int64_t>(absl::ToUnixNanos(now));
    for (const std::string& id : ids) {
      q.bind(1, id);
      q.bind(2, now_ns);
      core::ActiveFindingCounts c{.resource_id = id};
      bool any = false;
      while (q.executeStep()) {
        if (!q.getColumn(2).isNull()) {
          const std::int64_t until = q.getColumn(2).getInt64();
          if (!earliest.has_value() || until < *earliest) {
            earliest = until;
          }
        }
        const std::int64_t n = q.getColumn(1).getInt64();
        if (n == 0) {
          continue;
        }
        any = true;
        switch (q.getColumn(0).getInt()) {
          case 0:
            c.critical += n;
            break;
          case 1:
            c.warning += n;
            break;
          case 2:
            c.watch += n;
            break;
          default:
            c.info += n;
            break;
        }
      }
      q.reset();
      if (any) {
        out.counts.push_back(std::move(c));
      }
    }
    return absl::OkStatus();
  });
  absl::StatusOr<std::optional<absl::Time>> next = EarliestSnoozeEnd(status, earliest);
  if (!next.ok()) {
    return next.status();
  }
  out.next_snooze_end = *next;
  return out;
}

absl::StatusOr<std::vector<core::ActiveFindingKey>> SqliteFindingStore::ListActiveKeys(
    absl::Time now) const {
  std::vector<core::ActiveFindingKey> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    out.clear();
    // findings_active_keys (migration 17) covers the query, in id order: no record is read.
    // The activity test is CountActiveByResource's (is_open and the snooze end, saturating).
    Prepared prepared_q(db,
                        "SELECT id, resource_id, severity_key FROM findings INDEXED BY "
                        "findings_active_keys WHERE is_open = 1 "
                        "AND (snoozed_until_ns IS NULL OR snoozed_until_ns <= ?) ORDER BY id");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, static_cast<std::int64_t>(absl::ToUnixNanos(now)));
    static constexpr core::Severity kByKey[] = {core::Severity::kCritical, core::Severity::kWarning,
                                                core::Severity::kWatch, core::Severity::kInfo};
    while (q.executeStep()) {
      out.push_back(core::ActiveFindingKey{q.getColumn(0).getString(), q.getColumn(1).getString(),
                                           kByKey[std::clamp(q.getColumn(2).getInt(), 0, 3)]});
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

absl::StatusOr<std::vector<core::StoredFinding>> SqliteFindingStore::ListAwaitingFixOutcome()
    const {
  // The partial index findings_awaiting_fix (migration 17) holds exactly these rows; the WHERE
  // term repeats its condition so SQLite uses it. Copied out under the lock, decoded after.
  std::vector<RawRow> rows;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    rows.clear();
    Prepared prepared_q(db,
                        "SELECT id, record_json, version FROM findings INDEXED BY "
                        "findings_awaiting_fix WHERE awaits_fix = 1 ORDER BY id");
    SQLite::Statement& q = *prepared_q;
    while (q.executeStep()) {
      rows.push_back(CopyRow(q));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  std::vector<core::StoredFinding> out;
  out.reserve(rows.size());
  for (RawRow& row : rows) {
    absl::StatusOr<core::StoredFinding> stored = DecodeRaw(row);
    if (!stored.ok()) {
      return stored.status();
    }
    out.push_back(*std::move(stored));
  }
  return out;
}

absl::StatusOr<core::PatrolFindingCounts> SqliteFindingStore::CountPatrolFindings(
    absl::Time since, absl::Time now) const {
  core::PatrolFindingCounts out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    // Two index-only counts (migration 15): findings_seen holds (is_runtime, last_seen_ns,
    // severity_key) for every finding, findings_open_issues (is_runtime, severity_key,
    // snoozed_until_ns, is_open) for the open ones. No record is read. A time outside int64
    // nanoseconds (before 1678, after 2262) compares as the bound it saturates to, which is
    // exact unless both sides of a comparison saturate to the same bound.
    Prepared prepared_seen(db,
                           "SELECT count(*), coalesce(sum(severity_key <= 1), 0) FROM findings "
                           "WHERE is_runtime = 0 AND last_seen_ns >= ?");
    SQLite::Statement& seen = *prepared_seen;
    seen.bind(1, static_cast<std::int64_t>(absl::ToUnixNanos(since)));
    if (seen.executeStep()) {
      out.seen_since = seen.getColumn(0).getInt64();
      out.issues_seen_since = seen.getColumn(1).getInt64();
    }
    Prepared prepared_active(db,
                             "SELECT count(*) FROM findings "
                             "WHERE is_runtime = 0 AND is_open = 1 AND severity_key <= 1 "
                             "AND (snoozed_until_ns IS NULL OR snoozed_until_ns <= ?)");
    SQLite::Statement& active = *prepared_active;
    active.bind(1, static_cast<std::int64_t>(absl::ToUnixNanos(now)));
    if (active.executeStep()) {
      out.active_issues = active.getColumn(0).getInt64();
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

namespace {

// A finding ready to write: its checks passed and its JSON and index columns computed outside
// the write transaction.
struct EncodedWrite {
  const core::Finding* finding = nullptr;
  std::int64_t expected_version = 0;
  std::string json;
  std::optional<std::int64_t> snoozed_ns;
  std::string category;
  int open = 0;
  int may_be_storage = 0;
  int severity_key = 0;
  std::int64_t detected_key = 0;
  int resolved = 0;
  std::int64_t last_seen_ns = 0;
  int runtime = 0;
  int awaits_fix = 0;
};

// Put's checks and encoding; InvalidArgument (nothing to write) when they fail.
absl::StatusOr<EncodedWrite> EncodeWrite(const core::Finding& finding,
                                         std::int64_t expected_version) {
  if (finding.id.empty()) {
    return absl::InvalidArgumentError("finding id is empty");
  }
  if (expected_version < 0) {
    return absl::InvalidArgumentError("expected_version is negative");
  }
  absl::StatusOr<std::string> json = EncodeFinding(finding);
  if (!json.ok()) {
    return json.status();
  }
  EncodedWrite out;
  out.finding = &finding;
  out.expected_version = expected_version;
  out.json = *std::move(json);
  if (finding.snoozed_until.has_value()) {
    out.snoozed_ns = absl::ToUnixNanos(*finding.snoozed_until);  // saturating: see List
  }
  out.category = std::string(core::ToString(finding.category));
  out.open = IsOpen(finding) ? 1 : 0;
  out.may_be_storage = core::MayBeStorageResource(finding) ? 1 : 0;
  out.severity_key = SeverityKey(finding.severity);
  out.detected_key = DetectedKey(finding.detected_at);
  out.resolved = finding.resolved_at.has_value() ? 1 : 0;
  out.last_seen_ns = absl::ToUnixNanos(finding.last_seen_at);  // saturating: see the counts
  out.runtime = core::IsRuntimeFinding(finding) ? 1 : 0;
  out.awaits_fix = core::AwaitsFixOutcome(finding) ? 1 : 0;
  return out;
}

// The statements of a write transaction, prepared once however many findings it writes.
class FindingWriter {
 public:
  explicit FindingWriter(SQLite::Database& db)
      : insert_(db,
                "INSERT INTO findings (id, version, resource_id, category, is_open, "
                "snoozed_until_ns, record_json, resource_name, may_be_storage, severity_key, "
                "detected_key, is_resolved, last_seen_ns, is_runtime, awaits_fix) "
                "VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO NOTHING"),
        update_(db,
                "UPDATE findings SET version = version + 1, resource_id = ?, category = ?, "
                "is_open = ?, snoozed_until_ns = ?, record_json = ?, resource_name = ?, "
                "may_be_storage = ?, severity_key = ?, detected_key = ?, is_resolved = ?, "
                "last_seen_ns = ?, is_runtime = ?, awaits_fix = ? WHERE id = ? AND version = ?"),
        // The same update when the finding keeps its resource, category, severity and
        // detection time (a resolve, a note, a snooze...): SQLite rewrites an index only when
        // the SET clause names one of its columns, so this one leaves the resource, category,
        // name, storage and page-order indexes alone. When it matches no row, `update_` runs.
        update_state_(db,
                      "UPDATE findings SET version = version + 1, is_open = ?, "
                      "snoozed_until_ns = ?, record_json = ?, is_resolved = ?, "
                      "last_seen_ns = ?, awaits_fix = ? "
                      "WHERE id = ? AND version = ? AND resource_id = ? AND category = ? "
                      "AND resource_name = ? AND may_be_storage = ? AND severity_key = ? "
                      "AND detected_key = ? AND is_runtime = ?"),
        current_(db, "SELECT version FROM findings WHERE id = ?"),
        before_(db,
                "SELECT severity_key, is_resolved, "
                "coalesce(json_extract(record_json, '$.regression_count'), 0), is_open "
                "FROM findings WHERE id = ?"),
        db_(db) {
    Prepared prepared_any(db, "SELECT 1 FROM notification_channels WHERE enabled = 1 LIMIT 1");
    SQLite::Statement& any = *prepared_any;
    notify_ = any.executeStep();
  }

  // Writes `w` if its expected version is current: OK, or Aborted naming the stored version
  // (nothing written). A failing statement throws (the transaction rolls back).
  absl::Status Write(const EncodedWrite& w) {
    const core::Finding& finding = *w.finding;
    int changed = 0;
    // What the write replaces, for the notification it may be (notification_events.h); read
    // only when a channel could want one.
    std::optional<core::FindingBefore> before;
    if (notify_ && w.expected_version != 0) {
      before_.reset();
      before_.bind(1, finding.id);
      if (before_.executeStep()) {
        static constexpr core::Severity kByKey[] = {core::Severity::kCritical,
                                                    core::Severity::kWarning,
                                                    core::Severity::kWatch, core::Severity::kInfo};
        const int key = std::clamp(before_.getColumn(0).getInt(), 0, 3);
        const bool resolved = before_.getColumn(1).getInt() != 0;
        before = core::FindingBefore{kByKey[key], resolved, before_.getColumn(2).getInt64(),
                                     !resolved && before_.getColumn(3).getInt() == 0};
      }
    }
    if (w.expected_version == 0) {
      insert_.reset();
      insert_.bind(1, finding.id);
      insert_.bind(2, finding.resource_id);
      insert_.bind(3, w.category);
      insert_.bind(4, w.open);
      BindOptionalTime(insert_, 5, w.snoozed_ns);
      insert_.bind(6, w.json);
      insert_.bind(7, finding.resource_name);
      insert_.bind(8, w.may_be_storage);
      insert_.bind(9, w.severity_key);
      insert_.bind(10, w.detected_key);
      insert_.bind(11, w.resolved);
      insert_.bind(12, w.last_seen_ns);
      insert_.bind(13, w.runtime);
      insert_.bind(14, w.awaits_fix);
      changed = insert_.exec();
    } else {
      update_state_.reset();
      update_state_.bind(1, w.open);
      BindOptionalTime(update_state_, 2, w.snoozed_ns);
      update_state_.bind(3, w.json);
      update_state_.bind(4, w.resolved);
      update_state_.bind(5, w.last_seen_ns);
      update_state_.bind(6, w.awaits_fix);
      update_state_.bind(7, finding.id);
      update_state_.bind(8, static_cast<std::int64_t>(w.expected_version));
      update_state_.bind(9, finding.resource_id);
      update_state_.bind(10, w.category);
      update_state_.bind(11, finding.resource_name);
      update_state_.bind(12, w.may_be_storage);
      update_state_.bind(13, w.severity_key);
      update_state_.bind(14, w.detected_key);
      update_state_.bind(15, w.runtime);
      changed = update_state_.exec();
    }
    if (changed == 0 && w.expected_version != 0) {
      update_.reset();
      update_.bind(1, finding.resource_id);
      update_.bind(2, w.category);
      update_.bind(3, w.open);
      BindOptionalTime(update_, 4, w.snoozed_ns);
      update_.bind(5, w.json);
      update_.bind(6, finding.resource_name);
      update_.bind(7, w.may_be_storage);
      update_.bind(8, w.severity_key);
      update_.bind(9, w.detected_key);
      update_.bind(10, w.resolved);
      update_.bind(11, w.last_seen_ns);
      update_.bind(12, w.runtime);
      update_.bind(13, w.awaits_fix);
      update_.bind(14, finding.id);
      update_.bind(15, static_cast<std::int64_t>(w.expected_version));
      changed = update_.exec();
    }
    if (changed == 1) {
      if (!notify_ || (w.expected_version != 0 && !before.has_value())) {
        return absl::OkStatus();
      }
      return QueueIfAny(db_, core::FindingWriteEvent(before, finding));
    }
    current_.reset();
    current_.bind(1, finding.id);
    const std::int64_t version = current_.executeStep() ? current_.getColumn(0).getInt64() : 0;
    return absl::AbortedError(absl::StrCat("finding ", finding.id, " is at version ", version,
                                           ", not ", w.expected_version));
  }

 private:
  SQLite::Statement insert_;
  SQLite::Statement update_;
  SQLite::Statement update_state_;
  SQLite::Statement current_;
  SQLite::Statement before_;
  SQLite::Database& db_;
  bool notify_ = false;  // an enabled notification channel exists
};

}  // namespace

absl::StatusOr<std::int64_t> SqliteFindingStore::Put(const core::Finding& finding,
                                                     std::int64_t expected_version) {
  absl::StatusOr<EncodedWrite> encoded = EncodeWrite(finding, expected_version);
  if (!encoded.ok()) {
    return encoded.status();
  }
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    return FindingWriter(db).Write(*encoded);
  });
  generation_.fetch_add(1, std::memory_order_acq_rel);  // after the commit (or the rollback)
  if (!status.ok()) {
    return status;
  }
  return expected_version + 1;
}

absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> SqliteFindingStore::PutBatch(
    const std::vector<core::FindingWrite>& writes) {
  std::vector<absl::StatusOr<std::int64_t>> results;
  results.reserve(writes.size());
  std::vector<EncodedWrite> encoded;
  encoded.reserve(writes.size());
  std::vector<std::size_t> slots;  // results index of each encoded write
  slots.reserve(writes.size());
  for (const core::FindingWrite& write : writes) {
    absl::StatusOr<EncodedWrite> one = EncodeWrite(write.finding, write.expected_version);
    if (one.ok()) {
      slots.push_back(results.size());
      encoded.push_back(*std::move(one));
      results.emplace_back(write.expected_version + 1);
    } else {
      results.emplace_back(one.status());
    }
  }
  if (encoded.empty()) {
    return results;
  }
  std::vector<absl::Status> outcomes;
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    outcomes.clear();  // a retried transaction starts over
    FindingWriter writer(db);
    for (const EncodedWrite& w : encoded) {
      absl::Status one = writer.Write(w);
      if (!one.ok() && !absl::IsAborted(one)) {
        return one;
      }
      outcomes.push_back(std::move(one));
    }
    return absl::OkStatus();
  });
  generation_.fetch_add(1, std::memory_order_acq_rel);  // after the commit (or the rollback)
  if (!status.ok()) {
    return status;
  }
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (!outcomes[i].ok()) {
      results[slots[i]] = std::move(outcomes[i]);
    }
  }
  return results;
}

absl::StatusOr<std::vector<core::SuppressionRule>> SqliteFindingStore::ListSuppressionRules()
    const {
  std::vector<core::SuppressionRule> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, "SELECT id, rule_json FROM suppression_rules ORDER BY id");
    SQLite::Statement& q = *prepared_q;
    while (q.executeStep()) {
      absl::StatusOr<core::SuppressionRule> rule =
          core::SuppressionRuleFromJson(q.getColumn(1).getString());
      if (!rule.ok()) {
        return absl::DataLossError(absl::StrCat("stored suppression rule ",
                                                q.getColumn(0).getString(),
                                                " does not decode: ", rule.status().message()));
      }
      out.push_back(*std::move(rule));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

absl::Status SqliteFindingStore::PutSuppressionRule(const core::SuppressionRule& rule) {
  if (rule.id.empty()) {
    return absl::InvalidArgumentError("rule id is empty");
  }
  const std::string json = core::SuppressionRuleToJson(rule);
  absl::StatusOr<core::SuppressionRule> back = core::SuppressionRuleFromJson(json);
  if (!back.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("suppression rule cannot be stored: ", back.status().message()));
  }
  if (*back != rule) {
    return absl::InvalidArgumentError(
        "suppression rule cannot be stored exactly: a text field is not valid UTF-8 or holds a "
        "NUL");
  }
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_upsert(db,
                             "INSERT INTO suppression_rules (id, rule_json) VALUES (?, ?) "
                             "ON CONFLICT (id) DO UPDATE SET rule_json = excluded.rule_json");
    SQLite::Statement& upsert = *prepared_upsert;
    upsert.bind(1, rule.id);
    upsert.bind(2, json);
    upsert.exec();
    return absl::OkStatus();
  });
}

absl::Status SqliteFindingStore::DeleteSuppressionRule(std::string_view id) {
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_del(db, "DELETE FROM suppression_rules WHERE id = ?");
    SQLite::Statement& del = *prepared_del;
    del.bind(1, std::string(id));
    if (del.exec() == 0) {
      return absl::NotFoundError("no such suppression rule");
    }
    return absl::OkStatus();
  });
}

}  // namespace pulse::adapters::storage
