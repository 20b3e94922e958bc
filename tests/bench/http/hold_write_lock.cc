// hold_write_lock: stands in for another process that holds the write lock on a pulse-server
// data dir's database (an operator's sqlite3 shell, a backup tool), for cmake/bench-http.sh's
// "reads under a foreign write lock" step. Opens <data-dir>/pulse.db, takes SQLite's write
// lock with BEGIN IMMEDIATE, prints "locked" (flushed), holds it for the given time, then
// commits (nothing was written) and prints "released".
// Usage: hold_write_lock --data-dir DIR --millis N      (N: 1..60000)
// Exits 0, or names the failure on stderr and exits 1.
#include <SQLiteCpp/SQLiteCpp.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <thread>

#include "absl/strings/numbers.h"

namespace {

int Fail(std::string_view what) {
  std::fprintf(stderr, "hold_write_lock: %.*s\n", static_cast<int>(what.size()), what.data());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir;
  int millis = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--data-dir") {
      data_dir = argv[i + 1];
    } else if (flag == "--millis") {
      if (!absl::SimpleAtoi(argv[i + 1], &millis)) {
        millis = 0;
      }
    }
  }
  if (data_dir.empty() || millis < 1 || millis > 60000 || argc != 5) {
    return Fail("usage: hold_write_lock --data-dir DIR --millis N (1..60000)");
  }
  try {
    SQLite::Database db(data_dir + "/pulse.db", SQLite::OPEN_READWRITE, /*busy_timeout_ms=*/5000);
    db.exec("BEGIN IMMEDIATE");
    std::printf("locked\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(millis));
    db.exec("COMMIT");
    std::printf("released\n");
    return 0;
  } catch (const std::exception& e) {
    return Fail(e.what());
  }
}
