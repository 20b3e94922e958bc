#include "server_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"

namespace pulse::testing::e2e {
namespace {

// A server that refuses a large body closes the connection while the client still writes it:
// the test process must see EPIPE, not die of SIGPIPE.
[[maybe_unused]] const bool kSigpipeIgnored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

std::unique_ptr<httplib::Client> ClientFor(int port, absl::Duration read_timeout) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
  client->set_connection_timeout(5, 0);
  const auto seconds = static_cast<time_t>(absl::ToInt64Seconds(read_timeout));
  client->set_read_timeout(seconds, 0);
  client->set_write_timeout(10, 0);
  client->set_url_encode(false);
  client->set_keep_alive(false);
  return client;
}

// "event: x\nid: n\ndata: ...\n\n" frames of `text`; the unfinished tail stays in `text`.
std::vector<AgentEventFrame> TakeEventFrames(std::string& text) {
  std::vector<AgentEventFrame> out;
  std::size_t end = 0;
  while ((end = text.find("\n\n")) != std::string::npos) {
    const std::string block = text.substr(0, end);
    text.erase(0, end + 2);
    AgentEventFrame frame;
    std::istringstream lines(block);
    std::string line;
    bool any = false;
    while (std::getline(lines, line)) {
      if (line.rfind("event: ", 0) == 0) {
        frame.event = line.substr(7);
        any = true;
      } else if (line.rfind("id: ", 0) == 0) {
        frame.id = std::stoull(line.substr(4));
      } else if (line.rfind("data: ", 0) == 0) {
        frame.data += line.substr(6);
      }
    }
    if (any) {
      out.push_back(std::move(frame));
    }
  }
  return out;
}

std::string Chunk(const std::string& delta_json, const std::string& finish = "null") {
  return R"({"id":"chatcmpl-e2e","object":"chat.completion.chunk","model":"test-model",)"
         R"("choices":[{"index":0,"delta":)" +
         delta_json + R"(,"finish_reason":)" + finish + "}]}";
}

std::string UsageChunk() {
  return R"({"id":"chatcmpl-e2e","choices":[],"usage":{"prompt_tokens":100,)"
         R"("completion_tokens":20,"total_tokens":120}})";
}

}  // namespace

TempDir::TempDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "pulse-e2e-server-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Captured RunCommand(const std::vector<std::string>& argv) {
  TempDir dir;
  const std::string out_path = dir.File("out");
  const std::string err_path = dir.File("err");
  std::vector<std::string> strings = argv;
  std::vector<char*> args;
  for (std::string& s : strings) {
    args.push_back(s.data());
  }
  args.push_back(nullptr);
  const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(out_fd >= 0);
  REQUIRE(err_fd >= 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Captured captured;
  captured.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  captured.out = ReadFile(out_path);
  captured.err = ReadFile(err_path);
  return captured;
}

std::string ServerBinary() {
  // PULSE_E2E_SERVER_BINARY runs the suite against another build (e.g. the commit before a
  // fix, to see a regression test fail there).
  const char* other = std::getenv("PULSE_E2E_SERVER_BINARY");
  return other != nullptr && *other != '\0' ? std::string(other) : std::string(PULSE_SERVER_BINARY);
}

std::string MintToken(const std::string& data_dir, const std::string& scopes,
                      const std::string& name, const std::string& kind) {
  std::vector<std::string> argv = {ServerBinary(), "token", "create",   "--data-dir", data_dir,
                                   "--name",       name,    "--scopes", scopes};
  if (!kind.empty()) {
    argv.insert(argv.end(), {"--kind", kind});
  }
  const Captured c = RunCommand(argv);
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  REQUIRE(c.out.size() > 1);
  REQUIRE(c.out.back() == '\n');
  return c.out.substr(0, c.out.size() - 1);
}

ServerProcess::ServerProcess(const std::string& data_dir, ServerOptions options) {
  ChildProcessOptions child;
  child.argv = {ServerBinary(), "--data-dir", data_dir, "--listen", options.listen};
  child.argv.insert(child.argv.end(), options.args.begin(), options.args.end());
  if (!options.patrol_on_start) {
    child.argv.insert(child.argv.end(), {"--patrol-on-start", "off"});
  }
  child.extra_env = options.extra_env;
  child.log_path = data_dir + "/server.log";
  absl::StatusOr<std::unique_ptr<ChildProcess>> started = ChildProcess::Start(child);
  REQUIRE(started.ok());
  child_ = *std::move(started);
  const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch match;
    const std::string log = ReadFile(child_->log_path());
    if (std::regex_search(log, match, listening)) {
      port_ = std::stoi(match[1].str());
      return;
    }
    if (!child_->Running()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(child_->LogTail());
  FAIL("pulse-server did not report its listen address");
}

ServerProcess::~ServerProcess() {
  if (child_ != nullptr) {
    child_->Stop(absl::Seconds(5));
  }
}

std::string Reply::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

Reply Send(int port, const std::string& method, const std::string& path, const std::string& token,
           const std::string& body, const httplib::Headers& headers) {
  auto client = ClientFor(port, absl::Seconds(30));
  httplib::Request req;
  req.method = method;
  req.path = path;
  req.headers = headers;
  if (!token.empty()) {
    req.set_header("X-API-Token", token);
  }
  if (!body.empty()) {
    req.body = body;
    req.set_header("Content-Type", "application/json");
  }
  Reply reply;
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    reply.body.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  if (client->send(req, res, error)) {
    reply.status = res.status;
    reply.headers = res.headers;
  }
  return reply;
}

Reply SendFirstChunk(int port, const std::string& method, const std::string& path,
                     const std::string& token, const std::string& body) {
  auto client = ClientFor(port, absl::Seconds(30));
  httplib::Request req;
  req.method = method;
  req.path = path;
  if (!token.empty()) {
    req.set_header("X-API-Token", token);
  }
  if (!body.empty()) {
    req.body = body;
    req.set_header("Content-Type", "application/json");
  }
  Reply reply;
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    reply.body.append(data, n);
    return false;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  client->send(req, res, error);
  reply.status = res.status;
  reply.headers = res.headers;
  return reply;
}

std::string Raw(int port, const std::string& bytes, absl::Duration quiet) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      break;
    }
    sent += static_cast<std::size_t>(n);
  }
  timeval tv{};
  const std::int64_t micros = absl::ToInt64Microseconds(quiet);
  tv.tv_sec = static_cast<time_t>(micros / 1000000);
  tv.tv_usec = static_cast<suseconds_t>(micros % 1000000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string ErrorCode(const std::string& body) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body);
  if (!doc.ok() || !doc->IsObject()) {
    return "<not json>";
  }
  return std::string(core::GetString(*doc, "error").value_or("<no error>"));
}

rapidjson::Document Json(const std::string& text) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(text, {8 << 20, 64});
  INFO(text.substr(0, 500));
  REQUIRE(doc.ok());
  return *std::move(doc);
}

std::string Str(const rapidjson::Value& object, const char* member) {
  return std::string(core::GetString(object, member).value_or(""));
}

std::vector<std::string> ChatStream::Types() const {
  std::vector<std::string> out;
  for (const ChatEvent& e : events) {
    out.push_back(e.type);
  }
  return out;
}

rapidjson::Document ChatStream::First(const std::string& type) const {
  for (const ChatEvent& e : events) {
    if (e.type == type) {
      return Json(e.data_json);
    }
  }
  INFO(raw);
  FAIL("no " << type << " event");
  return rapidjson::Document();
}

std::vector<ChatEvent> ParseChatFrames(const std::string& raw) {
  std::vector<ChatEvent> out;
  std::size_t start = 0;
  while (start < raw.size()) {
    std::size_t end = raw.find("\n\n", start);
    if (end == std::string::npos) {
      break;
    }
    const std::string block = raw.substr(start, end - start);
    start = end + 2;
    if (block.rfind("data: ", 0) != 0) {
      continue;  // a comment (": heartbeat")
    }
    absl::StatusOr<rapidjson::Document> doc = core::ParseJson(block.substr(6), {8 << 20, 64});
    if (!doc.ok() || !doc->IsObject()) {
      out.push_back({"<malformed>", block});
      continue;
    }
    const rapidjson::Value* data = core::GetMember(*doc, "data");
    out.push_back({std::string(core::GetString(*doc, "type").value_or("<none>")),
                   data == nullptr ? "" : core::ToJsonString(*data)});
  }
  return out;
}

ChatStream PostStream(int port, const std::string& path, const std::string& token,
                      const std::string& body, absl::Duration timeout) {
  auto client = ClientFor(port, timeout);
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.set_header("X-API-Token", token);
  req.set_header("Content-Type", "application/json");
  req.body = body;
  ChatStream stream;
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    stream.raw.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  client->send(req, res, error);
  stream.status = res.status;
  if (stream.status != 200) {
    stream.error_body = stream.raw;
  }
  stream.events = ParseChatFrames(stream.raw);
  return stream;
}

StreamReader::StreamReader(int port, const std::string& path, const std::string& token,
                           const std::string& body) {
  client_ = ClientFor(port, absl::Seconds(60));
  thread_ = std::thread([this, path, token, body, owned = client_] {
    httplib::Request req;
    req.method = "POST";
    req.path = path;
    req.set_header("X-API-Token", token);
    req.set_header("Content-Type", "application/json");
    req.body = body;
    req.content_receiver = [this](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      absl::MutexLock lock(&mu_);
      stream_.raw.append(data, n);
      stream_.events = ParseChatFrames(stream_.raw);
      return !disconnect_.load();
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    owned->send(req, res, error);
    absl::MutexLock lock(&mu_);
    stream_.status = res.status;
    ended_ = true;
  });
}

StreamReader::~StreamReader() {
  Disconnect();
  thread_.join();
}

std::optional<ChatEvent> StreamReader::WaitFor(const std::string& type, absl::Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      absl::MutexLock lock(&mu_);
      for (const ChatEvent& e : stream_.events) {
        if (e.type == type) {
          return e;
        }
      }
      if (ended_) {
        return std::nullopt;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

void StreamReader::Disconnect() {
  disconnect_.store(true);
  client_->stop();
}

ChatStream StreamReader::Finish(absl::Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      absl::MutexLock lock(&mu_);
      if (ended_) {
        return stream_;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("the stream did not end in time");
  return ChatStream();
}

EventSubscriber::EventSubscriber(int port, const std::string& token) {
  client_ = ClientFor(port, absl::Seconds(60));
  thread_ = std::thread([this, token, owned = client_] {
    httplib::Request req;
    req.method = "GET";
    req.path = "/api/agent/events";
    req.set_header("X-API-Token", token);
    req.content_receiver = [this](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      absl::MutexLock lock(&mu_);
      buffer_.append(data, n);
      for (AgentEventFrame& f : TakeEventFrames(buffer_)) {
        frames_.push_back(std::move(f));
      }
      return !stop_.load();
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    owned->send(req, res, error);
    status_.store(res.status);
  });
}

EventSubscriber::~EventSubscriber() {
  stop_.store(true);
  // Wakes a read blocked until the next heartbeat.
  client_->stop();
  thread_.join();
}

bool EventSubscriber::WaitFor(const std::string& event, absl::Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      absl::MutexLock lock(&mu_);
      for (const AgentEventFrame& f : frames_) {
        if (f.event == event) {
          return true;
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<AgentEventFrame> EventSubscriber::Frames() const {
  absl::MutexLock lock(&mu_);
  return frames_;
}

std::vector<std::string> TextTurn(const std::string& text) {
  core::JsonWriter delta;
  delta.StartObject();
  delta.Member("role", "assistant");
  delta.Member("content", text);
  delta.EndObject();
  return {Chunk(delta.Take()), Chunk("{}", R"("stop")"), UsageChunk(), "[DONE]"};
}

std::vector<std::string> ToolTurn(const std::string& call_id, const std::string& tool,
                                  const std::string& arguments_json) {
  core::JsonWriter delta;
  delta.StartObject();
  delta.Member("role", "assistant");
  delta.Key("tool_calls");
  delta.StartArray();
  delta.StartObject();
  delta.Member("index", 0);
  delta.Member("id", call_id);
  delta.Member("type", "function");
  delta.Key("function");
  delta.StartObject();
  delta.Member("name", tool);
  delta.Member("arguments", arguments_json);
  delta.EndObject();
  delta.EndObject();
  delta.EndArray();
  delta.EndObject();
  return {Chunk(delta.Take()), Chunk("{}", R"("tool_calls")"), UsageChunk(), "[DONE]"};
}

}  // namespace pulse::testing::e2e
