// ChatRuns: the Assistant runs in flight (chat, resume, question answers). A run never works on
// the HTTP worker that accepted it: it waits in a bounded queue for one of a bounded pool of
// run workers (ChatRunsOptions; pulse-server's --run-workers and --run-queue, docs/server.md),
// then streams its events to an SSE stream through ChatEventSink. Workers are started on
// demand up to the bound and leave after idle_worker_exit without work, so an idle server
// holds none. A run over the queue bound is refused (Start answers ResourceExhausted) and
// changes nothing.
// A run is cancelled (RunRequest::cancelled, checked by the loop and by the provider
// transport) when its client goes away (the stream's cancellation is propagated by a watcher
// every kCancelPollInterval), when POST /api/ai/sessions/{id}/abort names its session, or
// when the server shuts down; the loop then ends it with `error` and `done`. A run cancelled
// while it waits never starts: it leaves the queue at once and its stream gets `error`
// RUN_CANCELLED and `done` (outcome failed) from its `never_started` callback. Shutdown
// refuses new runs, ends the queued ones that way, cancels the rest and waits for them.
// Thread-safe. The destructor shuts down (unbounded wait) and joins every thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/adapters/server/server_config.h"
#include "pulse/adapters/server/server_metrics.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/ports/event_sink.h"

namespace pulse::server {

inline constexpr absl::Duration kCancelPollInterval = absl::Milliseconds(100);

struct ChatRunsOptions {
  std::size_t workers = kDefaultRunWorkers;  // runs working at once (at least 1)
  std::size_t queue = kDefaultRunQueue;      // runs waiting for a worker beyond those (may be 0)
  // A worker with nothing to do for this long leaves (another is started when work comes).
  absl::Duration idle_worker_exit = absl::Seconds(30);
};

// One run, queued or in flight.
class ChatRun {
 public:
  explicit ChatRun(std::shared_ptr<adapters::http::SseStream> stream, std::string session_id)
      : stream_(std::move(stream)), session_id_(std::move(session_id)) {}

  const std::shared_ptr<std::atomic<bool>>& cancel_flag() const { return cancel_; }
  adapters::http::SseStream& stream() const { return *stream_; }
  void Cancel() { cancel_->store(true, std::memory_order_release); }
  bool cancelled() const { return cancel_->load(std::memory_order_acquire); }

  std::string session_id() const;
  // The session the run turned out to work on (a new chat learns it from `session`).
  void set_session_id(std::string id);

 private:
  friend class ChatRuns;
  enum class State { kQueued, kRunning, kDone };

  const std::shared_ptr<adapters::http::SseStream> stream_;
  const std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  mutable absl::Mutex mu_;
  std::string session_id_ ABSL_GUARDED_BY(mu_);
  // Guarded by ChatRuns::mu_ (which the annotations cannot name from here).
  State state_ = State::kQueued;
  std::function<void(ChatRun&)> body_;
  std::function<void(ChatRun&)> never_started_;
};

class ChatRuns {
 public:
  explicit ChatRuns(ChatRunsOptions options = {});
  ~ChatRuns();
  ChatRuns(const ChatRuns&) = delete;
  ChatRuns& operator=(const ChatRuns&) = delete;

  // Queues a run streaming to `stream`, known as `session_id` ("" for a chat that has no
  // session yet): a worker runs `body`, or `never_started` instead when the run was cancelled
  // before a worker took it (it should end the stream's transcript: `error` and `done`). The
  // stream is closed when either returns. Nothing is queued when this fails:
  // ResourceExhausted when `options.queue` runs already wait; Unavailable once Shutdown began
  // or when no worker thread can be started.
  absl::Status Start(std::shared_ptr<adapters::http::SseStream> stream, std::string session_id,
                     std::function<void(ChatRun&)> body,
                     std::function<void(ChatRun&)> never_started = {});

  // Cancels the run (queued or working) on `session_id` in this process; a queued one ends at
  // once. False when there is none.
  bool Abort(std::string_view session_id);
  // True while a run on `session_id` is queued or working.
  bool IsRunning(std::string_view session_id) const;
  struct Stats {
    std::size_t working = 0;
    std::size_t queued = 0;
    std::size_t workers = 0;  // threads alive
  };
  Stats stats() const;          // one consistent reading
  std::size_t active() const;   // queued + working
  std::size_t queued() const;   // waiting for a worker
  std::size_t workers() const;  // worker threads alive now (at most options.workers)
  const ChatRunsOptions& options() const { return options_; }

  // Refuses new runs, ends the queued ones (never_started), cancels every other run and waits
  // up to `grace` for all of them to end. True when they all ended (the workers are joined);
  // false when some are still running (call again to wait more).
  bool Shutdown(absl::Duration grace);

 private:
  void Watch() ABSL_LOCKS_EXCLUDED(mu_);
  void Work(std::uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);
  void RetireLocked(std::uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts a worker thread; false when none can be started.
  bool SpawnWorkerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the queued runs that are cancelled (or every queued run) out of the queue.
  std::vector<std::shared_ptr<ChatRun>> TakeQueuedLocked(bool all)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends runs taken from the queue: never_started, close the stream, mark them done.
  void EndUnstarted(const std::vector<std::shared_ptr<ChatRun>>& runs) ABSL_LOCKS_EXCLUDED(mu_);
  void MarkDoneLocked(ChatRun& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReapLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::thread> TakeRetiredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ChatRunsOptions options_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;       // a run ended, a run was added, a worker retired
  absl::CondVar work_cv_;  // a run was queued, or the workers are to stop
  std::vector<std::shared_ptr<ChatRun>> runs_ ABSL_GUARDED_BY(mu_);  // not yet reaped
  std::deque<std::shared_ptr<ChatRun>> queue_ ABSL_GUARDED_BY(mu_);
  std::map<std::uint64_t, std::thread> workers_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> retired_ ABSL_GUARDED_BY(mu_);  // exited (or exiting) workers
  std::uint64_t next_worker_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t idle_workers_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;  // runs queued or working
  bool closing_ ABSL_GUARDED_BY(mu_) = false;       // no new runs
  bool stop_workers_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_watcher_ ABSL_GUARDED_BY(mu_) = false;
  std::thread watcher_;
};

// The EventSink of one run: frames each event as `data: {"type":...,"data":...}` on the run's
// stream, follows the metrics, and learns the session id from `session`. A stream that is gone
// drops the frames (the transcript is persisted independently).
class ChatEventSink final : public core::EventSink {
 public:
  ChatEventSink(ChatRun& run, ServerMetrics& metrics, TokenBaseline baseline = {})
      : run_(run), metrics_(metrics, baseline) {}

  void Emit(const core::LoopEvent& event) override;

  // True once `done` went out (the loop always ends with it).
  bool saw_done() const { return saw_done_; }
  // Emits `error` {code, reason, message} and `done` {outcome: failed} itself: for a run the
  // engine could not even start streaming (never after saw_done()).
  void EmitEngineFailure(std::string_view reason, std::string_view message);
  // The same with code RUN_CANCELLED and reason `cancelled`: for a run cancelled while it
  // waited for a worker (it never reached the loop, so its session is as it was).
  void EmitCancelledBeforeStart();

 private:
  void EmitFailure(std::string_view code, std::string_view reason, std::string_view message);

  ChatRun& run_;
  RunMetrics metrics_;
  bool saw_done_ = false;
};

}  // namespace pulse::server
