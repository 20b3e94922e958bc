// EngineClient::Exec: one command in a running container through the Engine's exec API
// (docs/docker.md, "Read-only exec"). Create the exec instance, start it attached (the daemon
// hijacks the connection and sends the multiplexed stdout/stderr frames until the process ends),
// then read its exit code. One deadline covers the three requests.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "pulse/adapters/docker/engine_client.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/string_view.h"

namespace pulse::docker {
namespace {

constexpr std::size_t kMaxExecArgs = 256;
constexpr std::size_t kMaxExecArgBytes = 4096;
constexpr std::size_t kMaxExecOutput = std::size_t{4} << 20;

// The multiplexed exec stream: 8-byte headers (stream 1 stdout, 2 stderr, three zero bytes,
// a big-endian length) and payloads, split anywhere by the transport. Payload bytes past the
// bound are counted down, never kept.
class ExecDemuxer {
 public:
  explicit ExecDemuxer(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // False with `error` set on a broken frame.
  bool Feed(std::string_view bytes, ExecResult& out, std::string& error) {
    while (!bytes.empty()) {
      if (remaining_ == 0) {
        const std::size_t take = std::min(bytes.size(), header_.size() - header_used_);
        std::copy_n(bytes.begin(), take, header_.begin() + header_used_);
        header_used_ += take;
        bytes.remove_prefix(take);
        if (header_used_ < header_.size()) {
          return true;
        }
        header_used_ = 0;
        const auto stream = static_cast<unsigned char>(header_[0]);
        if ((stream != 1 && stream != 2) || header_[1] != 0 || header_[2] != 0 || header_[3] != 0) {
          error = "a broken exec stream frame (unknown stream or non-zero padding)";
          return false;
        }
        stream_ = stream;
        remaining_ = (std::uint32_t{static_cast<unsigned char>(header_[4])} << 24) |
                     (std::uint32_t{static_cast<unsigned char>(header_[5])} << 16) |
                     (std::uint32_t{static_cast<unsigned char>(header_[6])} << 8) |
                     std::uint32_t{static_cast<unsigned char>(header_[7])};
        continue;
      }
      const std::size_t take = std::min<std::size_t>(bytes.size(), remaining_);
      const std::size_t room = max_bytes_ - std::min(max_bytes_, kept_);
      const std::size_t keep = std::min(take, room);
      (stream_ == 1 ? out.stdout_text : out.stderr_text).append(bytes.substr(0, keep));
      kept_ += keep;
      if (keep < take) {
        out.truncated = true;
      }
      remaining_ -= static_cast<std::uint32_t>(take);
      bytes.remove_prefix(take);
    }
    return true;
  }
  bool Full() const { return kept_ >= max_bytes_; }
  bool InFrame() const { return remaining_ > 0 || header_used_ > 0; }

 private:
  const std::size_t max_bytes_;
  std::array<char, 8> header_{};
  std::size_t header_used_ = 0;
  std::uint32_t remaining_ = 0;
  unsigned char stream_ = 0;
  std::size_t kept_ = 0;
};

}  // namespace

absl::StatusOr<ExecResult> EngineClient::Exec(std::string_view id,
                                              const ExecRequest& request) const {
  if (auto s = ValidateContainerRef(id); !s.ok()) {
    return s;
  }
  if (request.deadline <= absl::ZeroDuration()) {
    return MakeEngineError(EngineErrorKind::kInvalidArgument, "an exec deadline must be positive");
  }
  if (request.argv.empty() || request.argv.size() > kMaxExecArgs || request.argv[0].empty()) {
    return MakeEngineError(EngineErrorKind::kInvalidArgument,
                           "an exec needs a program and at most 256 arguments");
  }
  for (const std::string& arg : request.argv) {
    if (arg.size() > kMaxExecArgBytes || arg.find('\0') != std::string::npos) {
      return MakeEngineError(EngineErrorKind::kInvalidArgument,
                             "an exec argument is too long or holds a NUL byte");
    }
  }
  if (request.max_output_bytes == 0 || request.max_output_bytes > kMaxExecOutput) {
    return MakeEngineError(EngineErrorKind::kInvalidArgument,
                           "the exec output bound must be between 1 byte and 4 MiB");
  }
  const absl::Time deadline = absl::Now() + request.deadline;
  const std::string what = absl::StrCat("exec in container ", core::ToAbsl(id));

  core::JsonWriter create_body;
  create_body.StartObject();
  create_body.Member("AttachStdin", false);
  create_body.Member("AttachStdout", true);
  create_body.Member("AttachStderr", true);
  create_body.Member("Tty", false);
  create_body.Member("Privileged", false);
  create_body.Key("Cmd");
  create_body.StringArray(request.argv);
  create_body.EndObject();
  http_client::Request create;
  create.method = "POST";
  create.target = absl::StrCat("/containers/", core::ToAbsl(id), "/exec");
  create.headers = {{"Content-Type", "application/json"}};
  create.body = create_body.Take();
  auto created = Call(create, std::max(deadline - absl::Now(), absl::Milliseconds(1)));
  if (!created.ok()) {
    return created.status();
  }
  if (auto s = StatusFromAnswer(created->head.status, created->body, what); !s.ok()) {
    return s;
  }
  auto doc = core::ParseJson(created->body, {64 * 1024, 8});
  std::optional<std::string_view> exec_id;
  if (doc.ok() && doc->IsObject()) {
    exec_id = core::GetString(*doc, "Id");
  }
  if (!exec_id.has_value() || ValidateContainerRef(*exec_id).ok() == false) {
    return MakeEngineError(EngineErrorKind::kMalformed,
                           "the daemon's exec create answer has no valid Id");
  }
  const std::string exec_ref(*exec_id);

  http_client::ClientOptions http_options = http_->options();
  const absl::Duration left = std::max(deadline - absl::Now(), absl::Milliseconds(1));
  http_options.timeouts.response_header = left;
  http_options.timeouts.idle = left;
  http_options.timeouts.total = left;
  http_options.max_body_bytes = 0;  // the demuxer bounds what is kept
  auto http = http_client::HttpClient::Open(std::move(http_options));
  if (!http.ok()) {
    return MakeEngineError(EngineErrorKind::kInvalidArgument, std::string(http.status().message()));
  }
  http_client::Request start;
  start.method = "POST";
  start.target = absl::StrCat("/v", api_.ToString(), "/exec/", exec_ref, "/start");
  start.headers = {{"Content-Type", "application/json"}};
  start.body = R"({"Detach":false,"Tty":false})";
  ExecResult result;
  ExecDemuxer demuxer(request.max_output_bytes);
  int status = 0;
  std::string error_body;
  std::string demux_error;
  auto end = (*http)->Stream(
      start,
      [&](const http_client::ResponseHead& head) {
        status = head.status;
        return true;
      },
      [&](std::string_view bytes) {
        if (status != 200) {
          error_body.append(
              bytes.substr(0, 64 * 1024 - std::min(error_body.size(), std::size_t{64 * 1024})));
          return true;
        }
        return demuxer.Feed(bytes, result, demux_error) && !demuxer.Full();
      });
  if (!end.ok()) {
    return TransportError(end.status());
  }
  if (auto s = StatusFromAnswer(status, error_body, what); !s.ok()) {
    return s;
  }
  if (!demux_error.empty()) {
    return MakeEngineError(EngineErrorKind::kMalformed, demux_error);
  }
  if (*end == http_client::StreamEnd::kStopped && demuxer.Full()) {
    result.truncated = true;
  }
  if (*end == http_client::StreamEnd::kComplete && demuxer.InFrame()) {
    return MakeEngineError(EngineErrorKind::kMalformed, "the exec stream ended inside a frame");
  }

  // The exit code: the stream ends when the process does, but the daemon may record the exit a
  // moment later, so ask again briefly while it still says Running (and not after the bound
  // stopped reading: then the process may well run on).
  http_client::Request inspect;
  inspect.target = absl::StrCat("/exec/", exec_ref, "/json");
  for (int attempt = 0;; ++attempt) {
    const absl::Duration remaining = deadline - absl::Now();
    if (remaining <= absl::ZeroDuration()) {
      return MakeEngineError(EngineErrorKind::kTimeout,
                             absl::StrCat(what, ": no exit code before the deadline"));
    }
    auto answer = Call(inspect, remaining);
    if (!answer.ok()) {
      return answer.status();
    }
    if (auto s = StatusFromAnswer(answer->head.status, answer->body, what); !s.ok()) {
      return s;
    }
    auto info = core::ParseJson(answer->body, {1 << 20, 16});
    if (!info.ok() || !info->IsObject()) {
      return MakeEngineError(EngineErrorKind::kMalformed, "the exec inspect answer is not JSON");
    }
    const std::optional<bool> running = core::GetBool(*info, "Running");
    const std::optional<std::int64_t> code = core::GetInt64(*info, "ExitCode");
    if (!running.has_value()) {
      return MakeEngineError(EngineErrorKind::kMalformed, "the exec inspect answer has no Running");
    }
    if (!*running) {
      if (!code.has_value() || *code < -1 || *code > 255) {
        return MakeEngineError(EngineErrorKind::kMalformed,
                               "the exec inspect answer has no valid ExitCode");
      }
      result.exit_code = static_cast<int>(*code);
      return result;
    }
    if (result.truncated || demuxer.Full() || attempt >= 20) {
      return result;  // still running: no exit code
    }
    absl::SleepFor(std::min(absl::Milliseconds(50), remaining));
  }
}

}  // namespace pulse::docker
