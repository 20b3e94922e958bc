// ServerApp: pulse-server's composition root. Open builds, in order: the data dir's SQLite
// storage (every store), the fleet (demo, local or a file), the services over observed stores
// (so their changes feed the agent event bus and the metrics), the read views, the Assistant
// (the provider and the chat flavour of core/loop/loop_assembly.h: tool registry, executor with
// the built-in handlers, agentic loop) when a provider is configured, the route table and the
// HTTP server. Start accepts requests; Shutdown is graceful: new runs are refused, runs in
// flight are cancelled and end their streams with `error` and `done`, agent event streams end,
// the HTTP server drains and stops, and the stores close with the object.
// Thread-safety: Open/Start/Shutdown from one thread; the handlers run on the server's.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/http/http_server.h"
#include "pulse/adapters/server/server_config.h"

namespace pulse::server {

class ServerApp {
 public:
  // Everything wired and the listening socket bound (port() is known), not yet accepting.
  // Errors name what failed: the data dir (storage), the fleet file, the provider settings
  // (ResolveProvider's messages), or the listen address (Unavailable when it cannot be bound).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ServerApp>> Open(const ServerConfig& config);

  ~ServerApp();  // Shutdown()
  ServerApp(const ServerApp&) = delete;
  ServerApp& operator=(const ServerApp&) = delete;

  int port() const;
  // The HTTP transport's counts (threads, requests in flight, reads answered on the event loop).
  adapters::http::HttpServerStats http_stats() const;
  [[nodiscard]] absl::Status Start();

  // The graceful stop above. Idempotent. False when some run did not end within the grace
  // period (its thread still holds the services: the caller must not destroy the app then).
  bool Shutdown();

  // One line for the log: the listen address, data dir, fleet, Assistant route and control
  // level (never the API key).
  std::string Describe() const;

  struct Parts;

 private:
  explicit ServerApp(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

// pulse-server's run: blocks SIGINT and SIGTERM, opens and starts the app, logs the listen
// line, waits for a signal, shuts down. Returns the process exit code: 0 after a clean stop,
// 1 when the server could not start (the reason is logged).
int RunServer(const ServerConfig& config);

}  // namespace pulse::server
