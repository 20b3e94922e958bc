// BuildHostReport: one Report of this host for the server (docs/agent.md, "Reports"): the
// local host's resources and relationships as LocalHostFleet sees them now, the status of
// each, the node's cpu/memory/load and each filesystem's usage as metrics, and per service the
// capabilities the agent's allowlist would accept (advisory). Every string is made clean text
// within the protocol's bounds, so what the agent sends always passes the server's decoder.
// Thread-safe when the fleet is.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/adapters/hostagent/agent_executor.h"
#include "pulse/adapters/hostagent/wire.h"

namespace pulse::adapters::hostagent {

struct ReportContext {
  std::string agent_version;
  int interval_seconds = 30;  // when the next unsolicited report comes
  std::string in_reply_to;    // the report command this answers; "" for a periodic report
  absl::Time now;
};

// The report of executor.host(). Fails only when the host cannot be probed at all
// (LocalHostFleet's status).
[[nodiscard]] absl::StatusOr<Report> BuildHostReport(agents::LocalHostFleet& fleet,
                                                     AgentExecutor& executor,
                                                     const ReportContext& context);

}  // namespace pulse::adapters::hostagent
