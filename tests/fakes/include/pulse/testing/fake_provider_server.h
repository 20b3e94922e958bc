// FakeProviderServer: a loopback HTTP server that plays scripted responses to model-provider
// adapters, and records what they sent. Tests queue ScriptedResponses; each incoming request
// takes the first queued response whose `path` matches (an empty `path` matches any request),
// so a test scripts a whole conversation up front. A response controls everything a provider
// stream can do wrong: status and headers, a delay before the headers, body chunks each with a
// delay before it, chunked or Content-Length framing, and cutting the connection after the
// chunks without the chunked terminator (or short of the Content-Length).
//
// A request that matches no queued response gets HTTP 500 with a "fake provider server: no
// scripted response" text body and is still recorded (`matched` false).
//
// Binds 127.0.0.1 on an ephemeral port; serves on its own threads until destroyed. Every
// method is thread-safe. Destruction interrupts pending delays and cuts open streams.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace pulse::testing {

struct ScriptedChunk {
  std::string bytes;  // written as one write (one HTTP chunk in chunked framing)
  absl::Duration delay_before = absl::ZeroDuration();
};

enum class BodyFraming {
  kChunked,        // Transfer-Encoding: chunked
  kContentLength,  // Content-Length: the sum of the chunks (one more when disconnecting)
};

struct ScriptedResponse {
  // Matches a request whose path (query excluded) is exactly this; "" matches any request.
  std::string path;
  int status = 200;
  // Sent as given, besides Content-Type and the framing headers the server adds.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "text/event-stream";
  // Time between reading the request and sending the status line and headers.
  absl::Duration header_delay = absl::ZeroDuration();
  std::vector<ScriptedChunk> chunks;
  // After the last chunk, close the connection without finishing the body: no chunked
  // terminator, or one byte short of the announced Content-Length.
  bool disconnect_after_chunks = false;
  BodyFraming framing = BodyFraming::kChunked;
  // When set, the response waits (after header_delay, before the status line) until the test
  // notifies it (or the server stops): a turn that holds until the test has acted.
  std::shared_ptr<absl::Notification> release;
};

struct RecordedRequest {
  std::string method;
  std::string target;  // path with the query string, as sent: "/v1/models?limit=5"
  std::string path;    // without the query string
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool matched = false;  // a scripted response answered it

  // The first value of header `name` (case-insensitive), or "" when absent.
  std::string Header(std::string_view name) const;
};

class FakeProviderServer {
 public:
  // Binds 127.0.0.1 on a free port and starts serving. Unavailable when no port can be bound.
  static absl::StatusOr<std::unique_ptr<FakeProviderServer>> Start();

  FakeProviderServer(const FakeProviderServer&) = delete;
  FakeProviderServer& operator=(const FakeProviderServer&) = delete;
  ~FakeProviderServer();

  int port() const;
  // "http://127.0.0.1:<port>", without a trailing slash.
  std::string base_url() const;

  // Queues `response` behind the ones already queued.
  void Enqueue(ScriptedResponse response);
  // Every request received so far, in arrival order (recorded before any scripted delay).
  std::vector<RecordedRequest> Requests() const;
  // Queued responses that no request has taken yet.
  std::size_t PendingResponses() const;

 private:
  class Impl;
  explicit FakeProviderServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

// ---- body builders ------------------------------------------------------------------------

// One chunk of `bytes`, written after `delay_before`.
ScriptedChunk Chunk(std::string bytes, absl::Duration delay_before = absl::ZeroDuration());

// "data: <data>\n\n" (one SSE message; `data` must not contain a newline).
std::string SseData(std::string_view data);
// "event: <event>\ndata: <data>\n\n".
std::string SseEvent(std::string_view event, std::string_view data);
// One chunk per payload, each an SseData message.
std::vector<ScriptedChunk> SseChunks(const std::vector<std::string>& data_payloads);
// One chunk per line, each `line` + "\n".
std::vector<ScriptedChunk> NdjsonChunks(const std::vector<std::string>& lines);
// `bytes` cut into chunks of `chunk_size` bytes (the last may be shorter), each after
// `delay_before`. chunk_size 1 writes one byte at a time.
std::vector<ScriptedChunk> SplitIntoChunks(std::string_view bytes, std::size_t chunk_size,
                                           absl::Duration delay_before = absl::ZeroDuration());
// The concatenated bytes of `chunks`.
std::string JoinChunks(const std::vector<ScriptedChunk>& chunks);

// A complete, non-streamed JSON response (Content-Length framing).
ScriptedResponse JsonResponse(int status, std::string body);

}  // namespace pulse::testing
