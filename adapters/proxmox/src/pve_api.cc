#include "pulse/adapters/proxmox/pve_api.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "proxmox_json.h"
#include "pulse/core/json/json.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox {
namespace {

constexpr std::string_view kProduct = "Proxmox VE";

core::JsonLimits Limits() { return internal::AnswerLimits(); }

absl::Status Malformed(std::string_view what) { return internal::Malformed(kProduct, what); }

using internal::Envelope;

absl::StatusOr<Envelope> Open(std::string_view body, bool want_array) {
  return internal::OpenEnvelope(kProduct, body, want_array);
}

// PVE's reads, with its product name in every message.
class Fields : public internal::Fields {
 public:
  Fields(const rapidjson::Value& object, std::string_view where, absl::Status* error)
      : internal::Fields(kProduct, object, where, error) {}
};

// An IPv4 dotted quad or an IPv6 literal (hex digits, ':' and '.' for a mapped IPv4 tail),
// as inet_pton reads them; nothing a URL could be bent with.
bool IsIpLiteral(const std::string& ip) {
  in6_addr v6{};
  in_addr v4{};
  return ip.size() <= 64 && (::inet_pton(AF_INET, ip.c_str(), &v4) == 1 ||
                             ::inet_pton(AF_INET6, ip.c_str(), &v6) == 1);
}

// 32 pairs of hex digits separated by ':' (PVE's spelling, as openssl prints it).
bool IsSha256Fingerprint(std::string_view text) {
  if (text.size() != 95) {
    return false;
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool ok =
        i % 3 == 2 ? text[i] == ':' : absl::ascii_isxdigit(static_cast<unsigned char>(text[i]));
    if (!ok) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string Printable(std::string_view text, std::size_t max) {
  std::string out;
  for (const char c : text.substr(0, max)) {
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  return out;
}

absl::StatusOr<PveVersion> DecodeVersion(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, false);
  if (!env.ok()) {
    return env.status();
  }
  absl::Status error;
  Fields f(*env->data, "version", &error);
  PveVersion out;
  out.version = f.Str("version");
  out.release = f.Str("release");
  if (error.ok() && out.version.empty()) {
    return Malformed("version has no version");
  }
  if (!error.ok()) {
    return error;
  }
  return out;
}

absl::StatusOr<std::vector<PveClusterResource>> DecodeClusterResources(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, true);
  if (!env.ok()) {
    return env.status();
  }
  std::vector<PveClusterResource> out;
  absl::Status error;
  for (const rapidjson::Value& v : env->data->GetArray()) {
    if (!v.IsObject()) {
      return Malformed("a cluster resource is not an object");
    }
    Fields f(v, "resource", &error);
    PveClusterResource r;
    r.type = f.Str("type");
    if (r.type != "node" && r.type != "qemu" && r.type != "lxc" && r.type != "storage") {
      continue;  // pool, sdn, ...
    }
    r.id = f.Str("id");
    r.node = f.Str("node");
    r.name = f.Str("name");
    r.status = f.Str("status");
    r.storage = f.Str("storage");
    r.plugintype = f.Str("plugintype");
    r.content = f.Str("content");
    r.lock = f.Str("lock");
    r.hastate = f.Str("hastate");
    r.tags = f.Str("tags");
    r.vmid = f.Int("vmid");
    r.is_template = f.Flag("template");
    r.shared = f.Flag("shared");
    r.cpu = f.Num("cpu");
    r.maxcpu = f.Int("maxcpu");
    r.mem = f.Count("mem");
    r.maxmem = f.Count("maxmem");
    r.disk = f.Count("disk");
    r.maxdisk = f.Count("maxdisk");
    r.uptime = f.Count("uptime");
    if (!error.ok()) {
      return error;
    }
    if (r.node.empty() || ((r.type == "qemu" || r.type == "lxc") && r.vmid <= 0) ||
        (r.type == "storage" && r.storage.empty())) {
      return Malformed(absl::StrCat("a ", r.type, " resource lacks its node, vmid or storage"));
    }
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<PveNodeStatus> DecodeNodeStatus(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, false);
  if (!env.ok()) {
    return env.status();
  }
  absl::Status error;
  Fields f(*env->data, "node status", &error);
  PveNodeStatus out;
  out.cpu = f.Num("cpu");
  out.wait = f.Num("wait");
  out.uptime = f.Count("uptime");
  out.pveversion = f.Str("pveversion");
  out.kversion = f.Str("kversion");
  if (const rapidjson::Value* cpuinfo = f.Object("cpuinfo")) {
    Fields c(*cpuinfo, "cpuinfo", &error);
    out.cpus = c.Int("cpus");
    out.cpu_model = c.Str("model");
  }
  if (const rapidjson::Value* memory = f.Object("memory")) {
    Fields m(*memory, "memory", &error);
    out.mem_total = m.Count("total");
    out.mem_used = m.Count("used");
  }
  if (const rapidjson::Value* rootfs = f.Object("rootfs")) {
    Fields r(*rootfs, "rootfs", &error);
    out.rootfs_total = r.Count("total");
    out.rootfs_used = r.Count("used");
  }
  if (const rapidjson::Value* load = core::GetMember(*env->data, "loadavg");
      load != nullptr && !load->IsNull()) {
    if (!load->IsArray() || load->Size() > 3) {
      return Malformed("node status.loadavg is not a list of three");
    }
    for (const rapidjson::Value& v : load->GetArray()) {
      double d = 0;
      if (v.IsNumber()) {
        d = v.GetDouble();
      } else if (!v.IsString() || v.GetStringLength() > 64 ||
                 !absl::SimpleAtod(core::ToAbsl(core::StringViewOf(v)), &d) || !std::isfinite(d)) {
        return Malformed("node status.loadavg holds a non-number");
      }
      out.loadavg.push_back(d);
    }
  }
  if (!error.ok()) {
    return error;
  }
  return out;
}

absl::StatusOr<PveGuestStatus> DecodeGuestStatus(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, false);
  if (!env.ok()) {
    return env.status();
  }
  absl::Status error;
  Fields f(*env->data, "guest status", &error);
  PveGuestStatus out;
  out.status = f.Str("status");
  out.qmpstatus = f.Str("qmpstatus");
  out.name = f.Str("name");
  out.lock = f.Str("lock");
  out.cpu = f.Num("cpu");
  out.cpus = f.Int("cpus");
  out.mem = f.Count("mem");
  out.maxmem = f.Count("maxmem");
  out.disk = f.Count("disk");
  out.maxdisk = f.Count("maxdisk");
  out.uptime = f.Count("uptime");
  if (const rapidjson::Value* ha = f.Object("ha")) {
    Fields h(*ha, "guest status.ha", &error);
    out.ha_managed = h.Flag("managed");
    out.ha_state = h.Str("state");
  }
  if (error.ok() && out.status.empty()) {
    return Malformed("guest status has no status");
  }
  if (!error.ok()) {
    return error;
  }
  return out;
}

absl::StatusOr<std::vector<PveStorage>> DecodeStorageList(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, true);
  if (!env.ok()) {
    return env.status();
  }
  std::vector<PveStorage> out;
  absl::Status error;
  for (const rapidjson::Value& v : env->data->GetArray()) {
    if (!v.IsObject()) {
      return Malformed("a storage entry is not an object");
    }
    Fields f(v, "storage", &error);
    PveStorage s;
    s.storage = f.Str("storage");
    s.type = f.Str("type");
    s.content = f.Str("content");
    s.active = f.Flag("active");
    s.enabled = f.Flag("enabled");
    s.shared = f.Flag("shared");
    s.total = f.Count("total");
    s.used = f.Count("used");
    s.avail = f.Count("avail");
    if (!error.ok()) {
      return error;
    }
    if (s.storage.empty()) {
      return Malformed("a storage entry has no storage id");
    }
    out.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<std::vector<PveHaService>> DecodeHaStatus(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, true);
  if (!env.ok()) {
    return env.status();
  }
  std::vector<PveHaService> out;
  absl::Status error;
  for (const rapidjson::Value& v : env->data->GetArray()) {
    if (!v.IsObject()) {
      return Malformed("an HA status entry is not an object");
    }
    Fields f(v, "ha status", &error);
    if (f.Str("type") != "service") {
      continue;
    }
    PveHaService s;
    s.sid = f.Str("sid");
    s.node = f.Str("node");
    s.state = f.Str("state");
    s.request_state = f.Str("request_state");
    if (!error.ok()) {
      return error;
    }
    if (s.sid.empty()) {
      return Malformed("an HA service has no sid");
    }
    out.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<std::vector<PveClusterMember>> DecodeClusterStatus(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, true);
  if (!env.ok()) {
    return env.status();
  }
  std::vector<PveClusterMember> out;
  absl::Status error;
  for (const rapidjson::Value& v : env->data->GetArray()) {
    if (!v.IsObject()) {
      return Malformed("a cluster status entry is not an object");
    }
    Fields f(v, "cluster status", &error);
    if (f.Str("type") != "node") {
      continue;
    }
    PveClusterMember m;
    m.name = f.Str("name");
    m.ip = f.Str("ip");
    m.nodeid = f.Int("nodeid");
    m.online = f.Flag("online");
    m.local = f.Flag("local");
    if (!error.ok()) {
      return error;
    }
    if (m.name.empty()) {
      return Malformed("a cluster member has no name");
    }
    if (!m.ip.empty() && !IsIpLiteral(m.ip)) {
      return Malformed("a cluster member's ip is not an IP address");
    }
    out.push_back(std::move(m));
  }
  return out;
}

absl::StatusOr<std::vector<PveCertificate>> DecodeCertificateInfo(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, true);
  if (!env.ok()) {
    return env.status();
  }
  std::vector<PveCertificate> out;
  absl::Status error;
  for (const rapidjson::Value& v : env->data->GetArray()) {
    if (!v.IsObject()) {
      return Malformed("a certificate entry is not an object");
    }
    Fields f(v, "certificate", &error);
    PveCertificate c;
    c.filename = f.Str("filename");
    c.fingerprint = f.Str("fingerprint");
    if (!error.ok()) {
      return error;
    }
    if (!IsSha256Fingerprint(c.fingerprint)) {
      return Malformed("a certificate's fingerprint is not a SHA-256 fingerprint");
    }
    out.push_back(std::move(c));
  }
  return out;
}

const PveCertificate* ProxyCertificate(const std::vector<PveCertificate>& certificates) {
  const PveCertificate* cluster = nullptr;
  for (const PveCertificate& c : certificates) {
    if (c.filename == "pveproxy-ssl.pem") {
      return &c;
    }
    if (c.filename == "pve-ssl.pem") {
      cluster = &c;
    }
  }
  return cluster;
}

absl::StatusOr<std::vector<PveRrdRow>> DecodeRrdData(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, true);
  if (!env.ok()) {
    return env.status();
  }
  std::vector<PveRrdRow> out;
  out.reserve(env->data->Size());
  absl::Status error;
  for (const rapidjson::Value& v : env->data->GetArray()) {
    if (!v.IsObject()) {
      return Malformed("an rrddata row is not an object");
    }
    Fields f(v, "rrddata", &error);
    PveRrdRow row;
    row.time = f.Int("time");
    row.cpu = f.Maybe("cpu");
    row.memused = f.Maybe("memused");
    row.memtotal = f.Maybe("memtotal");
    row.rootused = f.Maybe("rootused");
    row.roottotal = f.Maybe("roottotal");
    row.mem = f.Maybe("mem");
    row.maxmem = f.Maybe("maxmem");
    row.disk = f.Maybe("disk");
    row.maxdisk = f.Maybe("maxdisk");
    row.used = f.Maybe("used");
    row.total = f.Maybe("total");
    if (!error.ok()) {
      return error;
    }
    if (row.time <= 0) {
      return Malformed("an rrddata row has no time");
    }
    out.push_back(row);
  }
  return out;
}

absl::StatusOr<std::vector<PveTask>> DecodeClusterTasks(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, true);
  if (!env.ok()) {
    return env.status();
  }
  std::vector<PveTask> out;
  out.reserve(env->data->Size());
  absl::Status error;
  for (const rapidjson::Value& v : env->data->GetArray()) {
    if (!v.IsObject()) {
      return Malformed("a task is not an object");
    }
    Fields f(v, "task", &error);
    PveTask t;
    t.upid = f.Str("upid");
    t.node = f.Str("node");
    t.type = f.Str("type");
    t.id = f.Str("id");
    t.user = f.Str("user");
    t.starttime = f.Int("starttime");
    t.endtime = f.Int("endtime");
    t.status = f.Str("status");
    if (!error.ok()) {
      return error;
    }
    if (t.upid.empty() || t.node.empty() || t.type.empty()) {
      return Malformed("a task lacks its upid, node or type");
    }
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<std::vector<PveBackupJob>> DecodeBackupJobs(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, true);
  if (!env.ok()) {
    return env.status();
  }
  std::vector<PveBackupJob> out;
  absl::Status error;
  for (const rapidjson::Value& v : env->data->GetArray()) {
    if (!v.IsObject()) {
      return Malformed("a backup job is not an object");
    }
    Fields f(v, "backup job", &error);
    if (const std::string type = f.Str("type"); !type.empty() && type != "vzdump") {
      continue;
    }
    PveBackupJob j;
    j.id = f.Str("id");
    j.schedule = f.Str("schedule");
    if (j.schedule.empty()) {
      const std::string start = f.Str("starttime");
      const std::string dow = f.Str("dow");
      if (!start.empty()) {
        j.schedule = dow.empty() ? start : absl::StrCat(dow, " ", start);
      }
    }
    const rapidjson::Value* enabled = core::GetMember(v, "enabled");
    j.enabled = enabled == nullptr || enabled->IsNull() || f.Flag("enabled");
    j.all = f.Flag("all");
    j.vmid = f.Str("vmid");
    j.storage = f.Str("storage");
    j.node = f.Str("node");
    j.mode = f.Str("mode");
    j.comment = f.Str("comment");
    j.next_run = f.Int("next-run");
    if (!error.ok()) {
      return error;
    }
    if (j.id.empty()) {
      return Malformed("a backup job has no id");
    }
    out.push_back(std::move(j));
  }
  return out;
}

absl::StatusOr<PveTaskStatus> DecodeTaskStatus(std::string_view body) {
  absl::StatusOr<Envelope> env = Open(body, false);
  if (!env.ok()) {
    return env.status();
  }
  absl::Status error;
  Fields f(*env->data, "task", &error);
  PveTaskStatus out;
  out.upid = f.Str("upid");
  out.status = f.Str("status");
  out.exitstatus = f.Str("exitstatus");
  if (!error.ok()) {
    return error;
  }
  if (out.status != "running" && out.status != "stopped") {
    return Malformed("task status is neither running nor stopped");
  }
  return out;
}

absl::StatusOr<std::string> DecodeUpid(std::string_view body) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body, Limits());
  if (!doc.ok() || !doc->IsObject()) {
    return Malformed("not a JSON object");
  }
  std::optional<std::string_view> upid = core::GetString(*doc, "data");
  if (!upid.has_value() || upid->size() > 512 || !absl::StartsWith(core::ToAbsl(*upid), "UPID:")) {
    return Malformed("data is not a UPID");
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(core::ToAbsl(*upid), ':');
  // UPID, node, pid, pstart, starttime, type, id, user, "" (the trailing ':').
  if (parts.size() < 9 || parts[1].empty() || parts[5].empty()) {
    return Malformed("data is not a UPID");
  }
  for (const char c : *upid) {
    if (c < 0x21 || c > 0x7e) {
      return Malformed("the UPID holds a character outside printable ASCII");
    }
  }
  return std::string(*upid);
}

std::string DecodeErrors(std::string_view body) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body, Limits());
  if (!doc.ok() || !doc->IsObject()) {
    return "";
  }
  const rapidjson::Value* errors = core::GetMember(*doc, "errors");
  if (errors == nullptr || !errors->IsObject()) {
    return "";
  }
  std::string out;
  for (const auto& m : errors->GetObject()) {
    if (out.size() > 300) {
      break;
    }
    absl::StrAppend(&out, out.empty() ? "" : "; ", Printable(core::StringViewOf(m.name), 64), ": ",
                    m.value.IsString() ? Printable(core::StringViewOf(m.value), 160) : "?");
  }
  return out;
}

}  // namespace pulse::proxmox
