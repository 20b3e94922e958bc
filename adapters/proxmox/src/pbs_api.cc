#include "pulse/adapters/proxmox/pbs_api.h"

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "proxmox_json.h"
#include "pulse/adapters/proxmox/pve_api.h"
#include "pulse/core/json/json.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox {
namespace {

constexpr std::string_view kProduct = "Proxmox Backup Server";

absl::Status Malformed(std::string_view what) { return internal::Malformed(kProduct, what); }

absl::StatusOr<internal::Envelope> Open(std::string_view body, bool want_array) {
  return internal::OpenEnvelope(kProduct, body, want_array);
}

// PBS's reads, with its product name in every message.
class Fields : public internal::Fields {
 public:
  Fields(const rapidjson::Value& object, std::string_view where, absl::Status* error)
      : internal::Fields(kProduct, object, where, error) {}
};

// The entries of a list answer, each an object; DataLoss for anything else.
template <typename T, typename Decode>
absl::StatusOr<std::vector<T>> DecodeList(std::string_view body, std::string_view what,
                                          const Decode& decode) {
  absl::StatusOr<internal::Envelope> env = Open(body, true);
  if (!env.ok()) {
    return env.status();
  }
  std::vector<T> out;
  for (const rapidjson::Value& v : env->data->GetArray()) {
    if (!v.IsObject()) {
      return Malformed(absl::StrCat("a ", core::ToAbsl(what), " entry is not an object"));
    }
    absl::Status error;
    std::optional<T> item = decode(v, &error);
    if (!error.ok()) {
      return error;
    }
    if (item.has_value()) {
      out.push_back(*std::move(item));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<PbsVersion> DecodePbsVersion(std::string_view body) {
  absl::StatusOr<internal::Envelope> env = Open(body, false);
  if (!env.ok()) {
    return env.status();
  }
  absl::Status error;
  Fields f(*env->data, "version", &error);
  PbsVersion out;
  out.version = f.Str("version");
  out.release = f.Str("release");
  if (!error.ok()) {
    return error;
  }
  if (out.version.empty()) {
    return Malformed("version has no version");
  }
  return out;
}

absl::StatusOr<std::vector<PbsDatastoreUsage>> DecodeDatastoreUsage(std::string_view body) {
  return DecodeList<PbsDatastoreUsage>(
      body, "datastore usage",
      [](const rapidjson::Value& v, absl::Status* error) -> std::optional<PbsDatastoreUsage> {
        Fields f(v, "datastore usage", error);
        PbsDatastoreUsage d;
        d.store = f.Str("store");
        d.total = f.Count("total");
        d.used = f.Count("used");
        d.avail = f.Count("avail");
        d.error = f.Str("error");
        if (error->ok() && d.store.empty()) {
          *error = Malformed("a datastore usage entry has no store");
        }
        return d;
      });
}

absl::StatusOr<std::vector<PbsSnapshot>> DecodeSnapshots(std::string_view body) {
  return DecodeList<PbsSnapshot>(
      body, "snapshot",
      [](const rapidjson::Value& v, absl::Status* error) -> std::optional<PbsSnapshot> {
        Fields f(v, "snapshot", error);
        PbsSnapshot s;
        s.backup_type = f.Str("backup-type");
        s.backup_id = f.Str("backup-id");
        s.backup_time = f.Int("backup-time");
        s.size = f.Count("size");
        s.is_protected = f.Flag("protected");
        // {"state": "ok"|"failed", "upid": "..."}; a bare state string is read as the state.
        const rapidjson::Value* verification = core::GetMember(v, "verification");
        if (verification != nullptr && verification->IsString()) {
          s.verify_state = f.Str("verification");
        } else if (const rapidjson::Value* object = f.Object("verification")) {
          Fields vf(*object, "snapshot.verification", error);
          s.verify_state = vf.Str("state");
        }
        if (!error->ok()) {
          return std::nullopt;
        }
        if (s.backup_type != "vm" && s.backup_type != "ct" && s.backup_type != "host") {
          return std::nullopt;  // a type a later PBS adds
        }
        if (s.backup_id.empty() || s.backup_time <= 0) {
          *error = Malformed("a snapshot has no backup-id or backup-time");
        }
        return s;
      });
}

absl::StatusOr<std::vector<PbsTask>> DecodeTasks(std::string_view body) {
  return DecodeList<PbsTask>(
      body, "task", [](const rapidjson::Value& v, absl::Status* error) -> std::optional<PbsTask> {
        Fields f(v, "task", error);
        PbsTask t;
        t.upid = f.Str("upid");
        // TaskListItem spells it worker_type; accept the kebab-case spelling of other items.
        t.worker_type = f.Str("worker_type");
        if (t.worker_type.empty()) {
          t.worker_type = f.Str("worker-type");
        }
        t.worker_id = f.Str("worker_id");
        if (t.worker_id.empty()) {
          t.worker_id = f.Str("worker-id");
        }
        t.starttime = f.Int("starttime");
        t.endtime = f.Int("endtime");
        t.status = f.Str("status");
        if (error->ok() && t.worker_type.empty()) {
          *error = Malformed("a task has no worker_type");
        }
        return t;
      });
}

std::string DecodePbsError(std::string_view body) {
  if (body.empty()) {
    return "";
  }
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body, internal::AnswerLimits());
  if (doc.ok()) {
    if (!doc->IsObject()) {
      return "";
    }
    const std::optional<std::string_view> message = core::GetString(*doc, "message");
    return message.has_value() ? Printable(*message, 200) : "";
  }
  // proxmox-rest-server sends the error's text as the body (under a JSON content type).
  return Printable(core::ToStd(absl::StripAsciiWhitespace(core::ToAbsl(body))), 200);
}

}  // namespace pulse::proxmox
