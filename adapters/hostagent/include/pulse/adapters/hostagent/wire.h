// The host agent protocol, version 1 (docs/agent.md, "Protocol"): the messages pulse-agent and
// pulse-server exchange, and their codecs. The agent dials the server; the server never dials an
// agent. Reports (agent -> server, POST /api/agents/report) say what the host has; commands
// (server -> agent, `event: command` frames of GET /api/agents/commands) ask it to dispatch a
// capability, run a read-only command or report again; results (agent -> server, POST
// /api/agents/results) answer commands. Every decoder treats its input as hostile: unknown
// members, duplicates, wrong types, over-long strings and too many items are InvalidArgument
// naming the place, and nothing partial is returned. A report may only describe resources of
// its own host (ResourceBelongsToHost). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::adapters::hostagent {

inline constexpr int kProtocolVersion = 1;

// Bounds of one message. A report over any of them is refused whole.
inline constexpr std::size_t kMaxMessageBytes = std::size_t{4} << 20;
inline constexpr std::size_t kMaxReportResources = 2000;
inline constexpr std::size_t kMaxReportRelationships = 4000;
inline constexpr std::size_t kMaxReportStatuses = 2000;
inline constexpr std::size_t kMaxReportMetrics = 8000;
inline constexpr std::size_t kMaxReportCapabilities = 2000;
inline constexpr std::size_t kMaxMapEntries = 64;          // attributes, facts
inline constexpr std::size_t kMaxKeyBytes = 128;           // attribute and fact names
inline constexpr std::size_t kMaxTextBytes = 4096;         // any other string
inline constexpr std::size_t kMaxNamesPerCapability = 32;  // capability names per resource
inline constexpr std::size_t kMaxHostBytes = 64;
inline constexpr std::size_t kMaxParamsBytes = 64 * 1024;
// Exec output travels whole: core::kMaxExecOutputBytes plus JSON escaping headroom.
inline constexpr std::size_t kMaxExecTextBytes = core::kMaxExecOutputBytes;
inline constexpr int kMinReportIntervalSeconds = 1;
inline constexpr int kMaxReportIntervalSeconds = 3600;

// A host name as the protocol carries it: 1..64 bytes of [A-Za-z0-9._-], starting with a letter
// or digit. pulse-agent sanitizes the machine's name into this form (SanitizeHostName).
bool IsAgentHostName(std::string_view host);
// Every byte outside [A-Za-z0-9._-] becomes '-', cut to 64 bytes; a leading '.', '_' or '-' is
// dropped; "" becomes "localhost".
std::string SanitizeHostName(std::string_view name);

// True when `id` is a canonical resource id of `host`: exactly node:<host>, or
// <type>:<host>/<rest>. A report, a command and a result may only name such ids.
bool ResourceBelongsToHost(std::string_view id, std::string_view host);

// ---- report (agent -> server) --------------------------------------------------------------

struct ReportStatus {
  std::string resource_id;
  std::string status;
  std::string summary;
  std::map<std::string, std::string> facts;

  friend bool operator==(const ReportStatus&, const ReportStatus&) = default;
};

struct ReportMetric {
  std::string resource_id;
  std::string metric;  // cpu, memory, disk, load1, ...
  std::string unit;    // percent, bytes, ...
  double value = 0;

  friend bool operator==(const ReportMetric&, const ReportMetric&) = default;
};

// What the agent's allowlist would accept on one resource (advisory: the server's own catalogue
// decides what it plans).
struct ReportCapabilities {
  std::string resource_id;
  std::vector<std::string> names;  // sorted, each once

  friend bool operator==(const ReportCapabilities&, const ReportCapabilities&) = default;
};

struct Report {
  std::string host;  // IsAgentHostName
  std::string agent_version;
  absl::Time sent_at;
  std::string in_reply_to;  // the report command this answers; "" for a periodic report
  int interval_seconds = 30;
  std::vector<core::FleetResource> resources;
  std::vector<core::FleetRelationship> relationships;
  std::vector<ReportStatus> statuses;
  std::vector<ReportMetric> metrics;
  std::vector<ReportCapabilities> capabilities;

  friend bool operator==(const Report&, const Report&) = default;
};

std::string EncodeReport(const Report& report);
// Besides the shape: the protocol must be kProtocolVersion; every resource id must be canonical,
// unique and belong to the host; a resource's type must be its id's type; parents,
// relationship ends, statuses, metrics and capabilities must name resources of this report.
[[nodiscard]] absl::StatusOr<Report> DecodeReport(std::string_view json);

// ---- command (server -> agent) -------------------------------------------------------------

enum class CommandKind { kDispatch, kExec, kReport };
// Wire: dispatch, exec, report.
std::string_view ToString(CommandKind kind);
std::optional<CommandKind> ParseCommandKind(std::string_view text);

// "cmd_" + 16 lowercase hex digits.
bool IsCommandId(std::string_view id);

struct Command {
  std::string command_id;  // IsCommandId
  CommandKind kind = CommandKind::kReport;
  absl::Time issued_at;
  absl::Time deadline;  // after issued_at
  // dispatch: all of these; exec: resource_id and exec_command; report: none.
  std::string action_id;
  std::string attempt_id;
  std::string plan_hash;
  std::string resource_id;
  std::string capability;
  std::string params_json = "{}";  // a JSON object, canonical
  std::string exec_command;

  friend bool operator==(const Command&, const Command&) = default;
};

std::string EncodeCommand(const Command& command);
// The members a kind does not take are refused (a report command with a resource_id is
// malformed, not ignored).
[[nodiscard]] absl::StatusOr<Command> DecodeCommand(std::string_view json);

// ---- result (agent -> server) --------------------------------------------------------------

struct ExecResult {
  int exit_code = 0;
  std::string output;  // at most core::kMaxExecOutputBytes
  bool truncated = false;

  friend bool operator==(const ExecResult&, const ExecResult&) = default;
};

struct Result {
  std::string host;
  std::string command_id;
  CommandKind kind = CommandKind::kDispatch;  // dispatch or exec
  std::string action_id;                      // dispatch only
  std::string attempt_id;                     // dispatch only
  core::ExecutionStatus status = core::ExecutionStatus::kInconclusive;
  std::string reason_code;  // snake_case, "" for none
  std::string summary;
  bool replayed = false;           // answered from the agent's state file, not run again
  std::optional<ExecResult> exec;  // exec only, when the command ran

  friend bool operator==(const Result&, const Result&) = default;
};

std::string EncodeResult(const Result& result);
[[nodiscard]] absl::StatusOr<Result> DecodeResult(std::string_view json);

// ---- hello (server -> agent, the first frame of the command stream) -------------------------

struct Hello {
  std::string host;
  int heartbeat_seconds = 15;
  std::string server_version;

  friend bool operator==(const Hello&, const Hello&) = default;
};

std::string EncodeHello(const Hello& hello);
[[nodiscard]] absl::StatusOr<Hello> DecodeHello(std::string_view json);

}  // namespace pulse::adapters::hostagent
