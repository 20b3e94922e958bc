#include "private_dockerd.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"

namespace pulse::docker::testing {
namespace {

namespace fs = std::filesystem;

std::string FindProgram(const std::string& name) {
  std::vector<std::string> dirs = {"/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin"};
  for (const std::string& dir : dirs) {
    const std::string path = dir + "/" + name;
    if (::access(path.c_str(), X_OK) == 0) {
      return path;
    }
  }
  return "";
}

std::string Tail(const std::string& path, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  if (text.size() > bytes) {
    text = text.substr(text.size() - bytes);
  }
  return text;
}

bool Alive(pid_t pid) {
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, WNOHANG) == 0;
}

// Waits up to `limit` for `pid` (our child) to exit.
bool WaitExit(pid_t pid, absl::Duration limit) {
  const absl::Time end = absl::Now() + limit;
  while (absl::Now() < end) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

// Lazily unmounts everything mounted under `dir`, deepest first.
void UnmountUnder(const std::string& dir) {
  std::ifstream mounts("/proc/self/mounts");
  std::vector<std::string> targets;
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream fields(line);
    std::string source, target;
    fields >> source >> target;
    if (target.rfind(dir, 0) == 0) {
      targets.push_back(target);
    }
  }
  std::sort(targets.begin(), targets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& target : targets) {
    ::umount2(target.c_str(), MNT_DETACH);
  }
}

// The bytes of a /proc file of another process; "" when it cannot be read. With read(2), not
// a stream: a process that exits mid-read makes read fail with ESRCH, which libstdc++'s filebuf
// throws from underflow (and this runs in the fixture's destructor: std::terminate).
std::string ReadProcFile(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return "";
  }
  std::string bytes;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;  // the end, or the process is gone: what was read is all there is
    }
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return bytes;
}

// SIGKILLs every process whose command line names `dir` (dockerd, containerd, the shims) and
// every descendant of those (the containers), then waits for them to go.
void KillEverythingUnder(const std::string& dir) {
  std::map<pid_t, pid_t> parent;
  std::vector<pid_t> victims;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    std::istringstream status(ReadProcFile(entry.path() / "status"));
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("PPid:", 0) == 0) {
        parent[pid] = static_cast<pid_t>(std::stol(line.substr(5)));
      }
    }
    const std::string args = ReadProcFile(entry.path() / "cmdline");
    if (pid != ::getpid() && args.find(dir) != std::string::npos) {
      victims.push_back(pid);
    }
  }
  for (std::size_t i = 0; i < victims.size(); ++i) {  // grows while descendants are found
    for (const auto& [pid, ppid] : parent) {
      if (ppid == victims[i] && std::find(victims.begin(), victims.end(), pid) == victims.end()) {
        victims.push_back(pid);
      }
    }
  }
  for (const pid_t pid : victims) {
    ::kill(pid, SIGKILL);
  }
  for (const pid_t pid : victims) {
    for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) {
      int status = 0;
      ::waitpid(pid, &status, WNOHANG);  // our own child (dockerd) must be reaped
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<PrivateDockerd>> PrivateDockerd::Start(
    const std::vector<std::string>& extra_args) {
  std::unique_ptr<PrivateDockerd> daemon(new PrivateDockerd());
  if (absl::Status s = daemon->Launch(extra_args); !s.ok()) {
    return s;
  }
  if (absl::Status s = daemon->ImportImage(); !s.ok()) {
    return s;
  }
  return daemon;
}

PrivateDockerd* PrivateDockerd::Shared(std::string* why_not) {
  static absl::StatusOr<std::unique_ptr<PrivateDockerd>>* shared =
      new absl::StatusOr<std::unique_ptr<PrivateDockerd>>(Start());
  // Stopped at exit (a leaked pointer would leave the daemon running).
  static const struct Stopper {
    ~Stopper() {
      if (shared->ok()) {
        shared->value().reset();
      }
    }
  } stopper;
  if (!shared->ok()) {
    *why_not = std::string(shared->status().message());
    return nullptr;
  }
  return shared->value().get();
}

absl::Status PrivateDockerd::Launch(const std::vector<std::string>& extra_args) {
  const std::string dockerd = FindProgram("dockerd");
  if (dockerd.empty()) {
    return absl::UnavailableError("no dockerd binary (install docker.io: cmake/install-deps.sh)");
  }
  if (::geteuid() != 0) {
    return absl::UnavailableError("dockerd needs root here (rootless Docker is not set up)");
  }
  if (dir_.empty()) {  // a restart keeps the directory, and so the containers
    char tmpl[] = "/tmp/pulse-dockerd-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      return absl::InternalError("cannot make a temp directory for dockerd");
    }
    dir_ = tmpl;
  }
  extra_args_ = extra_args;
  socket_path_ = dir_ + "/docker.sock";
  const std::string log = dir_ + "/dockerd.log";
  const std::string ns = "pulse-" + dir_.substr(dir_.size() - 6);
  std::vector<std::string> args = {dockerd,
                                   "--iptables=false",
                                   "--bridge=none",
                                   "--ip-forward=false",
                                   "--ip-masq=false",
                                   "--data-root=" + dir_ + "/data",
                                   "--exec-root=" + dir_ + "/exec",
                                   "--pidfile=" + dir_ + "/dockerd.pid",
                                   "--host=unix://" + socket_path_,
                                   "--containerd-namespace=" + ns,
                                   "--containerd-plugins-namespace=" + ns + "-plugins"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  const absl::Time started = absl::Now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return absl::InternalError("cannot fork for dockerd");
  }
  if (pid == 0) {
    ::setsid();
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // the test died: take the daemon with it
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> argv;
    for (std::string& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    ::execv(dockerd.c_str(), argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  EngineOptions options;
  options.endpoint = endpoint();
  options.connect_timeout = absl::Seconds(2);
  options.call_timeout = absl::Seconds(30);
  const absl::Time end = started + absl::Seconds(30);
  absl::Status last;
  while (absl::Now() < end) {
    if (!Alive(pid_)) {
      pid_ = -1;
      return absl::UnavailableError(
          absl::StrCat("dockerd exited during startup; its log ends: ", Tail(log, 600)));
    }
    if (::access(socket_path_.c_str(), F_OK) == 0) {
      auto client = EngineClient::Connect(options);
      if (client.ok() && (*client)->Ping().ok()) {
        client_ = *std::move(client);
        startup_time_ = absl::Now() - started;
        return absl::OkStatus();
      }
      last = client.ok() ? absl::OkStatus() : client.status();
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::UnavailableError(absl::StrCat("dockerd did not answer /_ping within 30 s (",
                                             last.message(), "); its log ends: ", Tail(log, 600)));
}

absl::Status PrivateDockerd::ImportImage() {
  std::string busybox;
  for (const char* path : {"/bin/busybox", "/usr/bin/busybox"}) {
    if (::access(path, X_OK) == 0) {
      busybox = path;
      break;
    }
  }
  if (busybox.empty()) {
    return absl::FailedPreconditionError(
        "no busybox binary: install busybox-static (cmake/install-deps.sh)");
  }
  const std::string rootfs = dir_ + "/rootfs";
  std::error_code ec;
  fs::create_directories(rootfs + "/bin", ec);
  fs::create_directories(rootfs + "/tmp", ec);
  fs::copy_file(busybox, rootfs + "/bin/busybox", ec);
  if (ec) {
    return absl::InternalError("cannot copy busybox into the test rootfs");
  }
  for (const char* tool : {"sh", "sleep", "echo", "cat", "true", "false", "kill", "ls", "env",
                           "head", "yes", "dd", "seq", "printf", "exit",
                           // read-only exec tests (docker_exec_test.cc)
                           "uname", "readlink", "find", "tail", "wc", "ps", "mkdir", "ln"}) {
    fs::create_symlink("busybox", rootfs + "/bin/" + tool, ec);
  }
  const std::string tar = dir_ + "/rootfs.tar";
  const std::string command = "tar -C '" + rootfs + "' -cf '" + tar + "' .";
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError("tar could not pack the test rootfs");
  }
  std::ifstream in(tar, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  http_client::Request request;
  request.method = "POST";
  request.target = "/images/create?fromSrc=-&repo=pulse-test&tag=busybox";
  request.headers = {{"Content-Type", "application/x-tar"}};
  request.body = bytes.str();
  auto answer = client_->Call(request, absl::Seconds(60));
  if (!answer.ok()) {
    return answer.status();
  }
  if (answer->head.status != 200 || answer->body.find("\"error") != std::string::npos) {
    return absl::InternalError(
        absl::StrCat("the image import failed (HTTP ", answer->head.status, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PrivateDockerd::Run(const RunSpec& spec) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("Image", kImage);
  w.Key("Cmd");
  w.StringArray(spec.cmd);
  w.Member("Tty", spec.tty);
  w.Key("Labels");
  w.StartObject();
  for (const auto& [key, value] : spec.labels) {
    w.Member(key, value);
  }
  w.EndObject();
  if (!spec.healthcheck.empty()) {
    w.Key("Healthcheck");
    w.StartObject();
    std::vector<std::string> test = {"CMD-SHELL", absl::StrJoin(spec.healthcheck, " ")};
    w.Key("Test");
    w.StringArray(test);
    w.Member("Interval", absl::ToInt64Nanoseconds(spec.health_interval));
    w.Member("Timeout", absl::ToInt64Nanoseconds(absl::Seconds(2)));
    w.Member("Retries", 1);
    w.EndObject();
  }
  w.Key("HostConfig");
  w.StartObject();
  w.Member("NetworkMode", "none");
  if (spec.memory_limit_bytes > 0) {  // and no swap beyond it
    w.Member("Memory", spec.memory_limit_bytes);
    w.Member("MemorySwap", spec.memory_limit_bytes);
  }
  if (!spec.restart_policy.empty()) {
    w.Key("RestartPolicy");
    w.StartObject();
    w.Member("Name", spec.restart_policy);
    w.Member("MaximumRetryCount", spec.max_retries);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  http_client::Request create;
  create.method = "POST";
  create.target = spec.name.empty() ? "/containers/create"
                                    : absl::StrCat("/containers/create?name=", spec.name);
  create.headers = {{"Content-Type", "application/json"}};
  create.body = w.Take();
  auto answer = client_->Call(create, absl::Seconds(30));
  if (!answer.ok()) {
    return answer.status();
  }
  if (answer->head.status != 201) {
    return absl::InternalError(absl::StrCat("container create failed (HTTP ", answer->head.status,
                                            "): ", answer->body.substr(0, 300)));
  }
  auto doc = core::ParseJson(answer->body);
  if (!doc.ok() || !doc->IsObject() || !core::GetString(*doc, "Id").has_value()) {
    return absl::InternalError("container create answered no Id");
  }
  std::string id(*core::GetString(*doc, "Id"));
  if (spec.start) {
    auto started = client_->Start(id, absl::Seconds(30));
    if (!started.ok()) {
      return started.status();
    }
  }
  return id;
}

absl::Status PrivateDockerd::Remove(const std::string& id) {
  http_client::Request request;
  request.method = "DELETE";
  request.target = absl::StrCat("/containers/", id, "?force=1&v=1");
  auto answer = client_->Call(request, absl::Seconds(30));
  if (!answer.ok()) {
    return answer.status();
  }
  return StatusFromAnswer(answer->head.status, answer->body, "container removal");
}

void PrivateDockerd::StopDaemon() {
  if (pid_ <= 0) {
    return;
  }
  const std::string containerd_pid_file = dir_ + "/exec/containerd/containerd.pid";
  ::kill(pid_, SIGTERM);
  if (!WaitExit(pid_, absl::Seconds(20))) {
    ::kill(pid_, SIGKILL);
    WaitExit(pid_, absl::Seconds(5));
  }
  pid_ = -1;
  // A daemon that died hard leaves its containerd behind.
  std::ifstream pid_file(containerd_pid_file);
  pid_t containerd = 0;
  if (pid_file >> containerd && containerd > 1 && ::kill(containerd, 0) == 0) {
    ::kill(containerd, SIGTERM);
    for (int i = 0; i < 100 && ::kill(containerd, 0) == 0; ++i) {
      absl::SleepFor(absl::Milliseconds(50));
    }
  }
}

absl::Status PrivateDockerd::RestartDaemon() {
  StopDaemon();
  const std::vector<std::string> extra_args = extra_args_;  // the same flags (TLS, ...)
  return Launch(extra_args);
}

void PrivateDockerd::KillDaemon() {
  if (pid_ <= 0) {
    return;
  }
  ::kill(pid_, SIGKILL);
  WaitExit(pid_, absl::Seconds(5));
  pid_ = -1;
}

PrivateDockerd::~PrivateDockerd() {
  if (client_ != nullptr && pid_ > 0) {
    auto list = client_->ListContainers(true);
    if (list.ok()) {
      for (const ContainerSummary& c : *list) {
        (void)Remove(c.id);
      }
    }
  }
  StopDaemon();
  if (!dir_.empty()) {
    KillEverythingUnder(dir_);
    UnmountUnder(dir_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

}  // namespace pulse::docker::testing
