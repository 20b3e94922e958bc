#include "pulse/adapters/hostagent/wire.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::hostagent {
namespace {

using core::JsonObjectReader;
using core::JsonPresence;
using core::JsonStringRule;

constexpr JsonPresence kReq = JsonPresence::kRequired;
constexpr JsonPresence kOpt = JsonPresence::kOptional;

// Every string the protocol carries except exec output is clean text: no NUL, DEL or control
// characters other than tab and newline (they would reach terminals and logs).
const core::JsonReaderOptions& ReaderOptions() {
  static const core::JsonReaderOptions options{.text = core::JsonTextRule::kCleanText};
  return options;
}

bool IsHostByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool IsSnakeCase(std::string_view text) {
  return text.size() <= 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
         });
}

absl::Status Invalid(std::string_view path, std::string_view problem) {
  return absl::InvalidArgumentError(fmt::format("{} {}", path, problem));
}

// The whole document: parsed within the message bound, then an object.
absl::StatusOr<rapidjson::Document> ParseMessage(std::string_view json, std::string_view what) {
  if (json.size() > kMaxMessageBytes) {
    return Invalid(what, fmt::format("is larger than {} bytes", kMaxMessageBytes));
  }
  core::JsonLimits limits;
  limits.max_bytes = kMaxMessageBytes;
  limits.max_depth = 16;
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json, limits);
  if (!doc.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {}", what, core::ToStd(doc.status().message())));
  }
  return doc;
}

void ReadProtocol(JsonObjectReader& reader) {
  reader.Int("protocol", kProtocolVersion, kProtocolVersion, kReq);
}

std::optional<std::string> ReadHost(JsonObjectReader& reader) {
  std::optional<std::string> host = reader.String("host", {kMaxHostBytes, kReq});
  if (host.has_value() && !IsAgentHostName(*host)) {
    reader.Fail("host", "must be 1..64 bytes of [A-Za-z0-9._-], starting with a letter or digit");
    return std::nullopt;
  }
  return host;
}

// A JSON object of string values: at most kMaxMapEntries, keys of at most kMaxKeyBytes, values
// of at most kMaxTextBytes, all clean text.
absl::Status ReadStringMap(const rapidjson::Value* value, std::string_view path,
                           std::map<std::string, std::string>& out) {
  if (value == nullptr) {
    return absl::OkStatus();
  }
  if (!value->IsObject()) {
    return Invalid(path, "must be an object of strings");
  }
  if (value->MemberCount() > kMaxMapEntries) {
    return Invalid(path, fmt::format("has more than {} members", kMaxMapEntries));
  }
  for (const auto& m : value->GetObject()) {
    const std::string_view key = core::StringViewOf(m.name);
    if (key.empty() || key.size() > kMaxKeyBytes || !core::IsCleanText(key)) {
      return Invalid(path, fmt::format("has a member name that is empty, longer than {} bytes "
                                       "or not clean text",
                                       kMaxKeyBytes));
    }
    if (!m.value.IsString()) {
      return Invalid(path, "must hold only string values");
    }
    const std::string_view text = core::StringViewOf(m.value);
    if (text.size() > kMaxTextBytes || !core::IsCleanText(text)) {
      return Invalid(
          path, fmt::format("has a value longer than {} bytes or not clean text", kMaxTextBytes));
    }
    if (!out.emplace(std::string(key), std::string(text)).second) {
      return Invalid(path, "has a duplicate member");
    }
  }
  return absl::OkStatus();
}

// The items of an array member: nullptr and OK when absent; InvalidArgument when it is not an
// array or holds more than `max` items.
absl::StatusOr<const rapidjson::Value*> ReadArray(JsonObjectReader& reader, std::string_view key,
                                                  std::string_view path, std::size_t max) {
  const rapidjson::Value* value = reader.Member(key, kOpt);
  if (!reader.ok()) {
    return reader.status();
  }
  if (value == nullptr) {
    return nullptr;
  }
  if (!value->IsArray()) {
    return Invalid(fmt::format("{}.{}", path, key), "must be an array");
  }
  if (value->Size() > max) {
    return Invalid(fmt::format("{}.{}", path, key), fmt::format("has more than {} items", max));
  }
  return value;
}

void WriteStringMap(core::JsonWriter& out, std::string_view key,
                    const std::map<std::string, std::string>& map) {
  out.Key(key);
  out.StartObject();
  for (const auto& [k, v] : map) {
    out.Member(k, v);
  }
  out.EndObject();
}

absl::Status DecodeResource(const rapidjson::Value& value, std::string_view path,
                            core::FleetResource& r) {
  JsonObjectReader reader(value, std::string(path), ReaderOptions());
  r.id = reader.String("id", {core::kMaxResourceIdBytes, kReq}).value_or("");
  r.type = reader.String("type", {32, kReq}).value_or("");
  r.name = reader.String("name", {kMaxTextBytes, kReq}).value_or("");
  r.status = reader.String("status", {64, kReq}).value_or("");
  r.technology = reader.String("technology", {64, kOpt}).value_or("");
  r.parent_id = reader.String("parent_id", {core::kMaxResourceIdBytes, kOpt}).value_or("");
  r.revision = reader.String("revision", {256, kOpt}).value_or("");
  const rapidjson::Value* attributes = reader.Member("attributes", kOpt);
  if (absl::Status s = reader.Finish(); !s.ok()) {
    return s;
  }
  return ReadStringMap(attributes, fmt::format("{}.attributes", path), r.attributes);
}

void WriteResource(core::JsonWriter& out, const core::FleetResource& r) {
  out.StartObject();
  out.Member("id", r.id);
  out.Member("type", r.type);
  out.Member("name", r.name);
  out.Member("status", r.status);
  out.Member("technology", r.technology);
  out.Member("parent_id", r.parent_id);
  out.Member("revision", r.revision);
  WriteStringMap(out, "attributes", r.attributes);
  out.EndObject();
}

// The resource-naming checks of a decoded report: ids canonical, unique and the host's; each
// reference to a resource of this report.
absl::Status CheckReportIds(const Report& report) {
  std::set<std::string, std::less<>> ids;
  for (std::size_t i = 0; i < report.resources.size(); ++i) {
    const core::FleetResource& r = report.resources[i];
    const std::string path = fmt::format("report.resources[{}]", i);
    const std::optional<core::CanonicalResourceId> id = core::ParseCanonicalResourceId(r.id);
    if (!id.has_value()) {
      return Invalid(path + ".id", "is not a canonical resource id");
    }
    if (id->type != r.type) {
      return Invalid(path + ".type", "must be the type of its id");
    }
    if (!ResourceBelongsToHost(r.id, report.host)) {
      return Invalid(path + ".id",
                     fmt::format("names a resource of another host (a report of {} may only "
                                 "describe node:{} and <type>:{}/...)",
                                 report.host, report.host, report.host));
    }
    if (!ids.insert(r.id).second) {
      return Invalid(path + ".id", "repeats an id");
    }
  }
  const auto known = [&ids](std::string_view id) { return ids.find(id) != ids.end(); };
  for (std::size_t i = 0; i < report.resources.size(); ++i) {
    const std::string& parent = report.resources[i].parent_id;
    if (!parent.empty() && !known(parent)) {
      return Invalid(fmt::format("report.resources[{}].parent_id", i),
                     "must name a resource of this report");
    }
  }
  for (std::size_t i = 0; i < report.relationships.size(); ++i) {
    const core::FleetRelationship& e = report.relationships[i];
    if (!known(e.from_id) || !known(e.to_id)) {
      return Invalid(fmt::format("report.relationships[{}]", i),
                     "must join two resources of this report");
    }
  }
  for (std::size_t i = 0; i < report.statuses.size(); ++i) {
    if (!known(report.statuses[i].resource_id)) {
      return Invalid(fmt::format("report.statuses[{}].resource_id", i),
                     "must name a resource of this report");
    }
  }
  for (std::size_t i = 0; i < report.metrics.size(); ++i) {
    if (!known(report.metrics[i].resource_id)) {
      return Invalid(fmt::format("report.metrics[{}].resource_id", i),
                     "must name a resource of this report");
    }
  }
  for (std::size_t i = 0; i < report.capabilities.size(); ++i) {
    if (!known(report.capabilities[i].resource_id)) {
      return Invalid(fmt::format("report.capabilities[{}].resource_id", i),
                     "must name a resource of this report");
    }
  }
  return absl::OkStatus();
}

bool IsCapabilityName(std::string_view name) {
  return !name.empty() && name.size() <= 64 && name.front() >= 'a' && name.front() <= 'z' &&
         IsSnakeCase(name);
}

}  // namespace

bool IsAgentHostName(std::string_view host) {
  if (host.empty() || host.size() > kMaxHostBytes) {
    return false;
  }
  const char first = host.front();
  if (first == '.' || first == '_' || first == '-') {
    return false;
  }
  return std::all_of(host.begin(), host.end(), IsHostByte);
}

std::string SanitizeHostName(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (out.empty() && (c == '.' || c == '_' || c == '-')) {
      continue;
    }
    out.push_back(IsHostByte(c) ? c : '-');
    if (out.size() == kMaxHostBytes) {
      break;
    }
  }
  while (!out.empty() && (out.front() == '-')) {
    out.erase(out.begin());
  }
  return out.empty() ? "localhost" : out;
}

bool ResourceBelongsToHost(std::string_view id, std::string_view host) {
  if (!IsAgentHostName(host) || !core::IsCanonicalResourceId(id)) {
    return false;
  }
  const std::size_t colon = id.find(':');
  const std::string_view type = id.substr(0, colon);
  const std::string_view local = id.substr(colon + 1);
  if (type == "node") {
    return local == host;
  }
  return local.size() > host.size() + 1 && local.substr(0, host.size()) == host &&
         local[host.size()] == '/';
}

// ---- report ----------------------------------------------------------------------------------

std::string EncodeReport(const Report& report) {
  core::JsonWriter out;
  out.StartObject();
  out.Member("protocol", kProtocolVersion);
  out.Member("host", report.host);
  out.Member("agent_version", report.agent_version);
  out.TimeMember("sent_at", report.sent_at);
  out.MemberIfNotEmpty("in_reply_to", report.in_reply_to);
  out.Member("interval_seconds", report.interval_seconds);
  out.Key("resources");
  out.StartArray();
  for (const core::FleetResource& r : report.resources) {
    WriteResource(out, r);
  }
  out.EndArray();
  out.Key("relationships");
  out.StartArray();
  for (const core::FleetRelationship& e : report.relationships) {
    out.StartObject();
    out.Member("from", e.from_id);
    out.Member("to", e.to_id);
    out.Member("kind", e.kind);
    out.EndObject();
  }
  out.EndArray();
  out.Key("statuses");
  out.StartArray();
  for (const ReportStatus& s : report.statuses) {
    out.StartObject();
    out.Member("resource_id", s.resource_id);
    out.Member("status", s.status);
    out.Member("summary", s.summary);
    WriteStringMap(out, "facts", s.facts);
    out.EndObject();
  }
  out.EndArray();
  out.Key("metrics");
  out.StartArray();
  for (const ReportMetric& m : report.metrics) {
    out.StartObject();
    out.Member("resource_id", m.resource_id);
    out.Member("metric", m.metric);
    out.Member("unit", m.unit);
    out.Key("value");
    out.Double(m.value);
    out.EndObject();
  }
  out.EndArray();
  out.Key("capabilities");
  out.StartArray();
  for (const ReportCapabilities& c : report.capabilities) {
    out.StartObject();
    out.Member("resource_id", c.resource_id);
    out.Key("names");
    out.StringArray(c.names);
    out.EndObject();
  }
  out.EndArray();
  out.EndObject();
  return out.Take();
}

absl::StatusOr<Report> DecodeReport(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = ParseMessage(json, "report");
  if (!doc.ok()) {
    return doc.status();
  }
  JsonObjectReader reader(*doc, "report", ReaderOptions());
  Report report;
  ReadProtocol(reader);
  report.host = ReadHost(reader).value_or("");
  report.agent_version = reader.String("agent_version", {64, kReq}).value_or("");
  report.sent_at = reader.Time("sent_at", kReq).value_or(absl::InfinitePast());
  report.in_reply_to = reader.String("in_reply_to", {32, kOpt}).value_or("");
  if (!report.in_reply_to.empty() && !IsCommandId(report.in_reply_to)) {
    reader.Fail("in_reply_to", "must be a command id (cmd_ and 16 hex digits)");
  }
  report.interval_seconds = static_cast<int>(
      reader.Int("interval_seconds", kMinReportIntervalSeconds, kMaxReportIntervalSeconds, kReq)
          .value_or(30));
  absl::StatusOr<const rapidjson::Value*> resources =
      ReadArray(reader, "resources", "report", kMaxReportResources);
  if (!resources.ok()) {
    return resources.status();
  }
  absl::StatusOr<const rapidjson::Value*> relationships =
      ReadArray(reader, "relationships", "report", kMaxReportRelationships);
  if (!relationships.ok()) {
    return relationships.status();
  }
  absl::StatusOr<const rapidjson::Value*> statuses =
      ReadArray(reader, "statuses", "report", kMaxReportStatuses);
  if (!statuses.ok()) {
    return statuses.status();
  }
  absl::StatusOr<const rapidjson::Value*> metrics =
      ReadArray(reader, "metrics", "report", kMaxReportMetrics);
  if (!metrics.ok()) {
    return metrics.status();
  }
  absl::StatusOr<const rapidjson::Value*> capabilities =
      ReadArray(reader, "capabilities", "report", kMaxReportCapabilities);
  if (!capabilities.ok()) {
    return capabilities.status();
  }
  if (absl::Status s = reader.Finish(); !s.ok()) {
    return s;
  }
  if (*resources != nullptr) {
    for (rapidjson::SizeType i = 0; i < (*resources)->Size(); ++i) {
      core::FleetResource r;
      if (absl::Status s =
              DecodeResource((**resources)[i], fmt::format("report.resources[{}]", i), r);
          !s.ok()) {
        return s;
      }
      report.resources.push_back(std::move(r));
    }
  }
  if (*relationships != nullptr) {
    for (rapidjson::SizeType i = 0; i < (*relationships)->Size(); ++i) {
      JsonObjectReader item((**relationships)[i], fmt::format("report.relationships[{}]", i),
                            ReaderOptions());
      core::FleetRelationship e;
      e.from_id = item.String("from", {core::kMaxResourceIdBytes, kReq}).value_or("");
      e.to_id = item.String("to", {core::kMaxResourceIdBytes, kReq}).value_or("");
      e.kind = item.String("kind", {64, kReq}).value_or("");
      if (item.ok() && !IsSnakeCase(e.kind)) {
        item.Fail("kind", "must be snake_case");
      }
      if (absl::Status s = item.Finish(); !s.ok()) {
        return s;
      }
      report.relationships.push_back(std::move(e));
    }
  }
  if (*statuses != nullptr) {
    for (rapidjson::SizeType i = 0; i < (*statuses)->Size(); ++i) {
      const std::string path = fmt::format("report.statuses[{}]", i);
      JsonObjectReader item((**statuses)[i], path, ReaderOptions());
      ReportStatus s;
      s.resource_id = item.String("resource_id", {core::kMaxResourceIdBytes, kReq}).value_or("");
      s.status = item.String("status", {64, kReq}).value_or("");
      s.summary = item.String("summary", {kMaxTextBytes, kOpt}).value_or("");
      const rapidjson::Value* facts = item.Member("facts", kOpt);
      if (absl::Status st = item.Finish(); !st.ok()) {
        return st;
      }
      if (absl::Status st = ReadStringMap(facts, path + ".facts", s.facts); !st.ok()) {
        return st;
      }
      report.statuses.push_back(std::move(s));
    }
  }
  if (*metrics != nullptr) {
    for (rapidjson::SizeType i = 0; i < (*metrics)->Size(); ++i) {
      JsonObjectReader item((**metrics)[i], fmt::format("report.metrics[{}]", i), ReaderOptions());
      ReportMetric m;
      m.resource_id = item.String("resource_id", {core::kMaxResourceIdBytes, kReq}).value_or("");
      m.metric = item.String("metric", {64, kReq}).value_or("");
      m.unit = item.String("unit", {32, kReq}).value_or("");
      m.value = item.Number("value", kReq).value_or(0);
      if (item.ok() && !IsSnakeCase(m.metric)) {
        item.Fail("metric", "must be snake_case");
      }
      if (absl::Status s = item.Finish(); !s.ok()) {
        return s;
      }
      report.metrics.push_back(std::move(m));
    }
  }
  if (*capabilities != nullptr) {
    for (rapidjson::SizeType i = 0; i < (*capabilities)->Size(); ++i) {
      JsonObjectReader item((**capabilities)[i], fmt::format("report.capabilities[{}]", i),
                            ReaderOptions());
      ReportCapabilities c;
      c.resource_id = item.String("resource_id", {core::kMaxResourceIdBytes, kReq}).value_or("");
      c.names = item.StringArray("names", kMaxNamesPerCapability, 64, kReq);
      if (item.ok()) {
        for (const std::string& name : c.names) {
          if (!IsCapabilityName(name)) {
            item.Fail("names", "must hold snake_case capability names");
            break;
          }
        }
      }
      if (absl::Status s = item.Finish(); !s.ok()) {
        return s;
      }
      std::sort(c.names.begin(), c.names.end());
      c.names.erase(std::unique(c.names.begin(), c.names.end()), c.names.end());
      report.capabilities.push_back(std::move(c));
    }
  }
  if (absl::Status s = CheckReportIds(report); !s.ok()) {
    return s;
  }
  return report;
}

// ---- command ---------------------------------------------------------------------------------

std::string_view ToString(CommandKind kind) {
  switch (kind) {
    case CommandKind::kDispatch:
      return "dispatch";
    case CommandKind::kExec:
      return "exec";
    case CommandKind::kReport:
      return "report";
  }
  return "report";
}

std::optional<CommandKind> ParseCommandKind(std::string_view text) {
  if (text == "dispatch") {
    return CommandKind::kDispatch;
  }
  if (text == "exec") {
    return CommandKind::kExec;
  }
  if (text == "report") {
    return CommandKind::kReport;
  }
  return std::nullopt;
}

bool IsCommandId(std::string_view id) {
  if (id.size() != 20 || id.substr(0, 4) != "cmd_") {
    return false;
  }
  return std::all_of(id.begin() + 4, id.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string EncodeCommand(const Command& command) {
  core::JsonWriter out;
  out.StartObject();
  out.Member("protocol", kProtocolVersion);
  out.Member("command_id", command.command_id);
  out.Member("kind", ToString(command.kind));
  out.TimeMember("issued_at", command.issued_at);
  out.TimeMember("deadline", command.deadline);
  if (command.kind == CommandKind::kDispatch) {
    out.Member("action_id", command.action_id);
    out.Member("attempt_id", command.attempt_id);
    out.Member("plan_hash", command.plan_hash);
    out.Member("resource_id", command.resource_id);
    out.Member("capability", command.capability);
    out.Key("params");
    out.RawValue(command.params_json.empty() ? "{}" : command.params_json);
  } else if (command.kind == CommandKind::kExec) {
    out.Member("resource_id", command.resource_id);
    out.Member("command", command.exec_command);
  }
  out.EndObject();
  return out.Take();
}

absl::StatusOr<Command> DecodeCommand(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = ParseMessage(json, "command");
  if (!doc.ok()) {
    return doc.status();
  }
  JsonObjectReader reader(*doc, "command", ReaderOptions());
  Command c;
  ReadProtocol(reader);
  c.command_id = reader.String("command_id", {32, kReq}).value_or("");
  if (reader.ok() && !IsCommandId(c.command_id)) {
    reader.Fail("command_id", "must be cmd_ and 16 lowercase hex digits");
  }
  const std::optional<CommandKind> kind = reader.Enum("kind", ParseCommandKind, kReq);
  c.issued_at = reader.Time("issued_at", kReq).value_or(absl::InfinitePast());
  c.deadline = reader.Time("deadline", kReq).value_or(absl::InfinitePast());
  if (reader.ok() && c.deadline <= c.issued_at) {
    reader.Fail("deadline", "must be after issued_at");
  }
  if (!reader.ok()) {
    return reader.status();
  }
  c.kind = *kind;
  switch (c.kind) {
    case CommandKind::kDispatch: {
      c.action_id = reader.String("action_id", {128, kReq}).value_or("");
      c.attempt_id = reader.String("attempt_id", {160, kReq}).value_or("");
      c.plan_hash = reader.String("plan_hash", {128, kReq}).value_or("");
      c.resource_id = reader.String("resource_id", {core::kMaxResourceIdBytes, kReq}).value_or("");
      c.capability = reader.String("capability", {64, kReq}).value_or("");
      const rapidjson::Value* params = reader.Member("params", kReq);
      if (reader.ok() && !IsCapabilityName(c.capability)) {
        reader.Fail("capability", "must be a snake_case capability name");
      }
      if (reader.ok() && params != nullptr) {
        if (!params->IsObject()) {
          reader.Fail("params", "must be an object");
        } else {
          c.params_json = core::CanonicalJson(*params);
          if (c.params_json.size() > kMaxParamsBytes) {
            reader.Fail("params", fmt::format("is larger than {} bytes", kMaxParamsBytes));
          }
        }
      }
      break;
    }
    case CommandKind::kExec:
      c.resource_id = reader.String("resource_id", {core::kMaxResourceIdBytes, kReq}).value_or("");
      c.exec_command = reader.String("command", {kMaxTextBytes, kReq}).value_or("");
      break;
    case CommandKind::kReport:
      break;
  }
  if (reader.ok() && !c.resource_id.empty() && !core::IsCanonicalResourceId(c.resource_id)) {
    reader.Fail("resource_id", "is not a canonical resource id");
  }
  if (absl::Status s = reader.Finish(); !s.ok()) {
    return s;
  }
  return c;
}

// ---- result ----------------------------------------------------------------------------------

std::string EncodeResult(const Result& result) {
  core::JsonWriter out;
  out.StartObject();
  out.Member("protocol", kProtocolVersion);
  out.Member("host", result.host);
  out.Member("command_id", result.command_id);
  out.Member("kind", ToString(result.kind));
  if (result.kind == CommandKind::kDispatch) {
    out.Member("action_id", result.action_id);
    out.Member("attempt_id", result.attempt_id);
  }
  out.Member("status", core::ToString(result.status));
  out.Member("reason_code", result.reason_code);
  out.Member("summary", result.summary);
  out.Member("replayed", result.replayed);
  if (result.exec.has_value()) {
    out.Key("exec");
    out.StartObject();
    out.Member("exit_code", result.exec->exit_code);
    out.Member("output", result.exec->output);
    out.Member("truncated", result.exec->truncated);
    out.EndObject();
  }
  out.EndObject();
  return out.Take();
}

absl::StatusOr<Result> DecodeResult(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = ParseMessage(json, "result");
  if (!doc.ok()) {
    return doc.status();
  }
  JsonObjectReader reader(*doc, "result", ReaderOptions());
  Result r;
  ReadProtocol(reader);
  r.host = ReadHost(reader).value_or("");
  r.command_id = reader.String("command_id", {32, kReq}).value_or("");
  if (reader.ok() && !IsCommandId(r.command_id)) {
    reader.Fail("command_id", "must be cmd_ and 16 lowercase hex digits");
  }
  const std::optional<CommandKind> kind = reader.Enum("kind", ParseCommandKind, kReq);
  if (reader.ok() && *kind == CommandKind::kReport) {
    reader.Fail("kind", "must be dispatch or exec (a report command is answered by a report)");
  }
  if (!reader.ok()) {
    return reader.status();
  }
  r.kind = *kind;
  if (r.kind == CommandKind::kDispatch) {
    r.action_id = reader.String("action_id", {128, kReq}).value_or("");
    r.attempt_id = reader.String("attempt_id", {160, kReq}).value_or("");
  }
  r.status = reader.Enum("status", core::ParseExecutionStatus, kReq)
                 .value_or(core::ExecutionStatus::kInconclusive);
  r.reason_code = reader.String("reason_code", {64, kOpt}).value_or("");
  if (reader.ok() && !IsSnakeCase(r.reason_code)) {
    reader.Fail("reason_code", "must be snake_case");
  }
  r.summary = reader.String("summary", {kMaxTextBytes, kOpt}).value_or("");
  r.replayed = reader.Bool("replayed", kOpt).value_or(false);
  const rapidjson::Value* exec =
      r.kind == CommandKind::kExec ? reader.Member("exec", kOpt) : nullptr;
  if (absl::Status s = reader.Finish(); !s.ok()) {
    return s;
  }
  if (exec != nullptr) {
    // Command output is data, not text for a terminal: any valid UTF-8 (the CLI and the chat
    // sanitize it where they print it).
    JsonObjectReader item(*exec, "result.exec", {});
    ExecResult e;
    e.exit_code = static_cast<int>(item.Int("exit_code", -1, 255, kReq).value_or(0));
    e.output = item.String("output", {kMaxExecTextBytes, kOpt}).value_or("");
    e.truncated = item.Bool("truncated", kOpt).value_or(false);
    if (absl::Status s = item.Finish(); !s.ok()) {
      return s;
    }
    r.exec = std::move(e);
  }
  return r;
}

// ---- hello -----------------------------------------------------------------------------------

std::string EncodeHello(const Hello& hello) {
  core::JsonWriter out;
  out.StartObject();
  out.Member("protocol", kProtocolVersion);
  out.Member("host", hello.host);
  out.Member("heartbeat_seconds", hello.heartbeat_seconds);
  out.Member("server_version", hello.server_version);
  out.EndObject();
  return out.Take();
}

absl::StatusOr<Hello> DecodeHello(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = ParseMessage(json, "hello");
  if (!doc.ok()) {
    return doc.status();
  }
  JsonObjectReader reader(*doc, "hello", ReaderOptions());
  Hello h;
  ReadProtocol(reader);
  h.host = ReadHost(reader).value_or("");
  h.heartbeat_seconds =
      static_cast<int>(reader.Int("heartbeat_seconds", 1, 3600, kReq).value_or(15));
  h.server_version = reader.String("server_version", {64, kOpt}).value_or("");
  if (absl::Status s = reader.Finish(); !s.ok()) {
    return s;
  }
  return h;
}

}  // namespace pulse::adapters::hostagent
