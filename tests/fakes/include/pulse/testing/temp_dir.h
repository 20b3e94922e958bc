// TempDir: a fresh private directory under the system temp directory (TMPDIR, else /tmp), named
// <prefix>-XXXXXX, removed with everything in it when the object goes. For tests that need a
// data dir, a database file or a socket path. Throws std::runtime_error when no directory can
// be made (a test framework reports it as the failure); never throws from the destructor.
#pragma once

#include <cerrno>
#include <cstdlib>  // mkdtemp (POSIX; glibc declares it here)
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace pulse::testing {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "pulse-test") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot make a temporary directory " + pattern + ": " +
                               std::strerror(errno));
    }
    path_ = std::move(pattern);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // The path of `name` inside the directory (nothing is created).
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

}  // namespace pulse::testing
