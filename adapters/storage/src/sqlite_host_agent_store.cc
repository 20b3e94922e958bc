#include "pulse/adapters/storage/sqlite_host_agent_store.h"

#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/model/api_token.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

constexpr std::size_t kMaxHostBytes = 64;

constexpr char kColumns[] =
    "host, token_id, bound_at_ns, agent_version, last_report_at_ns, report_seq, last_report";

// The agent protocol's host name (adapters/hostagent IsAgentHostName, which this library
// cannot depend on): 1..64 bytes of [A-Za-z0-9._-], starting with a letter or digit. Checked
// here as well so no caller can store a name the protocol could never carry.
absl::Status CheckHost(std::string_view host) {
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (host.empty() || host.size() > kMaxHostBytes || !alnum(host.front())) {
    return absl::InvalidArgumentError(
        "host must be 1..64 bytes of [A-Za-z0-9._-], starting with a letter or digit");
  }
  for (char c : host) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-') {
      return absl::InvalidArgumentError(
          "host must be 1..64 bytes of [A-Za-z0-9._-], starting with a letter or digit");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTokenId(std::string_view token_id, std::string_view field) {
  if (!core::IsApiTokenId(token_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(field), " must be tok_ followed by 16 lowercase hex digits"));
  }
  return absl::OkStatus();
}

// ListBindings' columns: kColumns with an empty last report, so the rows' reports are not read.
constexpr char kBindingColumns[] =
    "host, token_id, bound_at_ns, agent_version, last_report_at_ns, report_seq, ''";

core::HostAgentRecord ReadRecord(SQLite::Statement& q) {
  core::HostAgentRecord r;
  r.host = q.getColumn(0).getString();
  r.token_id = q.getColumn(1).getString();
  r.bound_at = DecodeTime(q.getColumn(2).getInt64());
  r.agent_version = q.getColumn(3).getString();
  r.last_report_at = OptionalTime(q.getColumn(4));
  r.report_seq = static_cast<std::uint64_t>(q.getColumn(5).getInt64());
  r.last_report = q.getColumn(6).getString();
  return r;
}

// The row whose `column` equals `value`, inside the caller's transaction.
std::optional<core::HostAgentRecord> SelectBy(SQLite::Database& db, std::string_view column,
                                              std::string_view value) {
  Prepared prepared_q(
      db, absl::StrCat("SELECT ", kColumns, " FROM host_agents WHERE ", ToAbsl(column), " = ?"));
  SQLite::Statement& q = *prepared_q;
  q.bind(1, std::string(value));
  if (!q.executeStep()) {
    return std::nullopt;
  }
  return ReadRecord(q);
}

absl::StatusOr<core::HostAgentRecord> GetBy(const SqliteDatabase& database, std::string_view column,
                                            std::string_view value, std::string_view missing) {
  std::optional<core::HostAgentRecord> found;
  absl::Status status = ReadTransaction(database, [&](SQLite::Database& db) -> absl::Status {
    found = SelectBy(db, column, value);
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (!found.has_value()) {
    return absl::NotFoundError(ToAbsl(missing));
  }
  return *std::move(found);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteHostAgentStore>> SqliteHostAgentStore::Open(
    SqliteDatabase& database) {
  return std::make_unique<SqliteHostAgentStore>(database);
}

absl::StatusOr<core::HostAgentRecord> SqliteHostAgentStore::Bind(
    std::string_view host, std::string_view token_id, absl::Time at,
    std::optional<std::string_view> replacing_token_id) {
  if (absl::Status s = CheckHost(host); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckTokenId(token_id, "token id"); !s.ok()) {
    return s;
  }
  if (replacing_token_id.has_value()) {
    if (absl::Status s = CheckTokenId(*replacing_token_id, "replaced token id"); !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<std::int64_t> at_ns = EncodeTime(at, "bound_at");
  if (!at_ns.ok()) {
    return at_ns.status();
  }
  core::HostAgentRecord stored;
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    // The token first: a token already serving another host may never move, whatever the
    // caller says it replaces.
    if (std::optional<core::HostAgentRecord> by_token = SelectBy(db, "token_id", token_id);
        by_token.has_value()) {
      if (by_token->host != host) {
        return absl::FailedPreconditionError(
            absl::StrCat("token ", ToAbsl(token_id), " is bound to host ", by_token->host));
      }
      stored = *std::move(by_token);
      return absl::OkStatus();
    }
    std::optional<core::HostAgentRecord> by_host = SelectBy(db, "host", host);
    if (!by_host.has_value()) {
      Prepared prepared_insert(db,
                               "INSERT INTO host_agents (host, token_id, bound_at_ns) "
                               "VALUES (?, ?, ?)");
      SQLite::Statement& insert = *prepared_insert;
      insert.bind(1, std::string(host));
      insert.bind(2, std::string(token_id));
      insert.bind(3, static_cast<std::int64_t>(*at_ns));
      insert.exec();
    } else {
      if (!replacing_token_id.has_value() || *replacing_token_id != by_host->token_id) {
        return absl::FailedPreconditionError(
            absl::StrCat("host ", ToAbsl(host), " is bound to token ", by_host->token_id,
                         "; revoke that token first to bind the host to another"));
      }
      // The new binding starts its own report count; the host's last report stays, so the
      // registry goes on describing the host until the new agent reports.
      Prepared prepared_rebind(db,
                               "UPDATE host_agents SET token_id = ?, bound_at_ns = ?, "
                               "report_seq = 0 WHERE host = ? AND token_id = ?");
      SQLite::Statement& rebind = *prepared_rebind;
      rebind.bind(1, std::string(token_id));
      rebind.bind(2, static_cast<std::int64_t>(*at_ns));
      rebind.bind(3, std::string(host));
      rebind.bind(4, by_host->token_id);
      rebind.exec();
    }
    std::optional<core::HostAgentRecord> now_bound = SelectBy(db, "host", host);
    if (!now_bound.has_value()) {
      return absl::InternalError("the host agent binding was not stored");
    }
    stored = *std::move(now_bound);
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return stored;
}

absl::StatusOr<core::HostAgentRecord> SqliteHostAgentStore::Get(std::string_view host) {
  if (absl::Status s = CheckHost(host); !s.ok()) {
    return s;
  }
  return GetBy(database_, "host", host, "no host agent is registered for this host");
}

absl::StatusOr<core::HostAgentRecord> SqliteHostAgentStore::FindByToken(std::string_view token_id) {
  if (absl::Status s = CheckTokenId(token_id, "token id"); !s.ok()) {
    return s;
  }
  return GetBy(database_, "token_id", token_id, "no host is bound to this token");
}

absl::StatusOr<std::uint64_t> SqliteHostAgentStore::SaveReport(std::string_view host,
                                                               std::string_view token_id,
                                                               std::string_view agent_version,
                                                               std::string_view report_json,
                                                               absl::Time at) {
  if (absl::Status s = CheckHost(host); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckTokenId(token_id, "token id"); !s.ok()) {
    return s;
  }
  if (agent_version.empty() || agent_version.size() > kMaxAgentVersionBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("agent_version must be 1..", kMaxAgentVersionBytes, " bytes"));
  }
  if (absl::Status s = CheckText(agent_version, "agent_version"); !s.ok()) {
    return s;
  }
  if (report_json.empty() || report_json.size() > core::kMaxHostAgentReportBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("report must be 1..", core::kMaxHostAgentReportBytes, " bytes"));
  }
  if (absl::Status s = CheckText(report_json, "report"); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::int64_t> at_ns = EncodeTime(at, "last_report_at");
  if (!at_ns.ok()) {
    return at_ns.status();
  }
  std::uint64_t seq = 0;
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_update(db,
                             "UPDATE host_agents SET agent_version = ?, last_report_at_ns = ?, "
                             "last_report = ?, report_seq = report_seq + 1 "
                             "WHERE host = ? AND token_id = ?");
    SQLite::Statement& update = *prepared_update;
    update.bind(1, std::string(agent_version));
    update.bind(2, static_cast<std::int64_t>(*at_ns));
    update.bind(3, std::string(report_json));
    update.bind(4, std::string(host));
    update.bind(5, std::string(token_id));
    if (update.exec() != 1) {
      return absl::FailedPreconditionError(
          absl::StrCat("host ", ToAbsl(host), " is not bound to token ", ToAbsl(token_id)));
    }
    Prepared prepared_q(db, "SELECT report_seq FROM host_agents WHERE host = ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, std::string(host));
    if (!q.executeStep()) {
      return absl::InternalError("the host agent report was not stored");
    }
    seq = static_cast<std::uint64_t>(q.getColumn(0).getInt64());
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return seq;
}

absl::StatusOr<std::vector<core::HostAgentRecord>> SqliteHostAgentStore::List() {
  std::vector<core::HostAgentRecord> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, absl::StrCat("SELECT ", kColumns, " FROM host_agents ORDER BY host"));
    SQLite::Statement& q = *prepared_q;
    while (q.executeStep()) {
      out.push_back(ReadRecord(q));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

absl::StatusOr<std::vector<core::HostAgentRecord>> SqliteHostAgentStore::ListBindings() {
  std::vector<core::HostAgentRecord> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(
        db, absl::StrCat("SELECT ", kBindingColumns, " FROM host_agents ORDER BY host"));
    SQLite::Statement& q = *prepared_q;
    while (q.executeStep()) {
      out.push_back(ReadRecord(q));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

}  // namespace pulse::adapters::storage
