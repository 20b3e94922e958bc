// Building the client's error statuses: a status code by kind, the kind as a payload
// (ErrorKindOf reads it), and the messages of the four deadlines.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "pulse/adapters/http_client/http_client.h"

namespace pulse::http_client {

enum class TimeoutPhase { kConnect, kResponseHeader, kIdle, kTotal };

absl::Status ClientError(ErrorKind kind, std::string_view message);
absl::Status TimeoutError(TimeoutPhase phase, const Timeouts& timeouts);

}  // namespace pulse::http_client
