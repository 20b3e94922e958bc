#include "pulse/adapters/server/chat_runs.h"

#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"

namespace pulse::server {

namespace http = adapters::http;

std::string ChatRun::session_id() const {
  absl::MutexLock lock(&mu_);
  return session_id_;
}

void ChatRun::set_session_id(std::string id) {
  absl::MutexLock lock(&mu_);
  session_id_ = std::move(id);
}

ChatRuns::ChatRuns() : watcher_([this] { Watch(); }) {}

ChatRuns::~ChatRuns() {
  Shutdown(absl::InfiniteDuration());
  {
    absl::MutexLock lock(&mu_);
    stop_watcher_ = true;
  }
  cv_.SignalAll();
  watcher_.join();
}

bool ChatRuns::Start(std::shared_ptr<http::SseStream> stream, std::string session_id,
                     std::function<void(ChatRun&)> body) {
  auto run = std::make_shared<ChatRun>(std::move(stream), std::move(session_id));
  absl::MutexLock lock(&mu_);
  if (closing_) {
    return false;
  }
  try {
    run->thread_ = std::thread([this, run, body = std::move(body)] {
      body(*run);
      run->stream().Close();
      {
        absl::MutexLock done_lock(&mu_);
        run->done_ = true;
      }
      cv_.SignalAll();
    });
  } catch (const std::system_error&) {
    return false;  // no thread could be started: the caller answers 503
  }
  runs_.push_back(std::move(run));
  cv_.SignalAll();
  return true;
}

bool ChatRuns::Abort(std::string_view session_id) {
  if (session_id.empty()) {
    return false;
  }
  absl::MutexLock lock(&mu_);
  bool found = false;
  for (const std::shared_ptr<ChatRun>& run : runs_) {
    if (!run->done_ && run->session_id() == session_id) {
      run->Cancel();
      found = true;
    }
  }
  return found;
}

bool ChatRuns::IsRunning(std::string_view session_id) const {
  absl::MutexLock lock(&mu_);
  for (const std::shared_ptr<ChatRun>& run : runs_) {
    if (!run->done_ && run->session_id() == session_id) {
      return true;
    }
  }
  return false;
}

std::size_t ChatRuns::active() const {
  absl::MutexLock lock(&mu_);
  std::size_t n = 0;
  for (const std::shared_ptr<ChatRun>& run : runs_) {
    n += run->done_ ? 0 : 1;
  }
  return n;
}

void ChatRuns::ReapLocked(std::vector<std::thread>& finished) {
  std::erase_if(runs_, [&](const std::shared_ptr<ChatRun>& run) {
    if (!run->done_) {
      return false;
    }
    finished.push_back(std::move(run->thread_));
    return true;
  });
}

bool ChatRuns::Shutdown(absl::Duration grace) {
  std::vector<std::thread> finished;
  bool all_ended = false;
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
    for (const std::shared_ptr<ChatRun>& run : runs_) {
      run->Cancel();
    }
    const auto all_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const std::shared_ptr<ChatRun>& run : runs_) {
        if (!run->done_) {
          return false;
        }
      }
      return true;
    };
    // absl::InfiniteFuture() for an unbounded grace: then only all_done() ends the wait.
    const absl::Time deadline = absl::Now() + grace;
    while (!all_done() && !cv_.WaitWithDeadline(&mu_, deadline)) {
    }
    all_ended = all_done();
    ReapLocked(finished);
  }
  for (std::thread& t : finished) {
    t.join();
  }
  return all_ended;
}

void ChatRuns::Watch() {
  mu_.Lock();
  while (!stop_watcher_) {
    std::vector<std::thread> finished;
    ReapLocked(finished);
    if (!finished.empty()) {
      mu_.Unlock();
      for (std::thread& t : finished) {
        t.join();
      }
      mu_.Lock();
      continue;
    }
    if (runs_.empty()) {
      while (!stop_watcher_ && runs_.empty()) {
        cv_.Wait(&mu_);
      }
      continue;
    }
    // A client that went away shows as a cancelled stream; the loop reads only its own flag.
    for (const std::shared_ptr<ChatRun>& run : runs_) {
      if (!run->done_ && run->stream().cancelled()) {
        run->Cancel();
      }
    }
    cv_.WaitWithTimeout(&mu_, kCancelPollInterval);
  }
  mu_.Unlock();
}

void ChatEventSink::Emit(const core::LoopEvent& event) {
  if (event.type == core::LoopEventType::kSession) {
    absl::StatusOr<rapidjson::Document> data = core::ParseJson(event.data_json);
    if (data.ok() && data->IsObject()) {
      const std::string_view id = core::GetString(*data, "id").value_or("");
      if (!id.empty()) {
        run_.set_session_id(std::string(id));
      }
    }
  }
  if (event.type == core::LoopEventType::kDone) {
    saw_done_ = true;
  }
  metrics_.Observe(event);
  // The type is a closed wire name and data_json one JSON object: no escaping needed.
  run_.stream().Send(absl::StrCat(R"({"type":")", std::string(core::ToString(event.type)),
                                  R"(","data":)", event.data_json, "}"));
}

void ChatEventSink::EmitEngineFailure(std::string_view reason, std::string_view message) {
  core::JsonWriter error;
  error.StartObject();
  error.Member("code", core::kErrorCodeEngineError);
  error.Member("reason", reason);
  error.Member("message", message);
  error.EndObject();
  Emit(core::LoopEvent{core::LoopEventType::kError, error.Take()});
  core::JsonWriter done;
  done.StartObject();
  done.Member("session_id", run_.session_id());
  done.Member("outcome", core::kOutcomeFailed);
  done.EndObject();
  Emit(core::LoopEvent{core::LoopEventType::kDone, done.Take()});
}

}  // namespace pulse::server
