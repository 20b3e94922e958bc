#include "pulse/testing/fake_pbs_server.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_tls_listener.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::testing {
namespace {

struct Datastore {
  std::string store, error;
  std::int64_t total = 0, used = 0, avail = 0;
};

struct Snapshot {
  std::string store, type, id, verification;
  std::int64_t time = 0, size = 0;
};

struct Task {
  std::string upid, worker_type, worker_id, status;
  std::int64_t starttime = 0, endtime = 0;
};

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Str(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}
void Int(Writer& w, const char* key, std::int64_t value) {
  w.Key(key);
  w.Int64(value);
}

FakeHttpReply Ok(const std::function<void(Writer&)>& value) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("data");
  value(w);
  w.EndObject();
  return {200, "OK", buffer.GetString()};
}

// proxmox-rest-server's refusals: the standard reason phrase, the error's text as the body.
FakeHttpReply Refuse(int status, std::string text) {
  const char* reason = status == 401   ? "Unauthorized"
                       : status == 403 ? "Forbidden"
                       : status == 404 ? "Not Found"
                                       : "Bad Request";
  return {status, reason, std::move(text)};
}

std::string Get(const rapidjson::Value& o, const char* key, std::string fallback = "") {
  std::optional<std::string_view> v = core::GetString(o, key);
  return v.has_value() ? std::string(*v) : fallback;
}
std::int64_t GetInt(const rapidjson::Value& o, const char* key, std::int64_t fallback = 0) {
  return core::GetInt64(o, key).value_or(fallback);
}
// A time as Unix seconds, or "age_seconds" before now.
std::int64_t GetTime(const rapidjson::Value& o, const char* key, std::int64_t now) {
  if (const std::optional<std::int64_t> age = core::GetInt64(o, "age_seconds")) {
    return now - *age;
  }
  return GetInt(o, key, now);
}

}  // namespace

class FakePbsServer::Impl {
 public:
  absl::Status Load(std::string_view scenario) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<rapidjson::Document> doc = core::ParseJson(scenario);
    if (!doc.ok() || !doc->IsObject()) {
      return absl::InvalidArgumentError("the PBS scenario is not a JSON object");
    }
    const std::int64_t now = absl::ToUnixSeconds(absl::Now());
    version_ = Get(*doc, "version", "3.2");
    release_ = Get(*doc, "release", "7");
    hostname_ = Get(*doc, "hostname", "pbs1");
    unauthorized_delay_ = absl::Milliseconds(GetInt(*doc, "unauthorized_delay_ms", 0));
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
    // The lambdas below run while this function holds mu_, which clang's lock analysis cannot
    // see into: they write through pointers taken here.
    std::vector<Datastore>* datastores = &datastores_;
    std::vector<Snapshot>* snapshots = &snapshots_;
    struct PendingTask {
      std::string type, id, status;
      std::int64_t start = 0, end = 0;
    };
    std::vector<PendingTask> tasks;
    each("datastores", [datastores](const rapidjson::Value& v) {
      Datastore d;
      d.store = Get(v, "store");
      d.error = Get(v, "error");
      d.total = GetInt(v, "total");
      d.used = GetInt(v, "used");
      d.avail = GetInt(v, "avail", d.total - d.used);
      datastores->push_back(d);
    });
    each("snapshots", [snapshots, now](const rapidjson::Value& v) {
      Snapshot s;
      s.store = Get(v, "store");
      s.type = Get(v, "backup-type", "vm");
      s.id = Get(v, "backup-id");
      s.time = GetTime(v, "backup-time", now);
      s.size = GetInt(v, "size");
      s.verification = Get(v, "verification");
      snapshots->push_back(s);
    });
    each("tasks", [&tasks, now](const rapidjson::Value& v) {
      const std::int64_t start = GetTime(v, "starttime", now);
      const std::string status = Get(v, "status", "OK");
      tasks.push_back({Get(v, "worker_type"), Get(v, "worker_id"), status, start,
                       status.empty() ? 0 : start + GetInt(v, "duration", 60)});
    });
    for (const PendingTask& t : tasks) {
      AddTask(t.type, t.id, t.start, t.end, t.status);
    }
    return absl::OkStatus();
  }

  void AddTask(const std::string& type, const std::string& id, std::int64_t start, std::int64_t end,
               const std::string& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Task t;
    t.worker_type = type;
    t.worker_id = id;
    t.starttime = start;
    t.endtime = end;
    t.status = status;
    // UPID:node:pid:pstart:task-id:starttime:type:id:auth-id: (the id systemd-escaped).
    std::string escaped;
    for (const char c : id) {
      escaped += c == ':' ? std::string("\\x3a") : std::string(1, c);
    }
    t.upid = absl::StrFormat("UPID:%s:%08X:%08X:%08X:%08X:%s:%s:root@pam:", hostname_, 1000, 0x1234,
                             next_task_++, start, type, escaped);
    tasks_.push_back(t);
  }

  FakeHttpReply Answer(const FakePveRequest& request) {
    absl::Duration delay;
    FakeHttpReply reply;
    {
      absl::MutexLock lock(&mu_);
      reply = Authenticate(request.authorization);
      delay = unauthorized_delay_;
      if (reply.status == 200) {
        reply = Route(request);
      }
    }
    if (reply.status == 401 && delay > absl::ZeroDuration()) {
      absl::SleepFor(delay);
    }
    return reply;
  }

  mutable absl::Mutex mu_;
  std::map<std::string, std::string> tokens_ ABSL_GUARDED_BY(mu_);
  std::vector<Datastore> datastores_ ABSL_GUARDED_BY(mu_);
  std::vector<Snapshot> snapshots_ ABSL_GUARDED_BY(mu_);
  std::vector<Task> tasks_ ABSL_GUARDED_BY(mu_);
  // Declared last: destroyed first, so the serving thread stops before the state it reads.
  std::unique_ptr<FakeTlsListener> listener_;

 private:
  FakeHttpReply Authenticate(const std::string& header) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::string_view value = header;
    if (!absl::ConsumePrefix(&value, "PBSAPIToken=")) {
      return Refuse(401, "authentication failed - no authentication credentials provided.");
    }
    const std::size_t colon = value.find(':');
    const std::size_t bang = value.find('!');
    if (colon == absl::string_view::npos || bang == absl::string_view::npos || bang > colon) {
      return Refuse(401, "authentication failed - invalid API token");
    }
    const auto it = tokens_.find(std::string(value.substr(0, colon)));
    if (it == tokens_.end() || it->second.empty()) {
      return Refuse(401, "authentication failed - user account or token disabled or expired.");
    }
    if (it->second != value.substr(colon + 1)) {
      return Refuse(401, "authentication failed - invalid API token");
    }
    return FakeHttpReply{};
  }

  FakeHttpReply Route(const FakePveRequest& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::string_view target = request.target;
    const std::string not_found = absl::StrCat("Path '", target, "' not found.");
    if (!absl::ConsumePrefix(&target, "/api2/json") || request.method != "GET") {
      return Refuse(404, not_found);
    }
    std::string query;
    if (const std::size_t q = target.find('?'); q != absl::string_view::npos) {
      query = std::string(target.substr(q + 1));
      target = target.substr(0, q);
    }
    const std::vector<std::string> parts = absl::StrSplit(target, '/', absl::SkipEmpty());
    if (parts == std::vector<std::string>{"version"}) {
      const std::string* version = &version_;
      const std::string* release = &release_;
      return Ok([version, release](Writer& w) {
        w.StartObject();
        Str(w, "version", *version);
        Str(w, "release", *release);
        Str(w, "repoid", "8cd3a5f3c1b56d3d");
        w.EndObject();
      });
    }
    if (parts == std::vector<std::string>{"status", "datastore-usage"}) {
      return DatastoreUsage();
    }
    if (parts.size() == 4 && parts[0] == "admin" && parts[1] == "datastore" &&
        parts[3] == "snapshots") {
      return Snapshots(parts[2]);
    }
    if (parts == std::vector<std::string>{"nodes", "localhost", "tasks"}) {
      return Tasks(query);
    }
    return Refuse(404, not_found);
  }

  FakeHttpReply DatastoreUsage() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::vector<Datastore>* datastores = &datastores_;
    return Ok([datastores](Writer& w) {
      w.StartArray();
      for (const Datastore& d : *datastores) {
        w.StartObject();
        Str(w, "store", d.store);
        if (!d.error.empty()) {
          Str(w, "error", d.error);
        } else {
          Int(w, "total", d.total);
          Int(w, "used", d.used);
          Int(w, "avail", d.avail);
          w.Key("history");
          w.StartArray();
          w.EndArray();
          Int(w, "history-start", 0);
          Int(w, "history-delta", 60);
        }
        w.EndObject();
      }
      w.EndArray();
    });
  }

  FakeHttpReply Snapshots(const std::string& store) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const bool known = std::any_of(datastores_.begin(), datastores_.end(),
                                   [&store](const Datastore& d) { return d.store == store; });
    if (!known) {
      return Refuse(400, absl::StrCat("datastore '", store, "' does not exist"));
    }
    const std::vector<Snapshot>* snapshots = &snapshots_;
    const std::string* hostname = &hostname_;
    return Ok([snapshots, hostname, &store](Writer& w) {
      w.StartArray();
      for (const Snapshot& s : *snapshots) {
        if (s.store != store) {
          continue;
        }
        w.StartObject();
        Str(w, "backup-type", s.type);
        Str(w, "backup-id", s.id);
        Int(w, "backup-time", s.time);
        Int(w, "size", s.size);
        w.Key("protected");
        w.Bool(false);
        Str(w, "owner", "root@pam");
        w.Key("files");
        w.StartArray();
        w.StartObject();
        Str(w, "filename", "index.json.blob");
        Int(w, "size", 512);
        Str(w, "crypt-mode", "none");
        w.EndObject();
        w.EndArray();
        if (!s.verification.empty()) {
          w.Key("verification");
          w.StartObject();
          Str(w, "state", s.verification);
          Str(w, "upid",
              absl::StrFormat("UPID:%s:00000400:00001234:00000000:%08X:verificationjob:"
                              "%s\\x3av-daily:root@pam:",
                              *hostname, s.time, store));
          w.EndObject();
        }
        w.EndObject();
      }
      w.EndArray();
    });
  }

  FakeHttpReply Tasks(const std::string& query) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::size_t limit = 50;  // PBS's default
    std::string typefilter;
    for (absl::string_view param : absl::StrSplit(query, '&', absl::SkipEmpty())) {
      if (absl::ConsumePrefix(&param, "limit=")) {
        (void)absl::SimpleAtoi(param, &limit);
      } else if (absl::ConsumePrefix(&param, "typefilter=")) {
        typefilter = std::string(param);
      }
    }
    // PBS keeps a task when its worker type contains the typefilter.
    std::vector<Task> sorted;
    std::copy_if(
        tasks_.begin(), tasks_.end(), std::back_inserter(sorted),
        [&typefilter](const Task& t) { return absl::StrContains(t.worker_type, typefilter); });
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Task& a, const Task& b) { return a.starttime > b.starttime; });
    if (sorted.size() > limit) {
      sorted.resize(limit);
    }
    const std::string* hostname = &hostname_;
    return Ok([hostname, &sorted](Writer& w) {
      w.StartArray();
      for (const Task& t : sorted) {
        w.StartObject();
        Str(w, "upid", t.upid);
        Str(w, "node", *hostname);
        Int(w, "pid", 1000);
        Int(w, "pstart", 0x1234);
        Int(w, "starttime", t.starttime);
        Str(w, "worker_type", t.worker_type);
        Str(w, "worker_id", t.worker_id);
        Str(w, "user", "root@pam");
        if (!t.status.empty()) {
          Int(w, "endtime", t.endtime);
          Str(w, "status", t.status);
        }
        w.EndObject();
      }
      w.EndArray();
    });
  }

  std::string version_ ABSL_GUARDED_BY(mu_);
  std::string release_ ABSL_GUARDED_BY(mu_);
  std::string hostname_ ABSL_GUARDED_BY(mu_);
  absl::Duration unauthorized_delay_ ABSL_GUARDED_BY(mu_);
  std::uint32_t next_task_ ABSL_GUARDED_BY(mu_) = 0;
};

FakePbsServer::FakePbsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakePbsServer::~FakePbsServer() = default;

absl::StatusOr<std::unique_ptr<FakePbsServer>> FakePbsServer::Start(
    std::string_view scenario_json, const TestCertificate& certificate) {
  auto impl = std::make_unique<Impl>();
  {
    absl::MutexLock lock(&impl->mu_);
    if (absl::Status s = impl->Load(scenario_json); !s.ok()) {
      return s;
    }
  }
  Impl* state = impl.get();
  absl::StatusOr<std::unique_ptr<FakeTlsListener>> listener = FakeTlsListener::Start(
      certificate, [state](const FakePveRequest& request) { return state->Answer(request); });
  if (!listener.ok()) {
    return listener.status();
  }
  impl->listener_ = *std::move(listener);
  return std::unique_ptr<FakePbsServer>(new FakePbsServer(std::move(impl)));
}

std::string FakePbsServer::url() const {
  return absl::StrCat("https://127.0.0.1:", impl_->listener_->port());
}

void FakePbsServer::RevokeToken(std::string_view token_id) {
  absl::MutexLock lock(&impl_->mu_);
  impl_->tokens_.erase(std::string(token_id));
}

void FakePbsServer::SetDatastoreUsed(std::string_view store, std::int64_t used) {
  absl::MutexLock lock(&impl_->mu_);
  for (Datastore& d : impl_->datastores_) {
    if (d.store == store) {
      d.used = used;
      d.avail = std::max<std::int64_t>(0, d.total - used);
    }
  }
}

void FakePbsServer::AddFinishedTask(std::string_view worker_type, std::string_view worker_id,
                                    std::string_view status) {
  absl::MutexLock lock(&impl_->mu_);
  const std::int64_t now = absl::ToUnixSeconds(absl::Now());
  impl_->AddTask(std::string(worker_type), std::string(worker_id), now - 1, now,
                 std::string(status));
}

std::vector<FakePveRequest> FakePbsServer::Requests() const { return impl_->listener_->Requests(); }
std::uint64_t FakePbsServer::Handshakes() const { return impl_->listener_->Handshakes(); }
std::uint64_t FakePbsServer::FailedHandshakes() const {
  return impl_->listener_->FailedHandshakes();
}

}  // namespace pulse::testing
