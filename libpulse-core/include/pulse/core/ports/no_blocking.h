// NoBlockingScope: the contract between a thread that must not wait and the ports it calls.
//
// An HTTP event loop answers some reads itself instead of handing them to the handler pool and
// back (two thread wake-ups, about half of such a request's time; http_server.h,
// HttpServerOptions::loop_routes). Such a loop serves many connections, so it must never wait:
// not for a write lock, a disk flush, a busy connection pool or another system. While it runs a
// request it holds a NoBlockingScope. A port call that could wait calls RefuseIfNoBlocking()
// before it does anything: inside a scope that refuses with Unavailable and marks the scope
// refused. The scope's owner then throws away whatever the request produced and runs the whole
// request again on a thread that may wait, where the call goes ahead. So a refusal must come
// before any side effect of its call, and whatever ran before it in the request must have been
// reads, which the second run repeats.
//
// What checks (docs/server.md, "Reads answered on the event loop"): SQLite's write
// transactions and a read that would wait for a pooled connection (adapters/storage). A port
// whose reads may reach another system says so instead (Fleet::ListsFromMemory), and routes
// that read it are not answered on a loop.
// Thread-safety: the scope is per thread; a call checks only the scope of its own thread.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/string_view.h"

namespace pulse::core {

class NoBlockingScope {
 public:
  NoBlockingScope() : outer_(current_) { current_ = this; }
  ~NoBlockingScope() { current_ = outer_; }
  NoBlockingScope(const NoBlockingScope&) = delete;
  NoBlockingScope& operator=(const NoBlockingScope&) = delete;

  // Whether a call inside this scope refused to wait (so what the request produced is void).
  [[nodiscard]] bool refused() const { return refused_; }

  // The innermost scope of this thread, or nullptr when the thread may wait.
  [[nodiscard]] static NoBlockingScope* Current() { return current_; }

  // Marks this scope and every scope around it refused.
  void MarkRefused() {
    for (NoBlockingScope* scope = this; scope != nullptr; scope = scope->outer_) {
      scope->refused_ = true;
    }
  }

 private:
  static inline thread_local NoBlockingScope* current_ = nullptr;
  NoBlockingScope* const outer_;
  bool refused_ = false;
};

// OK when this thread may wait; else marks its scope refused and returns Unavailable naming
// `what` (the call that would have waited).
[[nodiscard]] inline absl::Status RefuseIfNoBlocking(std::string_view what) {
  NoBlockingScope* scope = NoBlockingScope::Current();
  if (scope == nullptr) {
    return absl::OkStatus();
  }
  scope->MarkRefused();
  return absl::UnavailableError(absl::StrCat(
      ToAbsl(what), " would wait on a thread that must not (it runs again elsewhere)"));
}

}  // namespace pulse::core
