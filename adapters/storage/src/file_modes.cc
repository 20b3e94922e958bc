#include "file_modes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pulse::adapters::storage {
namespace {

constexpr mode_t kPrivateFile = 0600;

std::string ErrnoText(int err) { return std::strerror(err); }

// Closes a descriptor on every path out of a scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) {
      close(fd_);
    }
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

absl::Status RefuseOpen(const std::string& path, int err) {
  if (err == ELOOP) {
    return absl::FailedPreconditionError(
        absl::StrCat("database file ", path,
                     " is a symbolic link; refusing to follow it (its target's "
                     "permissions are not the data dir's)"));
  }
  return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", ErrnoText(err)));
}

// Vets the open file `fd` at `path` and makes it 0600; appends a sentence to `repairs` when
// its mode changed.
absl::Status MakePrivate(int fd, const std::string& path, bool created,
                         std::vector<std::string>& repairs) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot stat ", path, ": ", ErrnoText(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("database file ", path, " is not a regular file"));
  }
  const mode_t mode = st.st_mode & 07777;
  // Nobody else can reach it: leave an existing file as the operator has it, and give a file
  // made just now the bits a restrictive umask may have taken.
  if ((mode & 077) == 0 && (!created || mode == kPrivateFile)) {
    return absl::OkStatus();
  }
  if (fchmod(fd, kPrivateFile) != 0) {
    return absl::UnavailableError(absl::StrFormat(
        "database file %s has mode %04o and cannot be changed to 0600: %s. Fix with "
        "`chmod 600 %s`",
        path, mode, ErrnoText(errno), path));
  }
  if ((mode & 077) != 0) {
    repairs.push_back(absl::StrFormat(
        "%s had mode %04o; changed to 0600 (group or others could read the database)", path, mode));
  }
  return absl::OkStatus();
}

// The database file itself: created 0600 when missing.
absl::Status SecureMain(const std::string& path, std::vector<std::string>& repairs) {
  bool created = true;
  int raw = open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                 kPrivateFile);
  if (raw < 0 && errno == EEXIST) {
    created = false;
    raw = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  }
  if (raw < 0) {
    return RefuseOpen(path, errno);
  }
  Fd fd(raw);
  return MakePrivate(fd.get(), path, created, repairs);
}

// The log and the index: only changed when they exist (SQLite creates them with the
// database file's mode).
absl::Status SecureCompanion(const std::string& path, std::vector<std::string>& repairs) {
  const int raw = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (raw < 0) {
    return errno == ENOENT ? absl::OkStatus() : RefuseOpen(path, errno);
  }
  Fd fd(raw);
  return MakePrivate(fd.get(), path, /*created=*/false, repairs);
}

}  // namespace

absl::Status CheckPrivateDirectory(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot examine data dir ", dir, ": ", ErrnoText(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("data dir ", dir, " is not a directory"));
  }
  if (st.st_uid != geteuid()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "data dir %s is owned by uid %d, not by this process's uid %d: run pulse-server as the "
        "user that owns it, or give it to this user (`chown`) and `chmod 700 %s`",
        dir, st.st_uid, geteuid(), dir));
  }
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "data dir %s has mode %04o: group or others may reach the database (operator notes, "
        "chat transcripts) and the key files in it. Fix with `chmod 700 %s`",
        dir, st.st_mode & 07777, dir));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> SecureDatabaseFiles(const std::string& database_path) {
  std::vector<std::string> repairs;
  if (absl::Status s = SecureMain(database_path, repairs); !s.ok()) {
    return s;
  }
  for (const char* suffix : {"-wal", "-shm"}) {
    if (absl::Status s = SecureCompanion(absl::StrCat(database_path, suffix), repairs); !s.ok()) {
      return s;
    }
  }
  return repairs;
}

}  // namespace pulse::adapters::storage
