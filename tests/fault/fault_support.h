// Shared pieces of the fault-injection suite (tests/fault): direct reads of a server's SQLite
// file (a separate connection, as an operator's sqlite3 would open it), the governed action
// round trip over HTTP, and a tmpfs mount that is unmounted on destruction. Everything here
// drives the real pulse-server through tests/e2e/server/server_harness.h.
// Not thread-safe unless a function says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server_harness.h"

namespace pulse::testing::fault {

// <data_dir>/pulse.db.
std::string DatabasePath(const std::string& data_dir);

// Runs `sql` (one integer column, one row) on a fresh read-only connection to the data dir's
// database and returns the value; REQUIREs success. Safe while the server runs (WAL readers
// never block its writer).
std::int64_t CountRows(const std::string& data_dir, const std::string& sql);
// Like CountRows for one text column: every row, in order.
std::vector<std::string> TextRows(const std::string& data_dir, const std::string& sql);
// PRAGMA integrity_check on a fresh connection: "ok" when the file is sound.
std::string IntegrityCheck(const std::string& data_dir);

// The durable evidence of one action in the database, read directly.
struct ActionRows {
  std::string state;                  // actions.state ("" when there is no such row)
  std::int64_t dispatches = 0;        // action_dispatches rows (admissions into executing)
  std::int64_t executing_events = 0;  // action_events entering executing
  std::int64_t terminal_events = 0;   // action_events entering completed or failed
  std::int64_t results = 0;           // action_results rows
  std::int64_t audit_dispatch_started = 0;
  std::int64_t audit_planned = 0;
  std::string execution_status;  // action_results.execution_status ("" when none)
};
ActionRows ReadActionRows(const std::string& data_dir, const std::string& action_id);
// CHECKs that the action ran exactly once and settled: it is in `state`, with
// `execution_status` (unless empty), one admission (action_dispatches row), one executing and
// one terminal event, one result, one `planned` and one `dispatch_started` audit row.
void CheckRanOnce(const std::string& data_dir, const std::string& action_id,
                  const std::string& state, const std::string& execution_status);

// POST /api/actions/plan for `capability` on `resource` with `request_id`: the reply as is.
e2e::Reply PlanAction(int port, const std::string& token, const std::string& request_id,
                      const std::string& resource, const std::string& capability,
                      const std::string& params_json = "{}");
// POST /api/actions/{id}/execute.
e2e::Reply ExecuteAction(int port, const std::string& token, const std::string& action_id);
// GET /api/actions/{id} and its audit.state ("" when the request failed).
std::string ActionState(int port, const std::string& token, const std::string& action_id);

// A tmpfs of `bytes` mounted on a fresh directory, unmounted (lazily) and removed on
// destruction. ok() is false, with the reason in error(), where the machine forbids mounting.
class TmpfsMount {
 public:
  explicit TmpfsMount(std::uint64_t bytes);
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  bool ok() const { return mounted_; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string error_;
  bool mounted_ = false;
};

// Writes zeros to `path` until the filesystem reports ENOSPC (or EDQUOT/EFBIG); returns the
// number of bytes written. The file is kept (delete it to free the space).
std::uint64_t FillUntilFull(const std::string& path);

}  // namespace pulse::testing::fault
