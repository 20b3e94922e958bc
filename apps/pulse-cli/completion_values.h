// The values __complete asks the server (or the config file) for: finding, action and session
// ids, resources, their types, technologies and capabilities, context names. The server and
// token come from the words typed (--server, --context) and the usual precedence (config.h);
// any failure — no server, no token, a timeout (2 s), a bad reply — is an empty list, never a
// message. Not thread-safe (reads the environment).
#pragma once

#include <string>
#include <vector>

#include "completion.h"

namespace pulse::cli {

std::vector<std::string> FetchCompletionValues(const ValueRequest& request);

}  // namespace pulse::cli
