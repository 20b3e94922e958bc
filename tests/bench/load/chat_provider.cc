#include "chat_provider.h"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace pulse::bench {
namespace {

std::string Chunk(const std::string& delta_json, const std::string& finish = "null") {
  return R"({"id":"chatcmpl-bench","object":"chat.completion.chunk","model":"test-model",)"
         R"("choices":[{"index":0,"delta":)" +
         delta_json + R"(,"finish_reason":)" + finish + "}]}";
}

std::string UsageChunk() {
  return R"({"id":"chatcmpl-bench","choices":[],"usage":{"prompt_tokens":100,)"
         R"("completion_tokens":20,"total_tokens":120}})";
}

// The SSE body of one streamed answer: one `data:` message per payload.
std::string SseBody(const std::vector<std::string>& payloads) {
  std::string out;
  for (const std::string& p : payloads) {
    absl::StrAppend(&out, "data: ", p, "\n\n");
  }
  return out;
}

// One assistant turn with 4 parallel read calls.
std::string ToolTurn() {
  struct Call {
    const char* tool;
    const char* args;  // JSON, escaped as a JSON string below
  };
  static constexpr Call kCalls[kChatToolsPerTurn] = {
      {"pulse_query", R"({\"action\":\"get\",\"resource_id\":\"vm:105\"})"},
      {"pulse_read", R"({\"action\":\"status\",\"resource_id\":\"vm:105\"})"},
      {"pulse_query", R"({\"action\":\"get\",\"resource_id\":\"vm:101\"})"},
      {"pulse_read", R"({\"action\":\"status\",\"resource_id\":\"vm:101\"})"},
  };
  std::string calls;
  for (int i = 0; i < kChatToolsPerTurn; ++i) {
    absl::StrAppend(&calls, i == 0 ? "" : ",", R"({"index":)", i, R"(,"id":"call_)", i,
                    R"(","type":"function","function":{"name":")", kCalls[i].tool,
                    R"(","arguments":")", kCalls[i].args, R"("}})");
  }
  return SseBody({Chunk(R"({"role":"assistant","tool_calls":[)" + calls + "]}"),
                  Chunk("{}", R"("tool_calls")"), UsageChunk(), "[DONE]"});
}

std::string FinalTurn() {
  return SseBody({Chunk(R"({"role":"assistant","content":"vm:101 and vm:105 are both running."})"),
                  Chunk("{}", R"("stop")"), UsageChunk(), "[DONE]"});
}

}  // namespace

std::unique_ptr<ContentAwareProvider> ContentAwareProvider::Start(
    std::chrono::milliseconds latency) {
  std::unique_ptr<ContentAwareProvider> provider(new ContentAwareProvider(latency));
  provider->port_ = provider->server_.bind_to_any_port("127.0.0.1");
  if (provider->port_ <= 0 || !RaiseListenBacklog(provider->port_, 512)) {
    std::fprintf(stderr, "fake provider: cannot listen on 127.0.0.1\n");
    return nullptr;
  }
  ContentAwareProvider* raw = provider.get();
  provider->thread_ = std::thread([raw] { raw->server_.listen_after_bind(); });
  while (!provider->server_.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return provider;
}

ContentAwareProvider::ContentAwareProvider(std::chrono::milliseconds latency)
    : latency_(latency), tool_turn_(ToolTurn()), final_turn_(FinalTurn()) {
  server_.new_task_queue = [] { return new httplib::ThreadPool(128); };
  server_.set_keep_alive_max_count(1);
  server_.Post(kChatCompletionsPath,
               [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
}

ContentAwareProvider::~ContentAwareProvider() {
  server_.stop();
  if (thread_.joinable()) {
    thread_.join();
  }
}

std::string ContentAwareProvider::base_url() const {
  return absl::StrCat("http://127.0.0.1:", port_);
}

std::string ContentAwareProvider::first_body() const {
  absl::MutexLock lock(&mu_);
  return first_body_;
}

std::string ContentAwareProvider::second_body() const {
  absl::MutexLock lock(&mu_);
  return second_body_;
}

void ContentAwareProvider::Handle(const httplib::Request& req, httplib::Response& res) {
  const bool has_tool_result = req.body.find(R"("role":"tool")") != std::string::npos;
  {
    absl::MutexLock lock(&mu_);
    std::string& kept = has_tool_result ? second_body_ : first_body_;
    if (kept.empty()) {
      kept = req.body;
    }
  }
  if (latency_.count() > 0) {
    std::this_thread::sleep_for(latency_);
  }
  res.set_content(has_tool_result ? final_turn_ : tool_turn_, "text/event-stream");
}

bool RaiseListenBacklog(int port, int backlog) {
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) {
    return false;
  }
  bool raised = false;
  while (dirent* entry = readdir(fds)) {
    int fd = -1;
    if (!absl::SimpleAtoi(entry->d_name, &fd) || fd == dirfd(fds)) {
      continue;
    }
    int accepting = 0;
    socklen_t len = sizeof(accepting);
    sockaddr_in addr{};
    socklen_t addr_len = sizeof(addr);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || accepting == 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len) != 0 ||
        addr.sin_family != AF_INET || ntohs(addr.sin_port) != port) {
      continue;
    }
    raised = ::listen(fd, backlog) == 0;
    break;
  }
  closedir(fds);
  return raised;
}

StreamedChat PostChat(httplib::Client& client, const std::string& token,
                      const std::string& message) {
  httplib::Request req;
  req.method = "POST";
  req.path = "/api/ai/chat";
  req.set_header("X-API-Token", token);
  req.set_header("Content-Type", "application/json");
  req.body = absl::StrCat(R"({"message":")", message, R"("})");
  StreamedChat chat;
  req.content_receiver = [&chat](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    chat.raw.append(data, n);
    if (!chat.done_at.has_value() && chat.raw.find(R"("type":"done")") != std::string::npos) {
      chat.done_at = std::chrono::steady_clock::now();
    }
    return true;
  };
  httplib::Response res;
  chat.start = std::chrono::steady_clock::now();
  client.send(req, res, chat.error);
  chat.status = res.status;
  return chat;
}

}  // namespace pulse::bench
