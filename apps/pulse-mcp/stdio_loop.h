// The stdio transport of pulse-mcp: reads stdin in chunks, hands them to an McpSession and
// writes each reply line to stdout as soon as it exists. Nothing else is ever written to
// stdout. Returns at end of input (0) or when stdout is gone (1). Single-threaded.
#pragma once

#include "pulse/adapters/mcp/mcp_session.h"

namespace pulse::apps::mcp {

int RunStdioLoop(adapters::mcp::McpSession& session, int in_fd, int out_fd);

}  // namespace pulse::apps::mcp
