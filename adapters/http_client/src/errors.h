// Building the client's error statuses: a status code by kind, the kind as a payload
// (ErrorKindOf reads it), the messages of the four deadlines, and libcurl's results mapped.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "pulse/adapters/http_client/http_client.h"

namespace pulse::http_client {

enum class TimeoutPhase { kConnect, kResponseHeader, kIdle, kTotal };

absl::Status ClientError(ErrorKind kind, std::string_view message);
absl::Status TimeoutError(TimeoutPhase phase, const Timeouts& timeouts);

// The error of a connection that could not be made, by the connect's errno (refused, no such
// socket, not permitted, unreachable).
absl::Status ConnectFailure(int os_error);

// The error of a transfer that ended with libcurl result `curl_code` (a CURLcode, not
// CURLE_OK); `os_error` is the errno of a failed connect, `head_done` whether the response head
// had arrived, `pinned` whether a certificate fingerprint was pinned.
absl::Status CurlFailure(int curl_code, int os_error, bool head_done, bool pinned,
                         const Timeouts& timeouts);

}  // namespace pulse::http_client
