// EventSink: where a run's stream events go (the chat SSE stream, a CLI printer, a test
// recorder). Events arrive in the order the loop guarantees (loop/loop_event.h), ending with
// exactly one `done`.
// Thread-safety: the loop calls Emit only from the thread running the session's turn, never
// concurrently for one run; a sink shared between runs must synchronize itself.
// Emit cannot fail: a sink whose client went away drops events (the transcript is persisted
// independently), so a slow or gone consumer never changes what the loop decides.
#pragma once

#include "pulse/core/model/loop_event.h"

namespace pulse::core {

class EventSink {
 public:
  virtual ~EventSink() = default;

  // Delivers one event. Must not block for long: the run waits for it.
  virtual void Emit(const LoopEvent& event) = 0;
};

}  // namespace pulse::core
