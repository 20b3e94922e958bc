#include "fault_support.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace pulse::testing::fault {
namespace {

std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') {
      out += '\'';
    }
  }
  return out + "'";
}

}  // namespace

std::string DatabasePath(const std::string& data_dir) { return data_dir + "/pulse.db"; }

std::int64_t CountRows(const std::string& data_dir, const std::string& sql) {
  try {
    SQLite::Database db(DatabasePath(data_dir), SQLite::OPEN_READONLY);
    SQLite::Statement query(db, sql);
    REQUIRE(query.executeStep());
    return query.getColumn(0).getInt64();
  } catch (const std::exception& e) {
    FAIL("query failed: " << sql << ": " << e.what());
  }
  return -1;
}

std::vector<std::string> TextRows(const std::string& data_dir, const std::string& sql) {
  std::vector<std::string> out;
  try {
    SQLite::Database db(DatabasePath(data_dir), SQLite::OPEN_READONLY);
    SQLite::Statement query(db, sql);
    while (query.executeStep()) {
      out.push_back(query.getColumn(0).getString());
    }
  } catch (const std::exception& e) {
    FAIL("query failed: " << sql << ": " << e.what());
  }
  return out;
}

std::string IntegrityCheck(const std::string& data_dir) {
  const std::vector<std::string> rows = TextRows(data_dir, "PRAGMA integrity_check");
  std::string out;
  for (const std::string& row : rows) {
    out += (out.empty() ? "" : "; ") + row;
  }
  return out;
}

ActionRows ReadActionRows(const std::string& data_dir, const std::string& action_id) {
  const std::string id = Quoted(action_id);
  ActionRows rows;
  const std::vector<std::string> state =
      TextRows(data_dir, "SELECT state FROM actions WHERE id = " + id);
  rows.state = state.empty() ? "" : state.front();
  rows.dispatches =
      CountRows(data_dir, "SELECT count(*) FROM action_dispatches WHERE action_id = " + id);
  rows.executing_events = CountRows(
      data_dir,
      "SELECT count(*) FROM action_events WHERE state = 'executing' AND action_id = " + id);
  rows.terminal_events =
      CountRows(data_dir,
                "SELECT count(*) FROM action_events WHERE state IN ('completed', 'failed') AND "
                "kind = 'transition' AND action_id = " +
                    id);
  rows.results = CountRows(data_dir, "SELECT count(*) FROM action_results WHERE action_id = " + id);
  rows.audit_dispatch_started = CountRows(
      data_dir,
      "SELECT count(*) FROM audit_log WHERE event = 'dispatch_started' AND subject_id = " + id);
  rows.audit_planned = CountRows(
      data_dir, "SELECT count(*) FROM audit_log WHERE event = 'planned' AND subject_id = " + id);
  const std::vector<std::string> status =
      TextRows(data_dir, "SELECT execution_status FROM action_results WHERE action_id = " + id);
  rows.execution_status = status.empty() ? "" : status.front();
  return rows;
}

void CheckRanOnce(const std::string& data_dir, const std::string& action_id,
                  const std::string& state, const std::string& execution_status) {
  const ActionRows rows = ReadActionRows(data_dir, action_id);
  INFO("action " << action_id);
  CHECK(rows.state == state);
  if (!execution_status.empty()) {
    CHECK(rows.execution_status == execution_status);
  }
  CHECK(rows.dispatches == 1);
  CHECK(rows.executing_events == 1);
  CHECK(rows.terminal_events == 1);
  CHECK(rows.results == 1);
  CHECK(rows.audit_planned == 1);
  CHECK(rows.audit_dispatch_started == 1);
}

e2e::Reply PlanAction(int port, const std::string& token, const std::string& request_id,
                      const std::string& resource, const std::string& capability,
                      const std::string& params_json) {
  return e2e::Send(port, "POST", "/api/actions/plan", token,
                   R"({"requestId":")" + request_id + R"(","resourceId":")" + resource +
                       R"(","capabilityName":")" + capability + R"(","params":)" + params_json +
                       R"(,"reason":"fault injection","requestedBy":"fault-suite"})");
}

e2e::Reply ExecuteAction(int port, const std::string& token, const std::string& action_id) {
  return e2e::Send(port, "POST", "/api/actions/" + action_id + "/execute", token,
                   R"({"reason":"fault injection"})");
}

std::string ActionState(int port, const std::string& token, const std::string& action_id) {
  const e2e::Reply reply = e2e::Send(port, "GET", "/api/actions/" + action_id, token);
  if (reply.status != 200) {
    return "";
  }
  return e2e::Str(e2e::Json(reply.body)["audit"], "state");
}

TmpfsMount::TmpfsMount(std::uint64_t bytes) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "pulse-fault-tmpfs-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
  const std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
  if (::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0) {
    mounted_ = true;
  } else {
    error_ = std::string("mount -t tmpfs: ") + std::strerror(errno);
  }
}

TmpfsMount::~TmpfsMount() {
  if (mounted_) {
    ::umount2(path_.c_str(), MNT_DETACH);
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::uint64_t FillUntilFull(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  const std::string block(4096, '\0');
  std::uint64_t written = 0;
  while (true) {
    const ssize_t n = ::write(fd, block.data(), block.size());
    if (n > 0) {
      written += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    INFO("write: " << std::strerror(errno));
    REQUIRE((errno == ENOSPC || errno == EDQUOT || errno == EFBIG));
    break;
  }
  ::fsync(fd);
  ::close(fd);
  return written;
}

}  // namespace pulse::testing::fault
