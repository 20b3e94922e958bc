#include "pulse/adapters/hostagent/agent_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "fmt/format.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/status_macros.h"

namespace pulse::adapters::hostagent {
namespace {

constexpr int kStateFileVersion = 1;
constexpr std::size_t kMaxReasonBytes = 128;
constexpr std::string_view kStateFileName = "state.json";

std::string_view ToString(AttemptState state) {
  return state == AttemptState::kDone ? "done" : "started";
}

std::optional<AttemptState> ParseAttemptState(std::string_view text) {
  if (text == "started") {
    return AttemptState::kStarted;
  }
  if (text == "done") {
    return AttemptState::kDone;
  }
  return std::nullopt;
}

absl::Status Errno(std::string_view what, const std::string& path) {
  const int err = errno;
  std::string message = fmt::format("{} {}: {}", what, path, std::strerror(err));
  if (err == EACCES || err == EPERM) {
    return absl::PermissionDeniedError(message);
  }
  return absl::UnavailableError(message);
}

// Closes `fd` when it goes out of scope.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) {
      close(fd_);
    }
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

bool WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The whole file when it is at most `max` bytes; nullopt when it does not exist.
absl::StatusOr<std::optional<std::string>> ReadBounded(const std::string& path, std::size_t max) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) {
      return std::optional<std::string>();
    }
    return Errno("cannot open", path);
  }
  FdCloser closer(fd);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        fmt::format("{}: {} is not a regular file", kStateCorrupt, path));
  }
  std::string text;
  std::array<char, 65536> buf{};
  for (;;) {
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return Errno("cannot read", path);
    }
    if (n == 0) {
      break;
    }
    text.append(buf.data(), static_cast<std::size_t>(n));
    if (text.size() > max) {
      return absl::FailedPreconditionError(
          fmt::format("{}: {} is larger than {} bytes", kStateCorrupt, path, max));
    }
  }
  return std::optional<std::string>(std::move(text));
}

absl::StatusOr<AttemptRecord> DecodeRecord(const rapidjson::Value& value, std::size_t index) {
  core::JsonObjectReader r(value, fmt::format("attempts[{}]", index));
  AttemptRecord rec;
  const core::JsonStringRule id{kMaxStateIdBytes, core::JsonPresence::kRequired};
  rec.action_id = r.String("action_id", id).value_or("");
  rec.attempt_id = r.String("attempt_id", id).value_or("");
  rec.state = r.Enum("state", ParseAttemptState, core::JsonPresence::kRequired)
                  .value_or(AttemptState::kStarted);
  std::optional<core::ExecutionStatus> status = r.Enum("status", core::ParseExecutionStatus);
  std::optional<std::string> reason = r.String("reason_code", {kMaxReasonBytes});
  std::optional<std::string> summary = r.String("summary", {kMaxStateSummaryBytes});
  PULSE_RETURN_IF_ERROR(r.Finish());
  const bool has_outcome = status.has_value() || reason.has_value() || summary.has_value();
  if (rec.state == AttemptState::kStarted && has_outcome) {
    return absl::InvalidArgumentError(
        fmt::format("attempts[{}] is started but carries an outcome", index));
  }
  if (rec.state == AttemptState::kDone && !status.has_value()) {
    return absl::InvalidArgumentError(fmt::format("attempts[{}] is done without a status", index));
  }
  rec.status = status.value_or(core::ExecutionStatus::kInconclusive);
  rec.reason_code = reason.value_or("");
  rec.summary = summary.value_or("");
  return rec;
}

}  // namespace

std::string EncodeStateFile(const std::deque<AttemptRecord>& records) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("version", kStateFileVersion);
  w.Key("attempts");
  w.StartArray();
  for (const AttemptRecord& rec : records) {
    w.StartObject();
    w.Member("action_id", rec.action_id);
    w.Member("attempt_id", rec.attempt_id);
    w.Member("state", ToString(rec.state));
    if (rec.state == AttemptState::kDone) {
      w.Member("status", core::ToString(rec.status));
      w.Member("reason_code", rec.reason_code);
      w.Member("summary", rec.summary);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take() + "\n";
}

absl::StatusOr<std::deque<AttemptRecord>> DecodeStateFile(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json, {kMaxStateFileBytes, 4});
  if (!doc.ok()) {
    return doc.status();
  }
  core::JsonObjectReader top(*doc, "state");
  top.Int("version", kStateFileVersion, kStateFileVersion, core::JsonPresence::kRequired);
  const rapidjson::Value* attempts = top.Member("attempts", core::JsonPresence::kRequired);
  if (attempts != nullptr && !attempts->IsArray()) {
    top.Fail("attempts", "must be an array");
  }
  if (absl::Status done = top.Finish(); !done.ok()) {
    return done;
  }
  if (attempts->Size() > kMaxStateAttempts) {
    return absl::InvalidArgumentError(
        fmt::format("state.attempts has more than {} items", kMaxStateAttempts));
  }
  std::deque<AttemptRecord> out;
  for (rapidjson::SizeType i = 0; i < attempts->Size(); ++i) {
    absl::StatusOr<AttemptRecord> rec = DecodeRecord((*attempts)[i], i);
    if (!rec.ok()) {
      return rec.status();
    }
    const bool repeated = std::any_of(out.begin(), out.end(), [&](const AttemptRecord& seen) {
      return seen.action_id == rec->action_id && seen.attempt_id == rec->attempt_id;
    });
    if (repeated) {
      return absl::InvalidArgumentError(
          fmt::format("attempts[{}] repeats the key of an earlier one", i));
    }
    out.push_back(*std::move(rec));
  }
  return out;
}

AgentStateFile::AgentStateFile(std::string dir, int lock_fd, std::deque<AttemptRecord> records)
    : dir_(std::move(dir)),
      path_(dir_ + "/" + std::string(kStateFileName)),
      lock_fd_(lock_fd),
      records_(std::move(records)) {}

AgentStateFile::~AgentStateFile() { close(lock_fd_); }

absl::StatusOr<std::unique_ptr<AgentStateFile>> AgentStateFile::Open(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') {
    dir.pop_back();
  }
  if (dir.empty()) {
    return absl::InvalidArgumentError("the state directory must not be empty");
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Errno("cannot create the state directory", dir);
  }
  const std::string lock_path = dir + "/state.lock";
  const int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd < 0) {
    return Errno("cannot open", lock_path);
  }
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    close(lock_fd);
    return absl::FailedPreconditionError(fmt::format(
        "another pulse-agent is using the state directory {} (it holds {})", dir, lock_path));
  }
  const std::string path = dir + "/" + std::string(kStateFileName);
  absl::StatusOr<std::optional<std::string>> text = ReadBounded(path, kMaxStateFileBytes);
  if (!text.ok()) {
    close(lock_fd);
    return text.status();
  }
  std::deque<AttemptRecord> records;
  if (text->has_value()) {
    absl::StatusOr<std::deque<AttemptRecord>> decoded = DecodeStateFile(**text);
    if (!decoded.ok()) {
      close(lock_fd);
      return absl::FailedPreconditionError(fmt::format(
          "{}: {}: {}; it is not reset automatically (the agent would forget which actions it "
          "ran): move it aside to start afresh",
          kStateCorrupt, path, std::string(decoded.status().message())));
    }
    records = *std::move(decoded);
  }
  return std::unique_ptr<AgentStateFile>(new AgentStateFile(dir, lock_fd, std::move(records)));
}

absl::Status AgentStateFile::Persist() {
  const std::string temp = path_ + ".tmp";
  const std::string text = EncodeStateFile(records_);
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return Errno("cannot write", temp);
  }
  const bool written = WriteAll(fd, text) && fsync(fd) == 0;
  const int write_errno = errno;
  close(fd);
  if (!written) {
    errno = write_errno;
    return Errno("cannot write", temp);
  }
  if (rename(temp.c_str(), path_.c_str()) != 0) {
    return Errno("cannot replace", path_);
  }
  // The rename is durable only once the directory entry is.
  const int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    return Errno("cannot open", dir_);
  }
  const bool synced = fsync(dir_fd) == 0;
  close(dir_fd);
  if (!synced) {
    return Errno("cannot sync", dir_);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<AttemptRecord>> AgentStateFile::Begin(std::string_view action_id,
                                                                   std::string_view attempt_id) {
  if (action_id.empty() || attempt_id.empty() || action_id.size() > kMaxStateIdBytes ||
      attempt_id.size() > kMaxStateIdBytes) {
    return absl::InvalidArgumentError(fmt::format(
        "an action id and an attempt id of 1 to {} bytes are required", kMaxStateIdBytes));
  }
  absl::MutexLock lock(&mu_);
  for (const AttemptRecord& rec : records_) {
    if (rec.action_id == action_id && rec.attempt_id == attempt_id) {
      return std::optional<AttemptRecord>(rec);
    }
  }
  AttemptRecord started;
  started.action_id = std::string(action_id);
  started.attempt_id = std::string(attempt_id);
  records_.push_back(started);
  std::optional<AttemptRecord> dropped;
  if (records_.size() > kMaxStateAttempts) {
    dropped = records_.front();
    records_.pop_front();
  }
  if (absl::Status persisted = Persist(); !persisted.ok()) {
    // Not durable: forget the claim so the caller does not run, and a retry may claim again.
    records_.pop_back();
    if (dropped.has_value()) {
      records_.push_front(*std::move(dropped));
    }
    return persisted;
  }
  return std::optional<AttemptRecord>();
}

absl::Status AgentStateFile::Finish(std::string_view action_id, std::string_view attempt_id,
                                    core::ExecutionStatus status, std::string_view reason_code,
                                    std::string_view summary) {
  absl::MutexLock lock(&mu_);
  auto it = std::find_if(records_.begin(), records_.end(), [&](const AttemptRecord& rec) {
    return rec.action_id == action_id && rec.attempt_id == attempt_id;
  });
  if (it == records_.end() || it->state != AttemptState::kStarted) {
    return absl::NotFoundError(
        fmt::format("attempt {} of {} is not started in {}", attempt_id, action_id, path_));
  }
  it->state = AttemptState::kDone;
  it->status = status;
  // Clean and bounded here, so the file always reads back (DecodeStateFile's bounds).
  it->reason_code = core::BoundedCleanText(reason_code, kMaxReasonBytes);
  it->summary = core::BoundedCleanText(summary, kMaxStateSummaryBytes);
  return Persist();
}

std::optional<AttemptRecord> AgentStateFile::Find(std::string_view action_id,
                                                  std::string_view attempt_id) const {
  absl::MutexLock lock(&mu_);
  for (const AttemptRecord& rec : records_) {
    if (rec.action_id == action_id && rec.attempt_id == attempt_id) {
      return rec;
    }
  }
  return std::nullopt;
}

std::size_t AgentStateFile::size() const {
  absl::MutexLock lock(&mu_);
  return records_.size();
}

}  // namespace pulse::adapters::hostagent
