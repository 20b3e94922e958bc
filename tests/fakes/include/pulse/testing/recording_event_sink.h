// RecordingEventSink: an EventSink that keeps every event, with helpers to read the stream the
// way a client would (types in order, payloads parsed as JSON). Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "pulse/core/json/json.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/ports/event_sink.h"
#include "rapidjson/document.h"

namespace pulse::testing {

class RecordingEventSink final : public core::EventSink {
 public:
  void Emit(const core::LoopEvent& event) override {
    absl::MutexLock lock(&mu_);
    events_.push_back(event);
  }

  std::vector<core::LoopEvent> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  // Wire types in order, e.g. {"session", "workflow_state", "content", "done"}.
  std::vector<std::string> Types() const {
    std::vector<std::string> out;
    for (const core::LoopEvent& e : events()) {
      out.emplace_back(core::ToString(e.type));
    }
    return out;
  }
  std::size_t Count(core::LoopEventType type) const {
    std::size_t n = 0;
    for (const core::LoopEvent& e : events()) {
      n += e.type == type ? 1 : 0;
    }
    return n;
  }
  // Parsed payloads of every event of `type`, in order (a malformed payload parses as null).
  std::vector<rapidjson::Document> DataOf(core::LoopEventType type) const {
    std::vector<rapidjson::Document> out;
    for (const core::LoopEvent& e : events()) {
      if (e.type == type) {
        auto doc = core::ParseJson(e.data_json);
        out.push_back(doc.ok() ? std::move(doc).value() : rapidjson::Document());
      }
    }
    return out;
  }
  // The concatenated text of every content event.
  std::string ContentText() const {
    std::string text;
    for (const rapidjson::Document& d : DataOf(core::LoopEventType::kContent)) {
      if (auto t = core::GetString(d, "text")) {
        text += std::string(*t);
      }
    }
    return text;
  }
  void Clear() {
    absl::MutexLock lock(&mu_);
    events_.clear();
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<core::LoopEvent> events_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
