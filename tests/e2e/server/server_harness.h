// The end-to-end harness of pulse-server: runs the real binary (PULSE_SERVER_BINARY) against a
// fresh temporary data dir on an ephemeral loopback port (--listen 127.0.0.1:0; the bound port
// is read from the startup line on stderr), mints tokens with its own `token create`
// subcommand, and talks to it over HTTP: plain requests, chat event streams
// (`data: {"type","data"}` frames) and the agent event stream (`event:`/`id:`/`data:` frames).
// Every process is stopped and reaped by RAII, so a failing REQUIRE leaves nothing behind.
// Not thread-safe unless a method says so.
#pragma once

#include <httplib.h>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "child_process.h"
#include "rapidjson/document.h"

namespace pulse::testing::e2e {

// A directory removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // path()/name.
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// What a short-lived command wrote and how it ended.
struct Captured {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] a path) to completion with stdout and stderr captured separately.
Captured RunCommand(const std::vector<std::string>& argv);

// The path of the binary under test.
std::string ServerBinary();

// `pulse-server token create --data-dir <dir> --name <name> --scopes <scopes>` (and
// `--kind <kind>` unless kind is ""): the token (the one stdout line without its newline).
// REQUIREs success.
std::string MintToken(const std::string& data_dir, const std::string& scopes,
                      const std::string& name = "e2e", const std::string& kind = "");

// True in an AddressSanitizer build (GCC's and clang's ways of saying so), where the server and
// the tests run several times slower.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif
inline constexpr absl::Duration kDefaultStopGrace =
    kSanitizedBuild ? absl::Seconds(30) : absl::Seconds(15);

struct ServerOptions {
  std::vector<std::string> args{};       // beyond --data-dir and --listen
  std::vector<std::string> extra_env{};  // NAME=value
  std::string listen{"127.0.0.1:0"};
  // pulse-server starts its first scheduled Patrol run at start-up by default; the harness
  // passes --patrol-on-start off unless this is set, so a suite's scripted model turns and its
  // findings are its own (the first-hour test sets it).
  bool patrol_on_start = false;
};

// One running pulse-server. Start REQUIREs that it prints its listen line within 20 s.
class ServerProcess {
 public:
  ServerProcess(const std::string& data_dir, ServerOptions options = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return child_->pid(); }
  // SIGTERM, then SIGKILL after `grace`; how it ended ("exited 0"). The default grace is 15 s,
  // 30 s in a sanitized build: there a server's shutdown runs about 2.6 times slower (7.7 s
  // against 2.9 s measured for the proxmox-ve Patrol case on 2026-12-03), and CI's load once
  // pushed it past 15 s.
  std::string Stop(absl::Duration grace = kDefaultStopGrace) { return child_->Stop(grace); }
  bool Running() { return child_->Running(); }
  std::string Log() const { return child_->LogTail(20000); }

 private:
  std::unique_ptr<ChildProcess> child_;
  int port_ = 0;
};

struct Reply {
  int status = 0;  // 0: no response (transport error)
  std::string body;
  httplib::Headers headers;

  std::string Header(const std::string& name) const;
};

// One request. `token` ("" for none) goes in X-API-Token. The path is sent exactly as given.
Reply Send(int port, const std::string& method, const std::string& path,
           const std::string& token = "", const std::string& body = "",
           const httplib::Headers& headers = {});

// Like Send, but stops reading after the first chunk of the body (for event streams).
Reply SendFirstChunk(int port, const std::string& method, const std::string& path,
                     const std::string& token = "", const std::string& body = "");

// Writes `bytes` on a fresh TCP connection and returns what the server writes back until it
// closes the connection or stays silent for `quiet`.
std::string Raw(int port, const std::string& bytes, absl::Duration quiet = absl::Milliseconds(500));

// The `error` code of an agent envelope ("<not json>" / "<no error>" otherwise).
std::string ErrorCode(const std::string& body);

// Parses JSON, REQUIRE-ing success.
rapidjson::Document Json(const std::string& text);
std::string Str(const rapidjson::Value& object, const char* member);

// ---- chat streams ----

struct ChatEvent {
  std::string type;
  std::string data_json;
};

struct ChatStream {
  int status = 0;
  std::string raw;                // every byte received
  std::vector<ChatEvent> events;  // in order
  std::string error_body;         // the body when status != 200

  std::vector<std::string> Types() const;
  // The data of the first event of `type`, parsed; REQUIREs one exists.
  rapidjson::Document First(const std::string& type) const;
  const ChatEvent* Last() const { return events.empty() ? nullptr : &events.back(); }
};

// POSTs `body` to `path` and reads the event stream until it ends (the server closes it after
// `done`) or `timeout` passes.
ChatStream PostStream(int port, const std::string& path, const std::string& token,
                      const std::string& body, absl::Duration timeout = absl::Seconds(30));

// A chat stream read on a thread of its own, for tests that act while it runs.
class StreamReader {
 public:
  // POSTs `body` to `path` and starts reading.
  StreamReader(int port, const std::string& path, const std::string& token,
               const std::string& body);
  ~StreamReader();  // disconnects if still reading, then joins
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  // The first event of `type` once it arrived; nullopt after `timeout`.
  std::optional<ChatEvent> WaitFor(const std::string& type,
                                   absl::Duration timeout = absl::Seconds(10));
  // Closes the connection from the client side (the client went away).
  void Disconnect();
  // Waits for the stream to end (REQUIREs it within `timeout`) and returns it.
  ChatStream Finish(absl::Duration timeout = absl::Seconds(20));

 private:
  mutable absl::Mutex mu_;
  ChatStream stream_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> disconnect_{false};
  std::shared_ptr<httplib::Client> client_;
  std::thread thread_;
};

// Splits SSE text into `data:` payloads of `data: {...}` frames (comments skipped).
std::vector<ChatEvent> ParseChatFrames(const std::string& raw);

// ---- the agent event stream ----

struct AgentEventFrame {
  std::string event;
  std::optional<std::uint64_t> id;
  std::string data;
};

// GET /api/agent/events on a thread of its own, collecting frames until destroyed.
class EventSubscriber {
 public:
  EventSubscriber(int port, const std::string& token);
  ~EventSubscriber();
  EventSubscriber(const EventSubscriber&) = delete;
  EventSubscriber& operator=(const EventSubscriber&) = delete;

  // Thread-safe. Waits until a frame of `event` has arrived (true) or `timeout` passes.
  bool WaitFor(const std::string& event, absl::Duration timeout = absl::Seconds(10));
  std::vector<AgentEventFrame> Frames() const;
  int status() const { return status_.load(); }

 private:
  mutable absl::Mutex mu_;
  std::string buffer_ ABSL_GUARDED_BY(mu_);
  std::vector<AgentEventFrame> frames_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::atomic<int> status_{0};
  std::shared_ptr<httplib::Client> client_;
  std::thread thread_;
};

// ---- the loopback fake provider's scripted OpenAI-compatible turns ----

// One streamed chat-completions answer: `text` only.
std::vector<std::string> TextTurn(const std::string& text);
// One streamed answer calling `tool` with `arguments_json`, as call `call_id`.
std::vector<std::string> ToolTurn(const std::string& call_id, const std::string& tool,
                                  const std::string& arguments_json);

}  // namespace pulse::testing::e2e
