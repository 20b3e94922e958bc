#include "key_file.h"

#include <fcntl.h>
#include <sodium/core.h>
#include <sodium/crypto_generichash.h>
#include <sodium/randombytes.h>
#include <sodium/utils.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::storage {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

std::string ParentDir(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

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

absl::Status ReadExactly(int fd, unsigned char* out, std::size_t size, const std::string& path) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = read(fd, out + done, size - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return absl::UnavailableError(absl::StrCat("cannot read key file ", path, ": ",
                                                 n == 0 ? "short file" : ErrnoText(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WriteExactly(int fd, const unsigned char* data, std::size_t size,
                          const std::string& path) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot write key file ", path, ": ", ErrnoText(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  return absl::OkStatus();
}

// Opens and vets an existing key file; reads the key into `out`. NotFound when absent.
absl::Status LoadExisting(const std::string& path, unsigned char* out) {
  const int raw = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (raw < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat("key file ", path, " does not exist"));
    }
    if (err == ELOOP) {
      return absl::FailedPreconditionError(
          absl::StrCat("key file ", path, " is a symbolic link; refusing to follow it"));
    }
    return absl::UnavailableError(
        absl::StrCat("cannot open key file ", path, ": ", ErrnoText(err)));
  }
  Fd fd(raw);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot stat key file ", path, ": ", ErrnoText(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("key file ", path, " is not a regular file"));
  }
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "key file %s has mode %04o: group or others may access it, so the key must be "
        "considered exposed. Fix with `chmod 600 %s` (and rotate the key if others read it)",
        path, st.st_mode & 07777, path));
  }
  if (st.st_uid != geteuid()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("key file %s is owned by uid %d, not by this process's uid %d", path,
                        st.st_uid, geteuid()));
  }
  if (st.st_size != static_cast<off_t>(SecretKey::kBytes)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("key file %s has %d bytes, not %d: it is not a Pulse key file or it was "
                        "truncated",
                        path, static_cast<long long>(st.st_size), SecretKey::kBytes));
  }
  return ReadExactly(fd.get(), out, SecretKey::kBytes, path);
}

// Creates the key file atomically. FailedPrecondition-free: AlreadyExists when another
// process created it first (the caller then loads that one).
absl::Status CreateNew(const std::string& path, unsigned char* out) {
  std::array<unsigned char, 8> suffix{};
  randombytes_buf(suffix.data(), suffix.size());
  const std::string tmp =
      absl::StrCat(path, ".tmp.", getpid(), ".", ToHex(suffix.data(), suffix.size()));
  const int raw = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (raw < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot create key file ", path, ": ", ErrnoText(errno)));
  }
  absl::Status status;
  {
    Fd fd(raw);
    randombytes_buf(out, SecretKey::kBytes);
    if (fchmod(fd.get(), 0600) != 0) {
      status = absl::UnavailableError(absl::StrCat("cannot chmod ", tmp, ": ", ErrnoText(errno)));
    }
    if (status.ok()) {
      status = WriteExactly(fd.get(), out, SecretKey::kBytes, tmp);
    }
    if (status.ok() && fsync(fd.get()) != 0) {
      status = absl::UnavailableError(absl::StrCat("cannot fsync ", tmp, ": ", ErrnoText(errno)));
    }
  }
  if (status.ok() && link(tmp.c_str(), path.c_str()) != 0) {
    status = errno == EEXIST ? absl::AlreadyExistsError("key file appeared concurrently")
                             : absl::UnavailableError(absl::StrCat("cannot create key file ", path,
                                                                   ": ", ErrnoText(errno)));
  }
  unlink(tmp.c_str());
  if (!status.ok()) {
    sodium_memzero(out, SecretKey::kBytes);
    return status;
  }
  const std::string dir = ParentDir(path);
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    Fd guard(dir_fd);
    if (fsync(dir_fd) != 0) {
      return absl::UnavailableError(absl::StrCat("cannot fsync ", dir, ": ", ErrnoText(errno)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InitSodium() {
  if (sodium_init() < 0) {
    return absl::InternalError("libsodium failed to initialize");
  }
  return absl::OkStatus();
}

std::string ToHex(const unsigned char* bytes, std::size_t size) {
  std::string hex(size * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), bytes, size);
  hex.pop_back();
  return hex;
}

absl::StatusOr<std::unique_ptr<SecretKey>> SecretKey::LoadOrCreate(const std::string& path,
                                                                   KeyFileMode mode) {
  if (absl::Status s = InitSodium(); !s.ok()) {
    return s;
  }
  auto* key = static_cast<unsigned char*>(sodium_malloc(kBytes));
  if (key == nullptr) {
    return absl::ResourceExhaustedError("cannot allocate protected memory for a key");
  }
  std::unique_ptr<SecretKey> owner(new SecretKey(key));
  absl::Status status = LoadExisting(path, key);
  if (absl::IsNotFound(status)) {
    if (mode == KeyFileMode::kMustExist) {
      return absl::FailedPreconditionError(
          absl::StrCat("key file ", path,
                       " is missing: the secrets in this data dir cannot be opened "
                       "without it. Restore it from a backup"));
    }
    status = CreateNew(path, key);
    if (absl::IsAlreadyExists(status)) {
      status = LoadExisting(path, key);
    }
  }
  if (!status.ok()) {
    return status;
  }
  sodium_mprotect_readonly(key);
  return owner;
}

SecretKey::~SecretKey() {
  // sodium_free zeroes the region before releasing it.
  sodium_free(key_);
}

std::string SecretKey::Id(std::string_view purpose) const {
  const std::string message = absl::StrCat("pulse key id v1: ", core::ToAbsl(purpose));
  std::array<unsigned char, 16> id{};
  crypto_generichash(id.data(), id.size(), reinterpret_cast<const unsigned char*>(message.data()),
                     message.size(), key_, kBytes);
  return ToHex(id.data(), id.size());
}

}  // namespace pulse::adapters::storage
