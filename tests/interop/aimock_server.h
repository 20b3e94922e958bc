// AimockServer: the third-party LLM API mock @copilotkit/aimock (pinned in
// tests/interop/package.json) as a child process on 127.0.0.1. It serves one fixture file in
// strict mode (a request no fixture matches is an error, never a default answer) and accepts
// only requests that carry its API key, on one port for every wire format it speaks: OpenAI
// chat completions (/v1), Anthropic messages (/v1), Gemini (/v1beta) and Ollama (/api). Its
// request journal shows how it understood each request it answered. Stopped and reaped by the
// destructor. Not thread-safe: one owner.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "child_process.h"
#include "rapidjson/document.h"

namespace pulse::testing {

struct AimockOptions {
  std::string fixture_file;  // an aimock fixture JSON file
  std::string api_key;       // the only key it accepts, in any header its formats use
  std::string log_name;      // file name of its log in kInteropLogDir
};

class AimockServer {
 public:
  // Starts the mock on a free loopback port and returns once it answers GET /health.
  // FailedPrecondition when the pinned node or aimock is not installed; Unavailable (with the
  // log's tail) when it exits or stays silent for 15 s.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AimockServer>> Start(
      const AimockOptions& options);

  int port() const { return port_; }
  // "http://127.0.0.1:<port>" followed by `path_prefix` ("/v1", "/v1beta", "").
  std::string Url(std::string_view path_prefix = "") const;

  // GET /__aimock/journal: every request the mock answered, oldest first, each with its
  // method, path, redacted headers, the body as aimock normalized it, and the response status
  // with the fixture that matched (null when none did). Unavailable when it cannot be read.
  [[nodiscard]] absl::StatusOr<rapidjson::Document> Journal() const;

  // The mock's log (its stdout and stderr), for failure messages.
  const std::string& log_path() const { return process_->log_path(); }
  std::string LogTail() const { return process_->LogTail(); }

 private:
  AimockServer(std::unique_ptr<ChildProcess> process, int port, std::string api_key)
      : process_(std::move(process)), port_(port), api_key_(std::move(api_key)) {}

  std::unique_ptr<ChildProcess> process_;
  int port_;
  std::string api_key_;
};

}  // namespace pulse::testing
