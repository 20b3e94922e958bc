#include "pulse/core/alerts/alert_intake.h"

#include <sodium/crypto_hash_sha256.h>

#include <algorithm>
#include <array>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::core {
namespace {

constexpr std::size_t kMaxNameBytes = 200;
constexpr std::size_t kMaxFingerprintBytes = 64;
constexpr std::size_t kMaxListedCandidates = 5;

absl::Status Bad(std::string_view what, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), " ", ToAbsl(why)));
}

bool IsLabelName(std::string_view name) {
  if (name.empty() || name.size() > kMaxAlertLabelNameBytes ||
      absl::ascii_isdigit(static_cast<unsigned char>(name.front()))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Clean text: valid UTF-8 without control characters (an annotation may hold line breaks and
// tabs).
bool IsCleanText(std::string_view text, bool multiline) {
  if (!IsValidUtf8(text)) {
    return false;
  }
  return std::none_of(text.begin(), text.end(), [multiline](char c) {
    const auto u = static_cast<unsigned char>(c);
    if (multiline && (c == '\n' || c == '\t' || c == '\r')) {
      return false;
    }
    return u < 0x20 || u == 0x7f;
  });
}

absl::StatusOr<std::map<std::string, std::string>> ReadStringMap(const rapidjson::Value& v,
                                                                 std::string_view what,
                                                                 bool annotations) {
  if (!v.IsObject()) {
    return Bad(what, "must be an object of strings");
  }
  if (v.MemberCount() > kMaxAlertLabels) {
    return Bad(what, absl::StrCat("hold at most ", kMaxAlertLabels, " entries"));
  }
  const std::size_t max_value = annotations ? kMaxAlertAnnotationBytes : kMaxAlertLabelValueBytes;
  std::map<std::string, std::string> out;
  for (const auto& m : v.GetObject()) {
    const std::string_view name = StringViewOf(m.name);
    if (!IsLabelName(name)) {
      return Bad(what, "names must be [A-Za-z_][A-Za-z0-9_]* of at most 128 characters");
    }
    if (!m.value.IsString()) {
      return Bad(what, absl::StrCat("value of ", ToAbsl(name), " must be a string"));
    }
    const std::string_view value = StringViewOf(m.value);
    if (value.size() > max_value || !IsCleanText(value, annotations)) {
      return Bad(what, absl::StrCat("value of ", ToAbsl(name), " must be clean text of at most ",
                                    max_value, " bytes"));
    }
    if (!out.emplace(std::string(name), std::string(value)).second) {
      return Bad(what, absl::StrCat("name ", ToAbsl(name), " is given twice"));
    }
  }
  return out;
}

absl::StatusOr<std::optional<absl::Time>> ReadTime(const rapidjson::Value& alert,
                                                   const char* member, std::string_view what) {
  const rapidjson::Value* v = GetMember(alert, member);
  if (v == nullptr || (v->IsString() && v->GetStringLength() == 0)) {
    return std::optional<absl::Time>();
  }
  if (!v->IsString()) {
    return Bad(what, absl::StrCat(member, " must be an RFC 3339 time"));
  }
  std::optional<absl::Time> t = ParseRfc3339(StringViewOf(*v));
  if (!t.has_value()) {
    return Bad(what, absl::StrCat(member, " must be an RFC 3339 time"));
  }
  // Alertmanager's "0001-01-01T00:00:00Z" means "not set" (a firing alert's end).
  if (*t < absl::FromCivil(absl::CivilSecond(1000, 1, 1), absl::UTCTimeZone())) {
    return std::optional<absl::Time>();
  }
  return t;
}

absl::StatusOr<bool> ReadStatus(std::string_view status, std::string_view what) {
  if (status == "firing") {
    return true;
  }
  if (status == "resolved") {
    return false;
  }
  return Bad(what, "status must be firing or resolved");
}

std::string Hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0x0f]);
  }
  return out;
}

// A stable fingerprint of a label set (the native shape has none of its own).
std::string FingerprintOf(const std::map<std::string, std::string>& labels) {
  std::string preimage;
  for (const auto& [k, v] : labels) {
    absl::StrAppend(&preimage, k.size(), ":", k, v.size(), ":", v, "\n");
  }
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(preimage.data()),
                     preimage.size());
  return Hex(digest.data(), 8);
}

// The body's "alerts": a non-empty array of at most kMaxAlertsPerRequest.
absl::StatusOr<const rapidjson::Value*> AlertsArray(const rapidjson::Value& doc) {
  const rapidjson::Value* alerts = GetMember(doc, "alerts");
  if (alerts == nullptr || !alerts->IsArray() || alerts->Empty()) {
    return absl::InvalidArgumentError("alerts must be a non-empty array");
  }
  if (alerts->Size() > kMaxAlertsPerRequest) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxAlertsPerRequest, " alerts in one request"));
  }
  return alerts;
}

absl::StatusOr<AlertBatch> ParseAlertmanager(const rapidjson::Value& doc) {
  const rapidjson::Value* version = GetMember(doc, "version");
  if (!version->IsString() || StringViewOf(*version) != "4") {
    return absl::InvalidArgumentError(
        "version must be \"4\" (Alertmanager's webhook payload; the native shape has no version)");
  }
  AlertBatch batch;
  batch.shape = "alertmanager";
  if (const rapidjson::Value* receiver = GetMember(doc, "receiver");
      receiver != nullptr && receiver->IsString()) {
    batch.receiver = std::string(TruncateUtf8(SanitizeUtf8(StringViewOf(*receiver)), 128));
  }
  absl::StatusOr<const rapidjson::Value*> alerts = AlertsArray(doc);
  if (!alerts.ok()) {
    return alerts.status();
  }
  std::size_t index = 0;
  for (const rapidjson::Value& a : (*alerts)->GetArray()) {
    const std::string what = absl::StrCat("alerts[", index++, "]");
    if (!a.IsObject()) {
      return Bad(what, "must be an object");
    }
    Alert alert;
    const rapidjson::Value* status = GetMember(a, "status");
    if (status == nullptr || !status->IsString()) {
      return Bad(what, "status must be firing or resolved");
    }
    absl::StatusOr<bool> firing = ReadStatus(StringViewOf(*status), what);
    if (!firing.ok()) {
      return firing.status();
    }
    alert.firing = *firing;
    const rapidjson::Value* labels = GetMember(a, "labels");
    if (labels == nullptr) {
      return Bad(what, "has no labels");
    }
    absl::StatusOr<std::map<std::string, std::string>> l =
        ReadStringMap(*labels, absl::StrCat(what, " labels"), false);
    if (!l.ok()) {
      return l.status();
    }
    alert.labels = *std::move(l);
    if (const rapidjson::Value* annotations = GetMember(a, "annotations"); annotations != nullptr) {
      absl::StatusOr<std::map<std::string, std::string>> an =
          ReadStringMap(*annotations, absl::StrCat(what, " annotations"), true);
      if (!an.ok()) {
        return an.status();
      }
      alert.annotations = *std::move(an);
    }
    absl::StatusOr<std::optional<absl::Time>> starts = ReadTime(a, "startsAt", what);
    absl::StatusOr<std::optional<absl::Time>> ends = ReadTime(a, "endsAt", what);
    if (!starts.ok() || !ends.ok()) {
      return starts.ok() ? ends.status() : starts.status();
    }
    alert.starts_at = *starts;
    alert.ends_at = *ends;
    if (const rapidjson::Value* url = GetMember(a, "generatorURL");
        url != nullptr && url->IsString() && url->GetStringLength() <= 2048 &&
        IsCleanText(StringViewOf(*url), false)) {
      alert.generator_url = std::string(StringViewOf(*url));
    }
    if (const rapidjson::Value* fp = GetMember(a, "fingerprint"); fp != nullptr) {
      if (!fp->IsString() || fp->GetStringLength() > kMaxFingerprintBytes ||
          !std::all_of(fp->GetString(), fp->GetString() + fp->GetStringLength(),
                       [](char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); })) {
        return Bad(what, "fingerprint must be at most 64 letters and digits");
      }
      alert.fingerprint = std::string(StringViewOf(*fp));
    }
    if (alert.fingerprint.empty()) {
      alert.fingerprint = FingerprintOf(alert.labels);
    }
    if (alert.Name().empty() || alert.Name().size() > kMaxNameBytes) {
      return Bad(what, "needs an alertname label of at most 200 bytes");
    }
    batch.alerts.push_back(std::move(alert));
  }
  return batch;
}

absl::StatusOr<AlertBatch> ParseNative(const rapidjson::Value& doc) {
  for (const auto& m : doc.GetObject()) {
    if (StringViewOf(m.name) != "alerts") {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown member ", QuoteForMessage(StringViewOf(m.name)),
          " (the native shape is {\"alerts\": [...]}; Alertmanager's payload has \"version\")"));
    }
  }
  absl::StatusOr<const rapidjson::Value*> alerts = AlertsArray(doc);
  if (!alerts.ok()) {
    return alerts.status();
  }
  AlertBatch batch;
  batch.shape = "native";
  std::size_t index = 0;
  static const std::set<std::string_view> kMembers = {
      "name", "status", "resource_id", "severity", "summary", "description", "labels"};
  for (const rapidjson::Value& a : (*alerts)->GetArray()) {
    const std::string what = absl::StrCat("alerts[", index++, "]");
    if (!a.IsObject()) {
      return Bad(what, "must be an object");
    }
    std::set<std::string_view> seen;
    for (const auto& m : a.GetObject()) {
      const std::string_view name = StringViewOf(m.name);
      if (kMembers.count(name) == 0) {
        return Bad(what, absl::StrCat("has an unknown member ", QuoteForMessage(name)));
      }
      if (!seen.insert(name).second) {
        return Bad(what, absl::StrCat("gives ", ToAbsl(name), " twice"));
      }
      if (name != "labels" && !m.value.IsString()) {
        return Bad(what, absl::StrCat(ToAbsl(name), " must be a string"));
      }
    }
    Alert alert;
    if (const rapidjson::Value* labels = GetMember(a, "labels"); labels != nullptr) {
      absl::StatusOr<std::map<std::string, std::string>> l =
          ReadStringMap(*labels, absl::StrCat(what, " labels"), false);
      if (!l.ok()) {
        return l.status();
      }
      alert.labels = *std::move(l);
    }
    const auto text = [&a](const char* member) {
      const rapidjson::Value* v = GetMember(a, member);
      return v == nullptr ? std::string() : std::string(StringViewOf(*v));
    };
    const std::string name = text("name");
    if (name.empty() || name.size() > kMaxNameBytes || !IsCleanText(name, false)) {
      return Bad(what, "name must be clean text of 1 to 200 bytes");
    }
    alert.labels["alertname"] = name;
    if (GetMember(a, "status") != nullptr) {
      absl::StatusOr<bool> firing = ReadStatus(text("status"), what);
      if (!firing.ok()) {
        return firing.status();
      }
      alert.firing = *firing;
    }
    if (GetMember(a, "resource_id") != nullptr) {
      const std::string id = text("resource_id");
      if (!IsCanonicalResourceId(id)) {
        return Bad(what, "resource_id must be a canonical resource id such as vm:101");
      }
      alert.labels["pulse_resource"] = id;
    }
    if (GetMember(a, "severity") != nullptr) {
      const std::string severity = text("severity");
      if (severity.size() > 32 || !IsCleanText(severity, false)) {
        return Bad(what, "severity must be a short word");
      }
      alert.labels["severity"] = severity;
    }
    for (const char* annotation : {"summary", "description"}) {
      if (GetMember(a, annotation) != nullptr) {
        const std::string value = text(annotation);
        if (value.size() > kMaxAlertAnnotationBytes || !IsCleanText(value, true)) {
          return Bad(what, absl::StrCat(annotation, " must be clean text of at most 4096 bytes"));
        }
        alert.annotations[annotation] = value;
      }
    }
    alert.fingerprint = FingerprintOf(alert.labels);
    batch.alerts.push_back(std::move(alert));
  }
  return batch;
}

std::string Lower(std::string_view s) { return absl::AsciiStrToLower(ToAbsl(s)); }

std::string LabelOf(const Alert& alert, std::string_view name) {
  const auto it = alert.labels.find(std::string(name));
  return it == alert.labels.end() ? std::string() : it->second;
}

std::string LocalOf(const FleetResource& r) {
  const std::size_t colon = r.id.find(':');
  return colon == std::string::npos ? r.id : r.id.substr(colon + 1);
}

// The host of "host:port", "[v6]:port", "[v6]" or a bare host.
std::string HostOf(std::string_view instance) {
  if (!instance.empty() && instance.front() == '[') {
    const std::size_t close = instance.find(']');
    return close == std::string_view::npos ? std::string(instance)
                                           : std::string(instance.substr(1, close - 1));
  }
  const std::size_t colon = instance.find(':');
  if (colon != std::string_view::npos && instance.find(':', colon + 1) == std::string_view::npos) {
    return std::string(instance.substr(0, colon));  // one colon: host:port
  }
  return std::string(instance);  // none, or a bare IPv6 address
}

bool OnNode(const FleetResource& r, const std::vector<FleetResource>& fleet,
            std::string_view node) {
  if (r.parent_id.empty()) {
    return false;
  }
  for (const FleetResource& parent : fleet) {
    if (parent.id == r.parent_id) {
      return parent.name == node || LocalOf(parent) == node;
    }
  }
  return false;
}

AlertMapping Decide(std::string rule, std::string_view label_text,
                    const std::vector<const FleetResource*>& candidates) {
  AlertMapping m;
  m.rule = std::move(rule);
  if (candidates.size() == 1) {
    m.kind = AlertMapping::Kind::kMapped;
    m.resource_id = candidates.front()->id;
    return m;
  }
  if (candidates.empty()) {
    m.kind = AlertMapping::Kind::kUnmapped;
    m.reason = absl::StrCat("no resource matches ", ToAbsl(label_text));
    return m;
  }
  m.kind = AlertMapping::Kind::kAmbiguous;
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < candidates.size() && i < kMaxListedCandidates; ++i) {
    ids.push_back(candidates[i]->id);
  }
  m.reason = absl::StrCat(candidates.size(), " resources match ", ToAbsl(label_text), " (",
                          absl::StrJoin(ids, ", "), candidates.size() > ids.size() ? ", ..." : "",
                          "): add a pulse_resource label to say which");
  return m;
}

}  // namespace

std::string Alert::Name() const {
  const auto it = labels.find("alertname");
  return it == labels.end() ? std::string() : it->second;
}

std::string_view ToString(AlertMapping::Kind kind) {
  switch (kind) {
    case AlertMapping::Kind::kMapped:
      return "mapped";
    case AlertMapping::Kind::kAmbiguous:
      return "ambiguous";
    case AlertMapping::Kind::kUnmapped:
      break;
  }
  return "unmapped";
}

absl::StatusOr<AlertBatch> ParseAlertIntake(std::string_view body) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(body, JsonLimits{4 << 20, 16});
  if (!doc.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the body is not JSON: ", doc.status().message()));
  }
  if (!doc->IsObject()) {
    return absl::InvalidArgumentError("the body must be a JSON object");
  }
  return GetMember(*doc, "version") != nullptr ? ParseAlertmanager(*doc) : ParseNative(*doc);
}

AlertMapping MapAlert(const Alert& alert, const std::vector<FleetResource>& fleet) {
  const std::string node = LabelOf(alert, "node");
  const auto matching = [&](auto&& pred, bool narrow_by_node) {
    std::vector<const FleetResource*> out;
    for (const FleetResource& r : fleet) {
      if (pred(r) && (!narrow_by_node || node.empty() || OnNode(r, fleet, node))) {
        out.push_back(&r);
      }
    }
    return out;
  };
  if (const std::string id = LabelOf(alert, "pulse_resource"); !id.empty()) {
    return Decide("pulse_resource", absl::StrCat("pulse_resource=", id),
                  matching([&id](const FleetResource& r) { return r.id == id; }, false));
  }
  for (const char* label : {"container", "container_name"}) {
    if (const std::string name = LabelOf(alert, label); !name.empty()) {
      return Decide(label, absl::StrCat(label, "=", name),
                    matching(
                        [&name](const FleetResource& r) {
                          return r.type == "app-container" &&
                                 (r.name == name || LocalOf(r) == name);
                        },
                        true));
    }
  }
  if (const std::string vmid = LabelOf(alert, "vmid"); !vmid.empty()) {
    return Decide("vmid", absl::StrCat("vmid=", vmid),
                  matching(
                      [&vmid](const FleetResource& r) {
                        if (r.type != "vm" && r.type != "lxc") {
                          return false;
                        }
                        const std::string local = LocalOf(r);
                        return local == vmid ||
                               (local.size() > vmid.size() &&
                                local.compare(local.size() - vmid.size(), vmid.size(), vmid) == 0 &&
                                local[local.size() - vmid.size() - 1] == '/');
                      },
                      true));
  }
  for (const char* label : {"instance", "host", "hostname"}) {
    if (const std::string value = LabelOf(alert, label); !value.empty()) {
      const std::string host = Lower(HostOf(value));
      return Decide(label, absl::StrCat(label, "=", value),
                    matching(
                        [&host](const FleetResource& r) {
                          if (r.type != "node" && r.type != "host") {
                            return false;
                          }
                          if (Lower(r.name) == host || Lower(LocalOf(r)) == host) {
                            return true;
                          }
                          for (const char* attribute : {"ip", "address", "hostname"}) {
                            const auto it = r.attributes.find(attribute);
                            if (it != r.attributes.end() && Lower(it->second) == host) {
                              return true;
                            }
                          }
                          return false;
                        },
                        false));
    }
  }
  if (!node.empty()) {
    return Decide("node", absl::StrCat("node=", node),
                  matching(
                      [&node](const FleetResource& r) {
                        return r.type == "node" && (r.name == node || LocalOf(r) == node);
                      },
                      false));
  }
  AlertMapping none;
  none.reason =
      "no label names a resource (pulse_resource, container, vmid, instance, host, hostname or "
      "node)";
  return none;
}

FindingReport AlertFindingReport(const Alert& alert, const FleetResource& resource,
                                 std::string_view shape) {
  const auto annotation = [&alert](const char* name) {
    const auto it = alert.annotations.find(name);
    return it == alert.annotations.end() ? std::string() : it->second;
  };
  const std::string name = alert.Name();
  FindingReport r;
  r.resource_id = resource.id;
  r.resource_name = resource.name;
  r.resource_type = resource.type;
  r.source = shape == "alertmanager" ? "alertmanager" : "alert";
  r.key = absl::StrCat("alert:", name);
  const std::string severity = Lower(LabelOf(alert, "severity"));
  if (severity == "critical" || severity == "page" || severity == "error" || severity == "high") {
    r.severity = Severity::kCritical;
  } else if (severity == "info" || severity == "low" || severity == "none") {
    r.severity = Severity::kInfo;
  } else {
    r.severity = Severity::kWarning;
  }
  r.category = ParseCategory(LabelOf(alert, "pulse_category")).value_or(Category::kReliability);
  const std::string summary = annotation("summary");
  r.title = TruncateUtf8(summary.empty() ? absl::StrCat("Alert ", name, " is firing") : summary,
                         kMaxReportTitleBytes);
  const std::string description = annotation("description");
  r.description = TruncateUtf8(
      !description.empty()
          ? description
          : (!summary.empty() ? summary
                              : absl::StrCat("The ", shape == "alertmanager" ? "Alertmanager " : "",
                                             "alert ", name, " is firing on ", resource.name, ".")),
      kMaxReportTextBytes);
  const std::string runbook = annotation("runbook_url");
  r.recommendation =
      runbook.empty()
          ? absl::StrCat("Find what ", name, " reports on ", resource.name,
                         " and fix its cause; the alert resolving is evidence for the check, not "
                         "proof.")
          : TruncateUtf8(absl::StrCat("Follow the runbook: ", runbook), kMaxReportTextBytes);
  std::vector<std::string> labels;
  for (const auto& [k, v] : alert.labels) {
    labels.push_back(absl::StrCat(k, "=", v));
  }
  std::string when;
  if (alert.firing && alert.starts_at.has_value()) {
    when = absl::StrCat(" since ", FormatRfc3339(*alert.starts_at));
  } else if (!alert.firing && alert.ends_at.has_value()) {
    when = absl::StrCat(" at ", FormatRfc3339(*alert.ends_at));
  }
  std::string evidence =
      absl::StrCat(shape == "alertmanager" ? "Alertmanager alert " : "Alert ", name,
                   alert.firing ? " firing" : " resolved", when, " (fingerprint ",
                   alert.fingerprint, ").\nLabels: ", absl::StrJoin(labels, ", "));
  if (!alert.generator_url.empty()) {
    absl::StrAppend(&evidence, "\nSource: ", alert.generator_url);
  }
  r.evidence = TruncateUtf8(evidence, kMaxReportTextBytes);
  return r;
}

AlertIntake::AlertIntake(Fleet& fleet, FindingsService& findings, const Clock& clock,
                         StartRun start_run, AlertIntakeOptions options)
    : fleet_(fleet),
      findings_(findings),
      clock_(clock),
      start_run_(std::move(start_run)),
      options_(options) {}

absl::StatusOr<AlertIntakeResult> AlertIntake::Receive(const AlertBatch& batch) {
  FleetResourceQuery all;
  all.limit = kFleetMaxResults;
  absl::StatusOr<std::vector<FleetResource>> fleet = fleet_.ListResources(all);
  if (!fleet.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the fleet cannot be listed: ", fleet.status().message()));
  }
  AlertIntakeResult result;
  std::vector<std::string> scope;  // mapped resources, first-seen order
  for (const Alert& alert : batch.alerts) {
    AlertOutcome out;
    out.name = alert.Name();
    out.fingerprint = alert.fingerprint;
    out.firing = alert.firing;
    out.mapping = MapAlert(alert, *fleet);
    out.investigation = "not_started";
    if (out.mapping.kind != AlertMapping::Kind::kMapped) {
      out.finding_outcome = "none";
      result.alerts.push_back(std::move(out));
      continue;
    }
    const FleetResource& resource =
        *std::find_if(fleet->begin(), fleet->end(),
                      [&out](const FleetResource& r) { return r.id == out.mapping.resource_id; });
    const FindingReport report = AlertFindingReport(alert, resource, batch.shape);
    if (alert.firing) {
      absl::StatusOr<ReportOutcome> reported = findings_.Report(report);
      if (!reported.ok()) {
        out.finding_outcome = "error";
        out.detail = std::string(reported.status().message());
      } else {
        out.finding_id = reported->finding_id;
        switch (reported->disposition) {
          case ReportDisposition::kHeartbeat:
          case ReportDisposition::kContentReplaced:
          case ReportDisposition::kMerged:
          case ReportDisposition::kSeenWhileSuppressed:
            out.finding_outcome = "updated";
            break;
          default:
            out.finding_outcome = std::string(ToString(reported->disposition));
            break;
        }
      }
    } else {
      const std::string id =
          FindingIdFor(report.resource_id, report.category, NormalizeFindingKey(report.key));
      absl::StatusOr<ResolveOutcome> resolved =
          findings_.ResolveByPatrol(id, "the alert that raised it resolved", report.evidence);
      out.finding_id = id;
      if (absl::IsNotFound(resolved.status())) {
        out.finding_id.clear();
        out.finding_outcome = "none";
      } else if (absl::IsFailedPrecondition(resolved.status())) {
        out.finding_outcome = "not_active";
      } else if (!resolved.ok()) {
        out.finding_outcome = "error";
        out.detail = std::string(resolved.status().message());
      } else {
        out.finding_outcome = resolved->resolved ? "resolved" : "kept";
        out.detail = resolved->message;
      }
    }
    if (std::find(scope.begin(), scope.end(), resource.id) == scope.end()) {
      scope.push_back(resource.id);
    }
    result.alerts.push_back(std::move(out));
  }

  // One scoped run over the mapped resources out of their cooldown.
  const absl::Time now = clock_.Now();
  std::set<std::string> cooling;
  PatrolScope run_scope;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = investigated_at_.begin(); it != investigated_at_.end();) {
      it = now - it->second >= options_.cooldown ? investigated_at_.erase(it) : std::next(it);
    }
    for (const std::string& id : scope) {
      if (investigated_at_.count(id) != 0) {
        cooling.insert(id);
      } else {
        run_scope.resource_ids.push_back(id);
        investigated_at_[id] = now;  // claimed before the run starts: a concurrent batch waits
      }
    }
  }
  std::string started = "started";
  if (!run_scope.resource_ids.empty()) {
    absl::StatusOr<std::string> run = start_run_(run_scope);
    if (run.ok()) {
      result.run_id = *run;
    } else {
      started = absl::IsFailedPrecondition(run.status()) ? "already_running" : "failed";
      if (started == "failed") {
        absl::MutexLock lock(&mu_);
        for (const std::string& id : run_scope.resource_ids) {
          investigated_at_.erase(id);  // nothing ran: the next alert may try again
        }
      }
    }
  }
  for (AlertOutcome& out : result.alerts) {
    if (out.mapping.kind == AlertMapping::Kind::kMapped) {
      out.investigation = cooling.count(out.mapping.resource_id) != 0 ? "cooldown" : started;
    }
  }
  return result;
}

}  // namespace pulse::core
