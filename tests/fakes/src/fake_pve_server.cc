#include "pulse/testing/fake_pve_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/json/json.h"
#include "pulse/core/string_view.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::testing {
namespace {

std::string RunCommand(const std::string& command, bool* ok) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *ok = false;
    return out;
  }
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    out += buffer;
  }
  *ok = ::pclose(pipe) == 0;
  return out;
}

struct Node {
  std::string name;
  std::string status = "online";
  double cpu = 0;
  std::int64_t maxcpu = 1, mem = 0, maxmem = 0, disk = 0, maxdisk = 0, uptime = 0;
  bool proxy_broken = false;
};

struct Guest {
  std::string type;  // qemu or lxc
  std::int64_t vmid = 0;
  std::string node, name, status = "stopped", lock, tags;
  double cpu = 0;
  std::int64_t cpus = 1, mem = 0, maxmem = 0, disk = 0, maxdisk = 0, uptime = 0, template_ = 0;
};

struct Storage {
  std::string node, storage, type = "dir", content;
  std::int64_t shared = 0, total = 0, used = 0;
  double growth_per_day = 0;  // bytes: its rrddata rises by this much a day up to `used`
};

// PVE's RRD archives (pve-manager's PVE::RRD): hour at 60 s steps, day at 30 min steps, week
// at 3 h steps, each 70 rows.
std::int64_t RrdStep(std::string_view timeframe) {
  if (timeframe == "hour") {
    return 60;
  }
  if (timeframe == "day") {
    return 1800;
  }
  return timeframe == "week" ? 10800 : 0;
}
constexpr int kRrdRows = 70;

// The value of `key` in a query string ("" when absent).
std::string QueryValue(const std::string& query, const std::string& key) {
  for (absl::string_view pair : absl::StrSplit(query, '&')) {
    if (absl::ConsumePrefix(&pair, absl::StrCat(key, "="))) {
      return std::string(pair);
    }
  }
  return "";
}

// A task of /cluster/tasks: one a POST started (action set, following task_polls) or one the
// scenario or AddTask put in the cluster's history (ended or still running).
struct Task {
  std::string upid, node, type, id, user, action;
  std::int64_t vmid = 0, starttime = 0, endtime = 0;
  int reads = 0;
  std::string exitstatus;
  bool stopped = false;
};

// A scheduled job of /cluster/backup. next-run is `next_run_ago` seconds before now (negative:
// after now), as PVE computes it from the schedule and the last run it recorded.
struct BackupJob {
  std::string id, schedule, storage, vmid, node, mode, comment;
  std::int64_t enabled = 1, all = 0, next_run_ago = -3600;
};

struct Reply {
  int status = 200;
  std::string reason = "OK";
  std::string body;
};

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(Writer& w, const char* key) { w.Key(key); }
void Str(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}
void Int(Writer& w, const char* key, std::int64_t value) {
  w.Key(key);
  w.Int64(value);
}
void Num(Writer& w, const char* key, double value) {
  w.Key(key);
  w.Double(value);
}

std::string Data(const std::function<void(Writer&)>& value) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  Key(w, "data");
  value(w);
  w.EndObject();
  return buffer.GetString();
}

Reply Ok(const std::function<void(Writer&)>& value) { return {200, "OK", Data(value)}; }
Reply Fail(int status, std::string reason) {
  return {status, std::move(reason), "{\"data\":null}"};
}
Reply ParamFail(const std::string& param, const std::string& why) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  Key(w, "data");
  w.Null();
  Key(w, "errors");
  w.StartObject();
  Str(w, param.c_str(), why);
  w.EndObject();
  w.EndObject();
  return {400, "Parameter verification failed.", buffer.GetString()};
}

std::string Get(const rapidjson::Value& o, const char* key, std::string fallback = "") {
  std::optional<std::string_view> v = core::GetString(o, key);
  return v.has_value() ? std::string(*v) : fallback;
}
std::int64_t GetInt(const rapidjson::Value& o, const char* key, std::int64_t fallback = 0) {
  std::optional<std::int64_t> v = core::GetInt64(o, key);
  return v.value_or(fallback);
}
double GetNum(const rapidjson::Value& o, const char* key) {
  const rapidjson::Value* v = core::GetMember(o, key);
  return v != nullptr && v->IsNumber() ? v->GetDouble() : 0;
}

}  // namespace

absl::StatusOr<TestCertificate> MakeTestCertificate(const std::string& dir, std::string_view name,
                                                    std::string_view ip) {
  TestCertificate cert;
  cert.cert_file = absl::StrCat(dir, "/", core::ToAbsl(name), ".pem");
  cert.key_file = absl::StrCat(dir, "/", core::ToAbsl(name), ".key");
  bool ok = false;
  RunCommand(absl::StrCat("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                          "-nodes -days 2 -subj /CN=localhost -addext "
                          "subjectAltName=DNS:localhost,IP:",
                          core::ToAbsl(ip), " -keyout ", cert.key_file, " -out ", cert.cert_file,
                          " 2>/dev/null"),
             &ok);
  if (!ok) {
    return absl::UnavailableError("openssl could not make a certificate");
  }
  std::string line = RunCommand(
      absl::StrCat("openssl x509 -noout -fingerprint -sha256 -in ", cert.cert_file), &ok);
  const std::size_t eq = line.find('=');
  if (!ok || eq == std::string::npos) {
    return absl::UnavailableError("openssl could not print the fingerprint");
  }
  cert.fingerprint = std::string(absl::StripAsciiWhitespace(line.substr(eq + 1)));
  return cert;
}

class FakePveServer::Impl {
 public:
  absl::Status Load(std::string_view scenario) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<rapidjson::Document> doc = core::ParseJson(scenario);
    if (!doc.ok() || !doc->IsObject()) {
      return absl::InvalidArgumentError("the PVE scenario is not a JSON object");
    }
    version_ = Get(*doc, "version", "8.2.4");
    task_polls_ = static_cast<int>(GetInt(*doc, "task_polls", 1));
    if (const rapidjson::Value* tokens = core::GetMember(*doc, "tokens");
        tokens != nullptr && tokens->IsObject()) {
      for (const auto& m : tokens->GetObject()) {
        if (m.value.IsString()) {
          tokens_[m.name.GetString()] = m.value.GetString();
        }
      }
    }
    const auto each = [&doc](const char* key, const auto& fn) {
      const rapidjson::Value* list = core::GetMember(*doc, key);
      if (list != nullptr && list->IsArray()) {
        for (const rapidjson::Value& v : list->GetArray()) {
          if (v.IsObject()) {
            fn(v);
          }
        }
      }
    };
    each("nodes", [this](const rapidjson::Value& v) {
      Node n;
      n.name = Get(v, "node");
      if (main_node_.empty()) {
        main_node_ = n.name;  // the node whose API the main listener is
      }
      n.status = Get(v, "status", "online");
      n.cpu = GetNum(v, "cpu");
      n.maxcpu = GetInt(v, "maxcpu", 1);
      n.mem = GetInt(v, "mem");
      n.maxmem = GetInt(v, "maxmem");
      n.disk = GetInt(v, "disk");
      n.maxdisk = GetInt(v, "maxdisk");
      n.uptime = GetInt(v, "uptime");
      nodes_[n.name] = n;
    });
    each("guests", [this](const rapidjson::Value& v) {
      Guest g;
      g.type = Get(v, "type", "qemu");
      g.vmid = GetInt(v, "vmid");
      g.node = Get(v, "node");
      g.name = Get(v, "name");
      g.status = Get(v, "status", "stopped");
      g.lock = Get(v, "lock");
      g.tags = Get(v, "tags");
      g.cpu = GetNum(v, "cpu");
      g.cpus = GetInt(v, "cpus", 1);
      g.mem = GetInt(v, "mem");
      g.maxmem = GetInt(v, "maxmem");
      g.disk = GetInt(v, "disk");
      g.maxdisk = GetInt(v, "maxdisk");
      g.uptime = GetInt(v, "uptime");
      g.template_ = GetInt(v, "template");
      guests_[g.vmid] = g;
    });
    each("storage", [this](const rapidjson::Value& v) {
      Storage s;
      s.node = Get(v, "node");
      s.storage = Get(v, "storage");
      s.type = Get(v, "type", "dir");
      s.content = Get(v, "content", "images,rootdir");
      s.shared = GetInt(v, "shared");
      s.total = GetInt(v, "total");
      s.used = GetInt(v, "used");
      s.growth_per_day = GetNum(v, "growth_per_day");
      storage_.push_back(s);
    });
    each("ha",
         [this](const rapidjson::Value& v) { ha_[Get(v, "sid")] = Get(v, "state", "started"); });
    const auto now = static_cast<std::int64_t>(::time(nullptr));
    each("backup_jobs", [this](const rapidjson::Value& v) {
      BackupJob j;
      j.id = Get(v, "id");
      j.schedule = Get(v, "schedule", "21:00");
      j.storage = Get(v, "storage", "local");
      j.vmid = Get(v, "vmid");
      j.node = Get(v, "node");
      j.mode = Get(v, "mode", "snapshot");
      j.comment = Get(v, "comment");
      j.enabled = GetInt(v, "enabled", 1);
      j.all = GetInt(v, "all");
      j.next_run_ago = GetInt(v, "next_run_ago", -3600);
      backup_jobs_.push_back(j);
    });
    std::vector<Task> listed;  // added below, outside the lambda the lock analysis cannot see into
    each("tasks", [&listed, now](const rapidjson::Value& v) {
      const std::int64_t end_ago = GetInt(v, "end_ago", -1);
      Task t;
      t.node = Get(v, "node");
      t.type = Get(v, "type", "vzdump");
      t.id = Get(v, "id");
      t.exitstatus = Get(v, "status", "OK");
      t.starttime = now - GetInt(v, "start_ago");
      t.endtime = end_ago < 0 ? 0 : now - end_ago;
      listed.push_back(t);
    });
    for (const Task& t : listed) {
      AddTaskLocked(t.node, t.type, t.id, t.exitstatus, t.starttime, t.endtime);
    }
    return absl::OkStatus();
  }

  // One API endpoint: the main one (the first node's, on 127.0.0.1) or another node's.
  struct Listener {
    std::string node;
    std::string ip;
    std::string fingerprint;
    SSL_CTX* ctx = nullptr;
    int fd = -1;
    bool want_up = true;
  };

  static absl::StatusOr<int> OpenSocket(const std::string& ip, int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (fd < 0 || ::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1 ||
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd, 64) != 0) {
      if (fd >= 0) {
        ::close(fd);
      }
      return absl::UnavailableError(absl::StrCat("the fake PVE cannot listen on ", ip));
    }
    return fd;
  }

  static absl::StatusOr<SSL_CTX*> LoadCertificate(const TestCertificate& cert) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr || SSL_CTX_use_certificate_chain_file(ctx, cert.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, cert.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      SSL_CTX_free(ctx);
      return absl::InvalidArgumentError("the fake PVE cannot load its certificate");
    }
    return ctx;
  }

  absl::Status Listen(const TestCertificate& cert, int port) {
    absl::StatusOr<SSL_CTX*> ctx = LoadCertificate(cert);
    if (!ctx.ok()) {
      return ctx.status();
    }
    auto main = std::make_unique<Listener>();
    main->ctx = *ctx;
    main->ip = "127.0.0.1";
    main->fingerprint = cert.fingerprint;
    absl::StatusOr<int> fd = OpenSocket(main->ip, port);
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    if (!fd.ok()) {
      SSL_CTX_free(main->ctx);
      return fd.status();
    }
    main->fd = *fd;
    if (::getsockname(main->fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return absl::UnavailableError("the fake PVE cannot listen");
    }
    port_ = ntohs(addr.sin_port);
    {
      absl::MutexLock lock(&mu_);
      main->node = main_node_;
      listeners_.push_back(std::move(main));
    }
    thread_ = std::thread([this] { Serve(); });
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> ServeNode(std::string_view node, std::string_view ip,
                                        const TestCertificate& cert) {
    absl::StatusOr<SSL_CTX*> ctx = LoadCertificate(cert);
    if (!ctx.ok()) {
      return ctx.status();
    }
    auto listener = std::make_unique<Listener>();
    listener->node = std::string(node);
    listener->ip = std::string(ip);
    listener->fingerprint = cert.fingerprint;
    listener->ctx = *ctx;
    absl::StatusOr<int> fd = OpenSocket(listener->ip, port_);
    if (!fd.ok()) {
      SSL_CTX_free(listener->ctx);
      return fd.status();
    }
    listener->fd = *fd;
    absl::MutexLock lock(&mu_);
    listeners_.push_back(std::move(listener));
    return absl::StrCat("https://", core::ToAbsl(ip), ":", port_);
  }

  static bool Applied(Listener* l) { return (l->fd >= 0) == l->want_up; }

  void SetEndpointUp(std::string_view node, bool up) {
    absl::MutexLock lock(&mu_);
    for (const std::unique_ptr<Listener>& l : listeners_) {
      if (l->node == node) {
        l->want_up = up;
        // The serving thread opens and closes listening sockets (it polls them); wait for it.
        mu_.Await(absl::Condition(&Applied, l.get()));
      }
    }
  }

  ~Impl() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    if (thread_.joinable()) {
      thread_.join();
    }
    absl::MutexLock lock(&mu_);
    for (const std::unique_ptr<Listener>& l : listeners_) {
      if (l->fd >= 0) {
        ::close(l->fd);
      }
      SSL_CTX_free(l->ctx);
    }
  }

  int port() const { return port_; }

  // A task in the cluster's history; endtime 0 while it runs.
  void AddTaskLocked(const std::string& node, const std::string& type, const std::string& id,
                     const std::string& status, std::int64_t starttime, std::int64_t endtime)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Task task;
    task.node = node;
    task.type = type;
    task.id = id;
    task.user = "root@pam";
    task.starttime = starttime;
    task.endtime = endtime;
    task.stopped = endtime > 0;
    task.exitstatus = status;
    const std::uint32_t pid = next_pid_++;
    task.upid = absl::StrFormat("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", node, pid, pid * 7u,
                                static_cast<std::uint32_t>(starttime), type, id, task.user);
    tasks_[task.upid] = task;
  }

  mutable absl::Mutex mu_;
  std::string version_;
  int task_polls_ = 1;
  std::string exit_status_ = "OK";
  std::map<std::string, std::string> tokens_;
  std::map<std::string, Node> nodes_;
  std::map<std::int64_t, Guest> guests_;
  std::vector<Storage> storage_;
  std::map<std::string, std::string> ha_;
  std::map<std::string, Task> tasks_;
  std::vector<BackupJob> backup_jobs_;
  std::vector<FakePveRequest> requests_;
  std::uint64_t handshakes_ = 0;
  std::uint64_t failed_handshakes_ = 0;
  std::uint32_t next_pid_ = 0x1000;
  bool stopping_ = false;
  std::string main_node_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::map<std::string, std::string> reported_fingerprints_;  // certificates/info overrides

 private:
  void Serve() {
    for (;;) {
      // Which sockets to poll, after applying the listeners' wanted states (only this thread
      // opens and closes them, so a poll never watches a closed descriptor).
      std::vector<pollfd> polled;
      std::vector<const Listener*> of;
      {
        absl::MutexLock lock(&mu_);
        if (stopping_) {
          return;
        }
        for (const std::unique_ptr<Listener>& l : listeners_) {
          if (!l->want_up && l->fd >= 0) {
            ::close(l->fd);
            l->fd = -1;
          } else if (l->want_up && l->fd < 0) {
            absl::StatusOr<int> fd = OpenSocket(l->ip, port_);
            l->fd = fd.ok() ? *fd : -1;
          }
          if (l->fd >= 0) {
            polled.push_back({l->fd, POLLIN, 0});
            of.push_back(l.get());
          }
        }
      }
      if (::poll(polled.data(), polled.size(), 20) <= 0) {
        continue;
      }
      for (std::size_t i = 0; i < polled.size(); ++i) {
        if ((polled[i].revents & POLLIN) != 0) {
          Accept(polled[i].fd, of[i]->ctx, of[i]->node);
        }
      }
    }
  }

  void Accept(int fd, SSL_CTX* ctx, const std::string& node) {
    const int client = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      return;
    }
    timeval tv{2, 0};
    ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, client);
    if (SSL_accept(ssl) == 1) {
      {
        absl::MutexLock lock(&mu_);
        ++handshakes_;
      }
      ServeOne(ssl, node);
      SSL_shutdown(ssl);
    } else {
      absl::MutexLock lock(&mu_);
      ++failed_handshakes_;
    }
    ERR_clear_error();
    SSL_free(ssl);
    ::close(client);
  }

  void ServeOne(SSL* ssl, const std::string& node) {
    std::string in;
    char buffer[4096];
    std::size_t head_end = std::string::npos;
    while ((head_end = in.find("\r\n\r\n")) == std::string::npos && in.size() < 65536) {
      const int n = SSL_read(ssl, buffer, sizeof(buffer));
      if (n <= 0) {
        return;
      }
      in.append(buffer, static_cast<std::size_t>(n));
    }
    if (head_end == std::string::npos) {
      return;
    }
    FakePveRequest request;
    std::vector<std::string> lines = absl::StrSplit(in.substr(0, head_end), "\r\n");
    std::vector<std::string> start = absl::StrSplit(lines.front(), ' ');
    if (start.size() != 3) {
      return;
    }
    request.method = start[0];
    request.target = start[1];
    request.endpoint = node;
    std::size_t length = 0;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const std::size_t colon = lines[i].find(':');
      if (colon == std::string::npos) {
        continue;
      }
      const std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
      const std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
      if (name == "authorization") {
        request.authorization = value;
      } else if (name == "content-length") {
        (void)absl::SimpleAtoi(value, &length);
      }
    }
    request.body = in.substr(head_end + 4);
    while (request.body.size() < length && length < 65536) {
      const int n = SSL_read(ssl, buffer, sizeof(buffer));
      if (n <= 0) {
        return;
      }
      request.body.append(buffer, static_cast<std::size_t>(n));
    }
    Reply reply;
    {
      absl::MutexLock lock(&mu_);
      requests_.push_back(request);
      reply = Answer(request);
    }
    const std::string out = absl::StrCat(
        "HTTP/1.1 ", reply.status, " ", reply.reason,
        "\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: ", reply.body.size(),
        "\r\nConnection: close\r\n\r\n", reply.body);
    SSL_write(ssl, out.data(), static_cast<int>(out.size()));
  }

  Reply Authenticate(const std::string& header) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::string_view value = header;
    if (!absl::ConsumePrefix(&value, "PVEAPIToken=")) {
      return Fail(401, "No ticket");
    }
    const std::size_t eq = value.find('=');
    const std::size_t bang = value.find('!');
    if (eq == absl::string_view::npos || bang == absl::string_view::npos || bang > eq) {
      return Fail(401, "invalid token value!");
    }
    const std::string id(value.substr(0, eq));
    const auto it = tokens_.find(id);
    if (it == tokens_.end()) {
      return Fail(401, absl::StrCat("no such token '", value.substr(bang + 1, eq - bang - 1),
                                    "' for user '", value.substr(0, bang), "'"));
    }
    if (it->second.empty() || it->second != value.substr(eq + 1)) {
      return Fail(401, "invalid token value!");
    }
    return Reply{};
  }

  Reply Answer(const FakePveRequest& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Reply auth = Authenticate(request.authorization);
    if (auth.status != 200) {
      return auth;
    }
    absl::string_view target = request.target;
    if (!absl::ConsumePrefix(&target, "/api2/json")) {
      return Fail(501, "Method not implemented");
    }
    std::string query;
    if (const std::size_t q = target.find('?'); q != absl::string_view::npos) {
      query = std::string(target.substr(q + 1));
      target = target.substr(0, q);
    }
    std::vector<std::string> parts = absl::StrSplit(target, '/', absl::SkipEmpty());
    const bool get = request.method == "GET";
    if (get && parts == std::vector<std::string>{"version"}) {
      return Ok([this](Writer& w) {
        w.StartObject();
        Str(w, "version", version_);
        Str(w, "release", version_.substr(0, version_.rfind('.')));
        Str(w, "repoid", "faa83925c9641325");
        w.EndObject();
      });
    }
    if (get && parts == std::vector<std::string>{"cluster", "resources"}) {
      return ClusterResources(query);
    }
    if (get && parts == std::vector<std::string>{"cluster", "ha", "status", "current"}) {
      return HaStatus();
    }
    if (get && parts == std::vector<std::string>{"cluster", "status"}) {
      return ClusterStatus(request.endpoint);
    }
    if (get && parts == std::vector<std::string>{"cluster", "tasks"}) {
      return ClusterTasks();
    }
    if (get && parts == std::vector<std::string>{"cluster", "backup"}) {
      return BackupJobs();
    }
    if (parts.size() >= 3 && parts[0] == "nodes") {
      const auto node = nodes_.find(parts[1]);
      if (node == nodes_.end()) {
        return Fail(500, absl::StrCat("hostname lookup '", parts[1],
                                      "' failed - failed to get address info for: ", parts[1],
                                      ": Name or service not known"));
      }
      // A node answers its own calls; the others' go through their proxies, which may fail.
      if (node->second.proxy_broken && parts[1] != request.endpoint) {
        return Fail(596, "Broken pipe");
      }
      if (node->second.status != "online") {
        return Fail(595, "No route to host");
      }
      if (get && parts.size() == 4 && parts[2] == "certificates" && parts[3] == "info") {
        return CertificateInfo(parts[1]);
      }
      return NodeCall(request, node->second, parts);
    }
    return Fail(501, absl::StrCat("Method '", request.method, " ", target, "' not implemented"));
  }

  // `listed` is false for /cluster/resources while the guest's node is offline: PVE then lists
  // the guest with status "unknown" and no usage.
  static void GuestFields(Writer& w, const Guest& g, bool listed = true) {
    Int(w, "vmid", g.vmid);
    Str(w, "name", g.name);
    Str(w, "status", listed ? g.status : "unknown");
    Num(w, "cpu", g.status == "running" ? g.cpu : 0.0);
    Int(w, "mem", g.status == "running" ? g.mem : 0);
    Int(w, "maxmem", g.maxmem);
    Int(w, "disk", g.disk);
    Int(w, "maxdisk", g.maxdisk);
    Int(w, "uptime", g.status == "running" ? g.uptime : 0);
    Int(w, "netin", 0);
    Int(w, "netout", 0);
    Int(w, "diskread", 0);
    Int(w, "diskwrite", 0);
    Int(w, "template", g.template_);
    if (!g.tags.empty()) {
      Str(w, "tags", g.tags);
    }
    if (!g.lock.empty()) {
      Str(w, "lock", g.lock);
    }
  }

  // The HA state of `g` in `ha` (ha_, read under mu_: the reply writers are lambdas run while
  // the caller holds it, which clang's thread-safety analysis cannot see into).
  static std::string HaStateIn(const std::map<std::string, std::string>& ha, const Guest& g) {
    const auto it = ha.find(absl::StrCat(g.type == "qemu" ? "vm:" : "ct:", g.vmid));
    return it == ha.end() ? "" : it->second;
  }

  Reply ClusterResources(const std::string& query) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::string type;
    if (absl::string_view q = query; absl::ConsumePrefix(&q, "type=")) {
      type = std::string(q);
      if (type != "vm" && type != "node" && type != "storage") {
        return ParamFail("type",
                         "value 'x' does not have a value in the enumeration 'vm, "
                         "storage, node, sdn'");
      }
    }
    return Ok([&](Writer& w) {
      w.StartArray();
      if (type.empty() || type == "node") {
        for (const auto& [name, n] : nodes_) {
          const bool online = n.status == "online";
          w.StartObject();
          Str(w, "id", "node/" + name);
          Str(w, "type", "node");
          Str(w, "node", name);
          Str(w, "status", online ? "online" : "offline");
          if (online) {
            Num(w, "cpu", n.cpu);
            Int(w, "maxcpu", n.maxcpu);
            Int(w, "mem", n.mem);
            Int(w, "maxmem", n.maxmem);
            Int(w, "disk", n.disk);
            Int(w, "maxdisk", n.maxdisk);
            Int(w, "uptime", n.uptime);
          }
          Str(w, "level", "");
          w.EndObject();
        }
      }
      if (type.empty() || type == "vm") {
        for (const auto& [vmid, g] : guests_) {
          w.StartObject();
          Str(w, "id", absl::StrCat(g.type, "/", vmid));
          Str(w, "type", g.type);
          Str(w, "node", g.node);
          Int(w, "maxcpu", g.cpus);
          const auto node = nodes_.find(g.node);
          GuestFields(w, g, node == nodes_.end() || node->second.status == "online");
          if (const std::string ha = HaStateIn(ha_, g); !ha.empty()) {
            Str(w, "hastate", ha);
          }
          w.EndObject();
        }
      }
      if (type.empty() || type == "storage") {
        for (const Storage& s : storage_) {
          w.StartObject();
          Str(w, "id", absl::StrCat("storage/", s.node, "/", s.storage));
          Str(w, "type", "storage");
          Str(w, "node", s.node);
          Str(w, "storage", s.storage);
          Str(w, "plugintype", s.type);
          Str(w, "content", s.content);
          Int(w, "shared", s.shared);
          const auto node = nodes_.find(s.node);
          Str(w, "status",
              node == nodes_.end() || node->second.status == "online" ? "available" : "unknown");
          Int(w, "disk", s.used);
          Int(w, "maxdisk", s.total);
          w.EndObject();
        }
      }
      w.EndArray();
    });
  }

  const Listener* ListenerOf(const std::string& node) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const std::unique_ptr<Listener>& l : listeners_) {
      if (l->node == node) {
        return l.get();
      }
    }
    return nullptr;
  }

  // /cluster/status: the cluster entry, then one entry per member with the address the cluster
  // knows it by (its own listener's, else the main listener's) and `local` for the node whose
  // endpoint answered.
  Reply ClusterStatus(const std::string& serving) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<std::pair<std::string, std::string>> ips;
    for (const auto& [name, n] : nodes_) {
      const Listener* own = ListenerOf(name);
      ips.emplace_back(name, own != nullptr ? own->ip : "127.0.0.1");
    }
    return Ok([&](Writer& w) {
      w.StartArray();
      w.StartObject();
      Str(w, "type", "cluster");
      Str(w, "id", "cluster");
      Str(w, "name", "lab");
      Int(w, "nodes", static_cast<std::int64_t>(nodes_.size()));
      Int(w, "quorate", 1);
      Int(w, "version", 7);
      w.EndObject();
      std::int64_t nodeid = 0;
      for (const auto& [name, ip] : ips) {
        const Node& n = nodes_.at(name);
        w.StartObject();
        Str(w, "type", "node");
        Str(w, "id", "node/" + name);
        Str(w, "name", name);
        Str(w, "ip", ip);
        Int(w, "nodeid", ++nodeid);
        Int(w, "online", n.status == "online" ? 1 : 0);
        Int(w, "local", name == serving ? 1 : 0);
        Str(w, "level", "");
        w.EndObject();
      }
      w.EndArray();
    });
  }

  // /nodes/{node}/certificates/info: the cluster CA's root and the node's pve-ssl.pem, whose
  // fingerprint is the one its listener presents (or what SetReportedFingerprint says).
  Reply CertificateInfo(const std::string& node) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const Listener* own = ListenerOf(node);
    std::string fingerprint = own != nullptr ? own->fingerprint : listeners_.front()->fingerprint;
    if (const auto it = reported_fingerprints_.find(node); it != reported_fingerprints_.end()) {
      fingerprint = it->second;
    }
    return Ok([&](Writer& w) {
      w.StartArray();
      w.StartObject();
      Str(w, "filename", "pve-root-ca.pem");
      Str(w, "fingerprint",
          "5A:0C:34:95:29:37:4E:A8:B2:46:C4:29:42:7A:D1:71:54:A7:4D:58:2B:26:7F:4C:E8:A3:3F:25:"
          "64:55:0A:D1");
      Str(w, "issuer", "/CN=Proxmox Virtual Environment/OU=8f3c/O=PVE Cluster Manager CA");
      Str(w, "subject", "/CN=Proxmox Virtual Environment/OU=8f3c/O=PVE Cluster Manager CA");
      Int(w, "notbefore", 1700000000);
      Int(w, "notafter", 2015360000);
      w.EndObject();
      w.StartObject();
      Str(w, "filename", "pve-ssl.pem");
      Str(w, "fingerprint", fingerprint);
      Str(w, "issuer", "/CN=Proxmox Virtual Environment/OU=8f3c/O=PVE Cluster Manager CA");
      Str(w, "subject",
          absl::StrCat("/OU=PVE Cluster Node/O=Proxmox Virtual Environment/CN=", node, ".lab"));
      Int(w, "notbefore", 1700000000);
      Int(w, "notafter", 1763072000);
      Str(w, "public-key-type", "id-ecPublicKey");
      Int(w, "public-key-bits", 256);
      w.EndObject();
      w.EndArray();
    });
  }

  // GET /cluster/tasks: every task, newest first; endtime and status once it ended.
  Reply ClusterTasks() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<const Task*> order;
    for (const auto& [upid, task] : tasks_) {
      order.push_back(&task);
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const Task* a, const Task* b) { return a->starttime > b->starttime; });
    return Ok([&](Writer& w) {
      w.StartArray();
      for (const Task* t : order) {
        w.StartObject();
        Str(w, "upid", t->upid);
        Str(w, "node", t->node);
        Int(w, "pid", 4096);
        Int(w, "pstart", 28672);
        Int(w, "starttime", t->starttime);
        Str(w, "type", t->type);
        Str(w, "id", t->id);
        Str(w, "user", t->user);
        if (t->stopped) {
          Int(w, "endtime", t->endtime > 0 ? t->endtime : t->starttime);
          Str(w, "status", t->exitstatus);
        }
        Int(w, "saved", 1);
        w.EndObject();
      }
      w.EndArray();
    });
  }

  // GET /cluster/backup: the jobs as PVE 8 lists them (enabled left out when 1, vmid left out
  // for an all-guests job, next-run for an enabled job).
  Reply BackupJobs() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const auto now = static_cast<std::int64_t>(::time(nullptr));
    return Ok([&](Writer& w) {
      w.StartArray();
      for (const BackupJob& j : backup_jobs_) {
        w.StartObject();
        Str(w, "id", j.id);
        Str(w, "type", "vzdump");
        Str(w, "schedule", j.schedule);
        if (j.enabled != 1) {
          Int(w, "enabled", j.enabled);
        } else {
          Int(w, "next-run", now - j.next_run_ago);
        }
        if (j.all != 0) {
          Int(w, "all", 1);
        } else {
          Str(w, "vmid", j.vmid);
        }
        Str(w, "storage", j.storage);
        Str(w, "mode", j.mode);
        Str(w, "compress", "zstd");
        if (!j.node.empty()) {
          Str(w, "node", j.node);
        }
        if (!j.comment.empty()) {
          Str(w, "comment", j.comment);
        }
        w.EndObject();
      }
      w.EndArray();
    });
  }

  Reply HaStatus() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return Ok([&](Writer& w) {
      w.StartArray();
      w.StartObject();
      Str(w, "id", "quorum");
      Str(w, "type", "quorum");
      Str(w, "node", nodes_.empty() ? "" : nodes_.begin()->first);
      Str(w, "status", "OK");
      Int(w, "quorate", 1);
      w.EndObject();
      for (const auto& [name, n] : nodes_) {
        w.StartObject();
        Str(w, "id", "lrm:" + name);
        Str(w, "type", "lrm");
        Str(w, "node", name);
        Str(w, "status",
            n.status == "online" ? absl::StrCat(name, " (active, ", "00:00:00)")
                                 : absl::StrCat(name, " (old timestamp - dead?)"));
        w.EndObject();
      }
      for (const auto& [sid, state] : ha_) {
        std::string node;
        absl::string_view id = sid;
        std::int64_t vmid = 0;
        if ((absl::ConsumePrefix(&id, "vm:") || absl::ConsumePrefix(&id, "ct:")) &&
            absl::SimpleAtoi(id, &vmid) && guests_.count(vmid) == 1) {
          node = guests_.at(vmid).node;
        }
        w.StartObject();
        Str(w, "id", "service:" + sid);
        Str(w, "type", "service");
        Str(w, "sid", sid);
        Str(w, "node", node);
        Str(w, "state", state);
        Str(w, "request_state", state);
        Str(w, "crm_state", state);
        Str(w, "status", absl::StrCat(sid, " (", node, ", ", state, ")"));
        Int(w, "max_restart", 1);
        Int(w, "max_relocate", 1);
        w.EndObject();
      }
      w.EndArray();
    });
  }

  Reply NodeCall(const FakePveRequest& request, const Node& node,
                 const std::vector<std::string>& parts) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const bool get = request.method == "GET";
    if (get && parts.size() == 3 && parts[2] == "status") {
      return Ok([&](Writer& w) {
        w.StartObject();
        Num(w, "cpu", node.cpu);
        Num(w, "wait", 0.001);
        Int(w, "uptime", node.uptime);
        Str(w, "kversion", "Linux 6.8.8-2-pve #1 SMP PREEMPT_DYNAMIC PMX 6.8.8-2");
        Str(w, "pveversion", "pve-manager/" + version_ + "/faa83925c9641325");
        Key(w, "loadavg");
        w.StartArray();
        w.String("0.12");
        w.String("0.20");
        w.String("0.18");
        w.EndArray();
        Key(w, "cpuinfo");
        w.StartObject();
        Int(w, "cpus", node.maxcpu);
        Int(w, "sockets", 1);
        Int(w, "cores", node.maxcpu);
        Str(w, "model", "QEMU Virtual CPU version 2.5+");
        Str(w, "mhz", "2399.998");
        w.EndObject();
        Key(w, "memory");
        w.StartObject();
        Int(w, "total", node.maxmem);
        Int(w, "used", node.mem);
        Int(w, "free", node.maxmem - node.mem);
        w.EndObject();
        Key(w, "rootfs");
        w.StartObject();
        Int(w, "total", node.maxdisk);
        Int(w, "used", node.disk);
        Int(w, "free", node.maxdisk - node.disk);
        Int(w, "avail", node.maxdisk - node.disk);
        w.EndObject();
        w.EndObject();
      });
    }
    if (get && parts.size() == 3 && parts[2] == "storage") {
      return Ok([&](Writer& w) {
        w.StartArray();
        for (const Storage& s : storage_) {
          if (s.node != node.name) {
            continue;
          }
          w.StartObject();
          Str(w, "storage", s.storage);
          Str(w, "type", s.type);
          Str(w, "content", s.content);
          Int(w, "active", 1);
          Int(w, "enabled", 1);
          Int(w, "shared", s.shared);
          Int(w, "total", s.total);
          Int(w, "used", s.used);
          Int(w, "avail", s.total - s.used);
          Num(w, "used_fraction",
              s.total > 0 ? static_cast<double>(s.used) / static_cast<double>(s.total) : 0.0);
          w.EndObject();
        }
        w.EndArray();
      });
    }
    if (get && parts.back() == "rrddata") {
      return RrdData(node, parts, request.target);
    }
    if (get && parts.size() == 5 && parts[2] == "tasks" && parts[4] == "status") {
      return TaskStatus(node, parts[3]);
    }
    if (parts.size() == 6 && (parts[2] == "qemu" || parts[2] == "lxc") && parts[4] == "status") {
      std::int64_t vmid = 0;
      if (!absl::SimpleAtoi(parts[3], &vmid) || vmid < 100) {
        return ParamFail("vmid", absl::StrCat("type check ('integer') failed - got '",
                                              parts[3].substr(0, 32), "'"));
      }
      const auto it = guests_.find(vmid);
      if (it == guests_.end() || it->second.node != node.name || it->second.type != parts[2]) {
        return Fail(500, absl::StrCat("Configuration file 'nodes/", node.name, "/",
                                      parts[2] == "qemu" ? "qemu-server" : "lxc", "/", vmid,
                                      ".conf' does not exist"));
      }
      if (get && parts[5] == "current") {
        const Guest& g = it->second;
        return Ok([&](Writer& w) {
          w.StartObject();
          GuestFields(w, g);
          Int(w, "cpus", g.cpus);
          if (g.type == "qemu") {
            Str(w, "qmpstatus", g.status == "running" ? "running" : "stopped");
            Int(w, "agent", 1);
          } else {
            Str(w, "type", "lxc");
            Int(w, "maxswap", 536870912);
            Int(w, "swap", 0);
          }
          Key(w, "ha");
          w.StartObject();
          const std::string ha = HaStateIn(ha_, g);
          Int(w, "managed", ha.empty() ? 0 : 1);
          if (!ha.empty()) {
            Str(w, "state", ha);
          }
          w.EndObject();
          w.EndObject();
        });
      }
      if (request.method == "POST") {
        return StartTask(node, it->second, parts[5]);
      }
    }
    return Fail(501,
                absl::StrCat("Method '", request.method, " ", request.target, "' not implemented"));
  }

  // GET /nodes/{node}/rrddata, /nodes/{node}/qemu|lxc/{vmid}/rrddata and
  // /nodes/{node}/storage/{storage}/rrddata: 70 rows of the timeframe's step, the newest not
  // yet consolidated (time only, as PVE sends it). Node and guest values are the current ones;
  // a storage's `used` falls back in time by growth_per_day, so its fill rate is known.
  Reply RrdData(const Node& node, const std::vector<std::string>& parts,
                const std::string& target) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::size_t q = target.find('?');
    const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
    const std::string timeframe = QueryValue(query, "timeframe");
    const std::int64_t step = RrdStep(timeframe);
    if (step == 0) {
      return ParamFail("timeframe", timeframe.empty()
                                        ? "property is missing and it is not optional"
                                        : "value does not have a value in the enumeration "
                                          "'hour, day, week, month, year, decade'");
    }
    if (const std::string cf = QueryValue(query, "cf");
        !cf.empty() && cf != "AVERAGE" && cf != "MAX") {
      return ParamFail("cf", "value does not have a value in the enumeration 'AVERAGE, MAX'");
    }
    const Guest* guest = nullptr;
    const Storage* storage = nullptr;
    if (parts.size() == 5 && (parts[2] == "qemu" || parts[2] == "lxc")) {
      std::int64_t vmid = 0;
      const auto it = absl::SimpleAtoi(parts[3], &vmid) ? guests_.find(vmid) : guests_.end();
      if (it == guests_.end() || it->second.node != node.name) {
        return Fail(500, absl::StrCat("Configuration file 'nodes/", node.name, "/",
                                      parts[2] == "qemu" ? "qemu-server" : "lxc", "/",
                                      parts[3].substr(0, 16), ".conf' does not exist"));
      }
      guest = &it->second;
    } else if (parts.size() == 5 && parts[2] == "storage") {
      for (const Storage& s : storage_) {
        if (s.node == node.name && s.storage == parts[3]) {
          storage = &s;
        }
      }
      if (storage == nullptr) {
        return Fail(500, absl::StrCat("storage '", parts[3].substr(0, 64), "' does not exist"));
      }
    } else if (parts.size() != 3) {
      return Fail(501, "Method not implemented");
    }
    const auto now = static_cast<std::int64_t>(::time(nullptr));
    const std::int64_t newest = now / step * step;
    return Ok([&](Writer& w) {
      w.StartArray();
      for (int i = kRrdRows - 1; i >= 0; --i) {
        const std::int64_t t = newest - i * step;
        w.StartObject();
        Int(w, "time", t);
        if (i == 0) {
          w.EndObject();
          continue;
        }
        if (storage != nullptr) {
          const double age_days = static_cast<double>(now - t) / 86400.0;
          const double used =
              static_cast<double>(storage->used) - storage->growth_per_day * age_days;
          Num(w, "used", used < 0 ? 0.0 : used);
          Int(w, "total", storage->total);
        } else if (guest != nullptr) {
          const bool running = guest->status == "running";
          Num(w, "cpu", running ? guest->cpu : 0.0);
          Int(w, "maxcpu", guest->cpus);
          Int(w, "mem", running ? guest->mem : 0);
          Int(w, "maxmem", guest->maxmem);
          Int(w, "disk", guest->disk);
          Int(w, "maxdisk", guest->maxdisk);
          Num(w, "netin", 0.0);
          Num(w, "netout", 0.0);
        } else {
          Num(w, "cpu", node.cpu);
          Int(w, "maxcpu", node.maxcpu);
          Num(w, "iowait", 0.001);
          Num(w, "loadavg", 0.12);
          Int(w, "memused", node.mem);
          Int(w, "memtotal", node.maxmem);
          Int(w, "rootused", node.disk);
          Int(w, "roottotal", node.maxdisk);
        }
        w.EndObject();
      }
      w.EndArray();
    });
  }

  Reply StartTask(const Node& node, const Guest& g, const std::string& action)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (action != "start" && action != "shutdown" && action != "stop" && action != "reboot") {
      return Fail(501, absl::StrCat("Method 'POST status/", action, "' not implemented"));
    }
    const std::string what = g.type == "qemu" ? "VM" : "CT";
    if (!g.lock.empty()) {
      return Fail(500, absl::StrCat(what, " ", g.vmid, " is locked (", g.lock, ")"));
    }
    if (action == "start" && g.status == "running") {
      return Fail(500, absl::StrCat(what, " ", g.vmid, " already running"));
    }
    if (action != "start" && action != "stop" && g.status != "running") {
      return Fail(500, absl::StrCat(what, " ", g.vmid, " not running"));
    }
    Task task;
    task.node = node.name;
    task.type = absl::StrCat(g.type == "qemu" ? "qm" : "vz", action);
    task.id = absl::StrCat(g.vmid);
    task.user = "pulse@pve!pulse";
    task.vmid = g.vmid;
    task.action = action;
    task.exitstatus = exit_status_;
    task.starttime = static_cast<std::int64_t>(::time(nullptr));
    const std::uint32_t pid = next_pid_++;
    task.upid =
        absl::StrFormat("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", node.name, pid, pid * 7u,
                        static_cast<std::uint32_t>(task.starttime), task.type, task.id, task.user);
    tasks_[task.upid] = task;
    const std::string upid = task.upid;
    return Ok([&upid](Writer& w) { w.String(upid.c_str()); });
  }

  static std::string Decode(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
      int value = 0;
      if (text[i] == '%' && i + 2 < text.size() &&
          absl::SimpleHexAtoi(text.substr(i + 1, 2), &value)) {
        out.push_back(static_cast<char>(value));
        i += 2;
      } else {
        out.push_back(text[i]);
      }
    }
    return out;
  }

  Reply TaskStatus(const Node& node, const std::string& encoded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::string upid = Decode(encoded);
    if (!absl::StartsWith(upid, "UPID:")) {
      return ParamFail("upid",
                       absl::StrCat("unable to parse worker upid '", upid.substr(0, 64), "'"));
    }
    const auto it = tasks_.find(upid);
    if (it == tasks_.end() || it->second.node != node.name) {
      return Fail(500, "no such task");
    }
    Task& task = it->second;
    if (!task.stopped && ++task.reads > task_polls_) {
      task.stopped = true;
      task.endtime = static_cast<std::int64_t>(::time(nullptr));
      if (task.exitstatus == "OK") {
        Guest& g = guests_[task.vmid];
        if (task.action == "start" || task.action == "reboot") {
          g.status = "running";
          g.uptime = 0;
        } else {
          g.status = "stopped";
        }
      }
    }
    return Ok([&task](Writer& w) {
      w.StartObject();
      Str(w, "upid", task.upid);
      Str(w, "node", task.node);
      Str(w, "type", task.type);
      Str(w, "id", task.id);
      Str(w, "user", task.user);
      Int(w, "starttime", task.starttime);
      Int(w, "pid", 4096);
      Int(w, "pstart", 28672);
      Str(w, "status", task.stopped ? "stopped" : "running");
      if (task.stopped) {
        Str(w, "exitstatus", task.exitstatus);
      }
      w.EndObject();
    });
  }

  int port_ = 0;
  std::thread thread_;
};

FakePveServer::FakePveServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakePveServer::~FakePveServer() = default;

absl::StatusOr<std::unique_ptr<FakePveServer>> FakePveServer::Start(
    std::string_view scenario_json, const TestCertificate& certificate, int port) {
  auto impl = std::make_unique<Impl>();
  {
    absl::MutexLock lock(&impl->mu_);
    if (absl::Status s = impl->Load(scenario_json); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = impl->Listen(certificate, port); !s.ok()) {
    return s;
  }
  return std::unique_ptr<FakePveServer>(new FakePveServer(std::move(impl)));
}

std::string FakePveServer::url() const { return absl::StrCat("https://127.0.0.1:", impl_->port()); }

absl::StatusOr<std::string> FakePveServer::ServeNode(std::string_view node, std::string_view ip,
                                                     const TestCertificate& certificate) {
  return impl_->ServeNode(node, ip, certificate);
}
void FakePveServer::SetEndpointUp(std::string_view node, bool up) {
  impl_->SetEndpointUp(node, up);
}
void FakePveServer::SetReportedFingerprint(std::string_view node, std::string_view fingerprint) {
  absl::MutexLock lock(&impl_->mu_);
  impl_->reported_fingerprints_[std::string(node)] = std::string(fingerprint);
}

void FakePveServer::RevokeToken(std::string_view token_id) {
  absl::MutexLock lock(&impl_->mu_);
  impl_->tokens_[std::string(token_id)] = "";
}
void FakePveServer::SetNodeProxyBroken(std::string_view node, bool broken) {
  absl::MutexLock lock(&impl_->mu_);
  impl_->nodes_[std::string(node)].proxy_broken = broken;
}
void FakePveServer::SetNodeOnline(std::string_view node, bool online) {
  absl::MutexLock lock(&impl_->mu_);
  impl_->nodes_[std::string(node)].status = online ? "online" : "offline";
}
void FakePveServer::SetGuestLock(int vmid, std::string_view lock) {
  absl::MutexLock l(&impl_->mu_);
  impl_->guests_[vmid].lock = std::string(lock);
}
void FakePveServer::SetGuestStatus(int vmid, std::string_view status) {
  absl::MutexLock l(&impl_->mu_);
  impl_->guests_[vmid].status = std::string(status);
}
void FakePveServer::SetStorageUsed(std::string_view node, std::string_view storage,
                                   std::int64_t used) {
  absl::MutexLock l(&impl_->mu_);
  for (Storage& s : impl_->storage_) {
    if (s.node == node && s.storage == storage) {
      s.used = used;
    }
  }
}
void FakePveServer::SetTaskExitStatus(std::string_view exitstatus) {
  absl::MutexLock lock(&impl_->mu_);
  impl_->exit_status_ = std::string(exitstatus);
}
void FakePveServer::AddTask(std::string_view node, std::string_view type, std::string_view id,
                            std::string_view status, std::int64_t started_seconds_ago,
                            std::int64_t ended_seconds_ago) {
  absl::MutexLock lock(&impl_->mu_);
  const auto now = static_cast<std::int64_t>(::time(nullptr));
  impl_->AddTaskLocked(std::string(node), std::string(type), std::string(id), std::string(status),
                       now - started_seconds_ago,
                       ended_seconds_ago < 0 ? 0 : now - ended_seconds_ago);
}
void FakePveServer::SetTaskPolls(int polls) {
  absl::MutexLock lock(&impl_->mu_);
  impl_->task_polls_ = polls;
}
std::string FakePveServer::GuestStatus(int vmid) const {
  absl::MutexLock lock(&impl_->mu_);
  const auto it = impl_->guests_.find(vmid);
  return it == impl_->guests_.end() ? "" : it->second.status;
}
std::vector<FakePveRequest> FakePveServer::Requests() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->requests_;
}
std::uint64_t FakePveServer::Handshakes() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->handshakes_;
}
std::uint64_t FakePveServer::FailedHandshakes() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->failed_handshakes_;
}

}  // namespace pulse::testing
