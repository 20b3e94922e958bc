#include "pulse/adapters/server/chat_runs.h"

#include <algorithm>
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

ChatRuns::ChatRuns(ChatRunsOptions options)
    : options_([&options] {
        options.workers = std::max<std::size_t>(options.workers, 1);
        return options;
      }()),
      watcher_([this] { Watch(); }) {}

ChatRuns::~ChatRuns() {
  Shutdown(absl::InfiniteDuration());
  std::vector<std::thread> retired;
  {
    absl::MutexLock lock(&mu_);
    stop_watcher_ = true;
  }
  cv_.SignalAll();
  watcher_.join();
  {
    absl::MutexLock lock(&mu_);
    retired = TakeRetiredLocked();
  }
  for (std::thread& t : retired) {
    t.join();
  }
}

bool ChatRuns::SpawnWorkerLocked() {
  const std::uint64_t id = next_worker_id_++;
  try {
    workers_.emplace(id, std::thread([this, id] { Work(id); }));
  } catch (const std::system_error&) {
    return false;
  }
  return true;
}

void ChatRuns::RetireLocked(std::uint64_t id) {
  // The handle moves to retired_, joined by the watcher (or by Shutdown or the destructor);
  // Shutdown may have taken it already.
  auto it = workers_.find(id);
  if (it != workers_.end()) {
    retired_.push_back(std::move(it->second));
    workers_.erase(it);
  }
  cv_.SignalAll();
}

absl::Status ChatRuns::Start(std::shared_ptr<http::SseStream> stream, std::string session_id,
                             std::function<void(ChatRun&)> body,
                             std::function<void(ChatRun&)> never_started) {
  auto run = std::make_shared<ChatRun>(std::move(stream), std::move(session_id));
  run->body_ = std::move(body);
  run->never_started_ = std::move(never_started);
  absl::MutexLock lock(&mu_);
  if (closing_) {
    return absl::UnavailableError("the server is shutting down");
  }
  // Accepted runs are the ones working and the ones queued.
  if (in_flight_ >= options_.workers + options_.queue) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the ", options_.workers, " Assistant run workers are busy and ",
                     options_.queue, " runs already wait for one; retry later"));
  }
  queue_.push_back(run);
  if (queue_.size() > idle_workers_ && workers_.size() < options_.workers && !SpawnWorkerLocked() &&
      workers_.empty()) {
    queue_.pop_back();
    return absl::UnavailableError("no run worker can be started now");
  }
  runs_.push_back(std::move(run));
  ++in_flight_;
  work_cv_.Signal();
  cv_.SignalAll();
  return absl::OkStatus();
}

void ChatRuns::Work(std::uint64_t id) {
  absl::MutexLock lock(&mu_);
  for (;;) {
    while (queue_.empty() && !stop_workers_) {
      ++idle_workers_;
      const bool timed_out = work_cv_.WaitWithTimeout(&mu_, options_.idle_worker_exit);
      --idle_workers_;
      if (timed_out && queue_.empty() && !stop_workers_) {
        break;  // idle too long: another is started when work comes
      }
    }
    if (queue_.empty()) {
      RetireLocked(id);  // under the same lock, so Start never counts a leaving worker
      return;
    }
    std::shared_ptr<ChatRun> run = std::move(queue_.front());
    queue_.pop_front();
    run->state_ = ChatRun::State::kRunning;
    std::function<void(ChatRun&)> work =
        run->cancelled() ? std::move(run->never_started_) : std::move(run->body_);
    run->body_ = nullptr;
    run->never_started_ = nullptr;
    mu_.Unlock();
    if (work) {
      work(*run);
    }
    run->stream().Close();
    work = nullptr;  // what the body captured goes before the run is reported done
    mu_.Lock();
    MarkDoneLocked(*run);
  }
}

void ChatRuns::MarkDoneLocked(ChatRun& run) {
  run.state_ = ChatRun::State::kDone;
  --in_flight_;
  cv_.SignalAll();
}

std::vector<std::shared_ptr<ChatRun>> ChatRuns::TakeQueuedLocked(bool all) {
  std::vector<std::shared_ptr<ChatRun>> taken;
  std::erase_if(queue_, [&](std::shared_ptr<ChatRun>& run) {
    if (!all && !run->cancelled()) {
      return false;
    }
    run->state_ = ChatRun::State::kRunning;  // being ended by whoever took it
    taken.push_back(std::move(run));
    return true;
  });
  return taken;
}

void ChatRuns::EndUnstarted(const std::vector<std::shared_ptr<ChatRun>>& runs) {
  for (const std::shared_ptr<ChatRun>& run : runs) {
    std::function<void(ChatRun&)> never_started;
    {
      absl::MutexLock lock(&mu_);
      never_started = std::move(run->never_started_);
      run->never_started_ = nullptr;
      run->body_ = nullptr;
    }
    if (never_started) {
      never_started(*run);
    }
    run->stream().Close();
    never_started = nullptr;
    absl::MutexLock lock(&mu_);
    MarkDoneLocked(*run);
  }
}

bool ChatRuns::Abort(std::string_view session_id) {
  if (session_id.empty()) {
    return false;
  }
  std::vector<std::shared_ptr<ChatRun>> unstarted;
  bool found = false;
  {
    absl::MutexLock lock(&mu_);
    for (const std::shared_ptr<ChatRun>& run : runs_) {
      if (run->state_ != ChatRun::State::kDone && run->session_id() == session_id) {
        run->Cancel();
        found = true;
      }
    }
    unstarted = TakeQueuedLocked(/*all=*/false);
  }
  EndUnstarted(unstarted);
  return found;
}

bool ChatRuns::IsRunning(std::string_view session_id) const {
  absl::MutexLock lock(&mu_);
  for (const std::shared_ptr<ChatRun>& run : runs_) {
    if (run->state_ != ChatRun::State::kDone && run->session_id() == session_id) {
      return true;
    }
  }
  return false;
}

std::size_t ChatRuns::active() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

ChatRuns::Stats ChatRuns::stats() const {
  absl::MutexLock lock(&mu_);
  return Stats{in_flight_ - queue_.size(), queue_.size(), workers_.size()};
}

std::size_t ChatRuns::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

std::size_t ChatRuns::workers() const {
  absl::MutexLock lock(&mu_);
  return workers_.size();
}

void ChatRuns::ReapLocked() {
  std::erase_if(runs_, [](const std::shared_ptr<ChatRun>& run) {
    return run->state_ == ChatRun::State::kDone;
  });
}

std::vector<std::thread> ChatRuns::TakeRetiredLocked() {
  std::vector<std::thread> retired = std::move(retired_);
  retired_.clear();
  return retired;
}

bool ChatRuns::Shutdown(absl::Duration grace) {
  std::vector<std::shared_ptr<ChatRun>> unstarted;
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
    for (const std::shared_ptr<ChatRun>& run : runs_) {
      run->Cancel();
    }
    unstarted = TakeQueuedLocked(/*all=*/true);
  }
  EndUnstarted(unstarted);
  std::vector<std::thread> threads;
  bool all_ended = false;
  {
    absl::MutexLock lock(&mu_);
    const auto all_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return std::all_of(runs_.begin(), runs_.end(), [](const std::shared_ptr<ChatRun>& run) {
        return run->state_ == ChatRun::State::kDone;
      });
    };
    // absl::InfiniteFuture() for an unbounded grace: then only all_done() ends the wait.
    const absl::Time deadline = absl::Now() + grace;
    while (!all_done() && !cv_.WaitWithDeadline(&mu_, deadline)) {
    }
    all_ended = all_done();
    ReapLocked();
    if (all_ended) {
      // Nothing is queued or working: every worker leaves, and is joined here.
      stop_workers_ = true;
      work_cv_.SignalAll();
      for (auto& [id, thread] : workers_) {
        threads.push_back(std::move(thread));
      }
      workers_.clear();
    }
    for (std::thread& t : TakeRetiredLocked()) {
      threads.push_back(std::move(t));
    }
  }
  for (std::thread& t : threads) {
    t.join();
  }
  return all_ended;
}

void ChatRuns::Watch() {
  mu_.Lock();
  while (!stop_watcher_) {
    ReapLocked();
    std::vector<std::thread> retired = TakeRetiredLocked();
    if (!retired.empty()) {
      mu_.Unlock();
      for (std::thread& t : retired) {
        t.join();
      }
      mu_.Lock();
      continue;
    }
    if (runs_.empty()) {
      while (!stop_watcher_ && runs_.empty() && retired_.empty()) {
        cv_.Wait(&mu_);
      }
      continue;
    }
    // A client that went away shows as a cancelled stream; the loop reads only its own flag.
    for (const std::shared_ptr<ChatRun>& run : runs_) {
      if (run->state_ != ChatRun::State::kDone && run->stream().cancelled()) {
        run->Cancel();
      }
    }
    // A queued run whose client went away (or that was aborted) leaves the queue at once.
    std::vector<std::shared_ptr<ChatRun>> unstarted = TakeQueuedLocked(/*all=*/false);
    if (!unstarted.empty()) {
      mu_.Unlock();
      EndUnstarted(unstarted);
      mu_.Lock();
      continue;
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
  EmitFailure(core::kErrorCodeEngineError, reason, message);
}

void ChatEventSink::EmitCancelledBeforeStart() {
  EmitFailure(core::kErrorCodeCancelled, core::kReasonCancelled,
              "The run was cancelled while it waited for a run worker; it never started.");
}

void ChatEventSink::EmitFailure(std::string_view code, std::string_view reason,
                                std::string_view message) {
  core::JsonWriter error;
  error.StartObject();
  error.Member("code", code);
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
