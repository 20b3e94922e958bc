#include "pulse/testing/fake_provider_server.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "httplib.h"

namespace pulse::testing {

class FakeProviderServer::Impl {
 public:
  Impl() {
    // One request per connection: a finished exchange never parks a worker in keep-alive, so
    // destruction is prompt.
    server_.set_keep_alive_max_count(1);
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      Handle(req, res);
    };
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    server_.Put(".*", handler);
    server_.Delete(".*", handler);
  }

  ~Impl() {
    stopping_.Notify();
    server_.stop();
    if (thread_.joinable()) {
      thread_.join();
    }
  }

  bool Listen() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) {
      return false;
    }
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // Server::stop() does nothing until the accept loop runs: wait for it, so a server
    // destroyed right after Start() still stops.
    while (!server_.is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  int port() const { return port_; }

  void Enqueue(ScriptedResponse response) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(response));
  }

  std::vector<RecordedRequest> Requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

  std::size_t Pending() const {
    absl::MutexLock lock(&mu_);
    return queue_.size();
  }

 private:
  // Takes the first queued response for `path` and records the request.
  std::optional<ScriptedResponse> Take(const httplib::Request& req) {
    RecordedRequest recorded;
    recorded.method = req.method;
    recorded.target = req.target;
    recorded.path = req.path;
    for (const auto& [name, value] : req.headers) {
      recorded.headers.emplace_back(name, value);
    }
    recorded.body = req.body;

    absl::MutexLock lock(&mu_);
    std::optional<ScriptedResponse> taken;
    auto it = std::find_if(queue_.begin(), queue_.end(), [&](const ScriptedResponse& r) {
      return r.path.empty() || r.path == req.path;
    });
    if (it != queue_.end()) {
      taken = std::move(*it);
      queue_.erase(it);
    }
    recorded.matched = taken.has_value();
    requests_.push_back(std::move(recorded));
    return taken;
  }

  // True when the wait was cut short by shutdown.
  bool Wait(absl::Duration delay) {
    return delay > absl::ZeroDuration() && stopping_.WaitForNotificationWithTimeout(delay);
  }

  // Waits for `release` (when set) in short slices so shutdown stays prompt; false when the
  // server stopped first.
  bool Released(const std::shared_ptr<absl::Notification>& release) {
    while (release != nullptr && !release->WaitForNotificationWithTimeout(absl::Milliseconds(20))) {
      if (stopping_.HasBeenNotified()) {
        return false;
      }
    }
    return true;
  }

  void Handle(const httplib::Request& req, httplib::Response& res) {
    std::optional<ScriptedResponse> script = Take(req);
    if (!script.has_value()) {
      res.status = 500;
      res.set_content(absl::StrCat("fake provider server: no scripted response for ", req.method,
                                   " ", req.path),
                      "text/plain");
      return;
    }
    if (Wait(script->header_delay) || !Released(script->release)) {
      res.status = 500;
      res.set_content("fake provider server: stopping", "text/plain");
      return;
    }
    res.status = script->status;
    for (const auto& [name, value] : script->headers) {
      res.set_header(name, value);
    }
    auto shared = std::make_shared<const ScriptedResponse>(std::move(*script));
    // Writes every chunk in one call; false (cut the connection) on shutdown, on a failed
    // write (the client left) or when the script disconnects.
    auto write_all = [this, shared](httplib::DataSink& sink) {
      for (const ScriptedChunk& chunk : shared->chunks) {
        if (Wait(chunk.delay_before)) {
          return false;
        }
        if (!chunk.bytes.empty() && !sink.write(chunk.bytes.data(), chunk.bytes.size())) {
          return false;
        }
      }
      return !shared->disconnect_after_chunks;
    };
    if (shared->framing == BodyFraming::kChunked) {
      res.set_chunked_content_provider(shared->content_type,
                                       [write_all](std::size_t, httplib::DataSink& sink) {
                                         if (!write_all(sink)) {
                                           return false;
                                         }
                                         sink.done();
                                         return true;
                                       });
      return;
    }
    std::size_t length = 0;
    for (const ScriptedChunk& chunk : shared->chunks) {
      length += chunk.bytes.size();
    }
    if (shared->disconnect_after_chunks) {
      ++length;  // announce one byte more than will come
    }
    if (length == 0) {
      res.set_content("", shared->content_type);
      return;
    }
    res.set_content_provider(
        length, shared->content_type,
        [write_all](std::size_t, std::size_t, httplib::DataSink& sink) { return write_all(sink); });
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  absl::Notification stopping_;
  mutable absl::Mutex mu_;
  std::deque<ScriptedResponse> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
};

std::string RecordedRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, absl::string_view(name.data(), name.size()))) {
      return value;
    }
  }
  return "";
}

absl::StatusOr<std::unique_ptr<FakeProviderServer>> FakeProviderServer::Start() {
  auto impl = std::make_unique<Impl>();
  if (!impl->Listen()) {
    return absl::UnavailableError("fake provider server: cannot bind a loopback port");
  }
  return std::unique_ptr<FakeProviderServer>(new FakeProviderServer(std::move(impl)));
}

FakeProviderServer::FakeProviderServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakeProviderServer::~FakeProviderServer() = default;

int FakeProviderServer::port() const { return impl_->port(); }

std::string FakeProviderServer::base_url() const {
  return absl::StrCat("http://127.0.0.1:", impl_->port());
}

void FakeProviderServer::Enqueue(ScriptedResponse response) { impl_->Enqueue(std::move(response)); }

std::vector<RecordedRequest> FakeProviderServer::Requests() const { return impl_->Requests(); }

std::size_t FakeProviderServer::PendingResponses() const { return impl_->Pending(); }

ScriptedChunk Chunk(std::string bytes, absl::Duration delay_before) {
  return ScriptedChunk{std::move(bytes), delay_before};
}

std::string SseData(std::string_view data) {
  return absl::StrCat("data: ", absl::string_view(data.data(), data.size()), "\n\n");
}

std::string SseEvent(std::string_view event, std::string_view data) {
  return absl::StrCat("event: ", absl::string_view(event.data(), event.size()),
                      "\ndata: ", absl::string_view(data.data(), data.size()), "\n\n");
}

std::vector<ScriptedChunk> SseChunks(const std::vector<std::string>& data_payloads) {
  std::vector<ScriptedChunk> chunks;
  chunks.reserve(data_payloads.size());
  for (const std::string& payload : data_payloads) {
    chunks.push_back(Chunk(SseData(payload)));
  }
  return chunks;
}

std::vector<ScriptedChunk> NdjsonChunks(const std::vector<std::string>& lines) {
  std::vector<ScriptedChunk> chunks;
  chunks.reserve(lines.size());
  for (const std::string& line : lines) {
    chunks.push_back(Chunk(line + "\n"));
  }
  return chunks;
}

std::vector<ScriptedChunk> SplitIntoChunks(std::string_view bytes, std::size_t chunk_size,
                                           absl::Duration delay_before) {
  std::vector<ScriptedChunk> chunks;
  const std::size_t step = std::max<std::size_t>(chunk_size, 1);
  for (std::size_t at = 0; at < bytes.size(); at += step) {
    chunks.push_back(Chunk(std::string(bytes.substr(at, step)), delay_before));
  }
  return chunks;
}

std::string JoinChunks(const std::vector<ScriptedChunk>& chunks) {
  std::string joined;
  for (const ScriptedChunk& chunk : chunks) {
    joined += chunk.bytes;
  }
  return joined;
}

ScriptedResponse JsonResponse(int status, std::string body) {
  ScriptedResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.framing = BodyFraming::kContentLength;
  response.chunks.push_back(Chunk(std::move(body)));
  return response;
}

}  // namespace pulse::testing
