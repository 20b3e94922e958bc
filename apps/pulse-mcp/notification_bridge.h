// The notification bridge of pulse-mcp (`--emit-notifications`, docs/mcp.md): a thread that
// follows pulse-server's Patrol stream (GET /api/ai/patrol/stream) and writes each event to
// stdout as the JSON-RPC notification
//   {"jsonrpc":"2.0","method":"notifications/pulse/patrol","params":<the event JSON>}
// once the client has initialized the session (nothing is written before). It reconnects with
// Last-Event-ID after the last event it wrote, so a dropped connection loses nothing the server
// still buffers (a `snapshot` event says when it did). Backoff between attempts: 1 s, doubling
// up to 30 s, back to 1 s after a stream that delivered an event. A refused token (401, 403)
// ends the bridge with one line on stderr; the session goes on without notifications.
// Thread-safe: Open, Stop from any thread. Borrows the output, which must outlive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "stdio_loop.h"

namespace pulse::http_client {
class HttpClient;
}

namespace pulse::apps::mcp {

inline constexpr std::string_view kPatrolNotificationMethod = "notifications/pulse/patrol";

struct NotificationBridgeOptions {
  absl::Duration first_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(30);
  // The stream pings every 15 s: twice that without a byte is a dead connection.
  absl::Duration idle = absl::Seconds(35);
};

class NotificationBridge {
 public:
  // Starts following the stream at `base_url` with `token`. InvalidArgument for a bad URL.
  static absl::StatusOr<std::unique_ptr<NotificationBridge>> Start(
      std::string_view base_url, std::string token, OutputLines& out,
      NotificationBridgeOptions options = {});
  ~NotificationBridge();  // Stop()
  NotificationBridge(const NotificationBridge&) = delete;
  NotificationBridge& operator=(const NotificationBridge&) = delete;

  // The client initialized the session: notifications may be written from now on.
  void Open();
  // Ends the stream and joins the thread. Idempotent.
  void Stop();

  // The notification line (with its newline) for one event's data; nullopt when the data is
  // not a JSON object.
  static std::optional<std::string> NotificationLine(std::string_view event_json);

 private:
  NotificationBridge(std::unique_ptr<http_client::HttpClient> client, std::string token,
                     OutputLines& out, NotificationBridgeOptions options);
  void Loop();
  // One connection; true when it delivered at least one event. Sets `refused` on 401/403.
  bool FollowOnce(bool& refused);

  std::unique_ptr<http_client::HttpClient> client_;
  const std::string token_;
  OutputLines& out_;
  const NotificationBridgeOptions options_;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  absl::CondVar cv_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::string> last_event_id_;  // the loop thread's own
  std::thread thread_;
};

}  // namespace pulse::apps::mcp
