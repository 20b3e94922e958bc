// Helpers for the vendor protocol tests: JSON comparison that ignores member order, a driver
// that feeds a decoder one framed message at a time the way the transport does (stop at the
// first error or once Complete(), then OnEnd), and accessors over the events it delivered.
// Header-only; each test binary has its own copy.
#pragma once

#include <catch2/catch.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "pulse/adapters/providers/wire_protocol.h"
#include "pulse/core/json/json.h"
#include "pulse/core/model/llm_types.h"

namespace pulse::testing::providers {

// `json` in canonical form (members sorted at every level), so two documents compare equal
// exactly when they are the same JSON value; the text of a failed REQUIRE then shows both.
inline std::string Canonical(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json);
  INFO("not JSON: " << json);
  REQUIRE(doc.ok());
  return core::CanonicalJson(*doc);
}

// One framed message as the transport hands it over.
struct Framed {
  std::string event;
  std::string data;
};

inline Framed Data(std::string data) { return Framed{"", std::move(data)}; }

struct Decoded {
  std::vector<core::LlmStreamEvent> events;
  // Events delivered before OnEnd was called: content only, in a fail-closed decoder.
  std::size_t before_end = 0;
  bool complete = false;  // Complete() when the driver stopped feeding
  bool ended = false;     // OnEnd was called
  absl::Status status;    // the first error, from OnMessage or OnEnd

  std::string Text() const {
    std::string text;
    for (const core::LlmStreamEvent& e : events) {
      if (e.kind == core::LlmStreamEvent::Kind::kContentDelta) {
        text += e.text;
      }
    }
    return text;
  }
  std::vector<core::ToolCall> Calls() const {
    std::vector<core::ToolCall> calls;
    for (const core::LlmStreamEvent& e : events) {
      if (e.kind == core::LlmStreamEvent::Kind::kToolCall) {
        calls.push_back(e.tool_call);
      }
    }
    return calls;
  }
  std::optional<core::TokenUsage> Usage() const {
    std::optional<core::TokenUsage> usage;
    for (const core::LlmStreamEvent& e : events) {
      if (e.kind == core::LlmStreamEvent::Kind::kUsage) {
        usage = e.usage;
      }
    }
    return usage;
  }
  // The finish reason when exactly one kFinish was delivered and it came last.
  std::optional<core::FinishReason> Finish() const {
    std::size_t finishes = 0;
    for (const core::LlmStreamEvent& e : events) {
      finishes += e.kind == core::LlmStreamEvent::Kind::kFinish ? 1 : 0;
    }
    if (finishes != 1 || events.back().kind != core::LlmStreamEvent::Kind::kFinish) {
      return std::nullopt;
    }
    return events.back().finish_reason;
  }
  std::size_t Count(core::LlmStreamEvent::Kind kind) const {
    std::size_t n = 0;
    for (const core::LlmStreamEvent& e : events) {
      n += e.kind == kind ? 1 : 0;
    }
    return n;
  }
};

// Drives `decoder` like the transport: messages in order until an error or Complete(), then
// OnEnd unless a message failed.
inline Decoded Drive(adapters::providers::StreamDecoder& decoder,
                     const std::vector<Framed>& messages) {
  Decoded out;
  auto emit = [&out](const core::LlmStreamEvent& e) { out.events.push_back(e); };
  for (const Framed& m : messages) {
    out.status = decoder.OnMessage(m.event, m.data, emit);
    if (!out.status.ok()) {
      out.before_end = out.events.size();
      return out;
    }
    if (decoder.Complete()) {
      out.complete = true;
      break;
    }
  }
  out.before_end = out.events.size();
  out.ended = true;
  out.status = decoder.OnEnd(emit);
  return out;
}

// True when the status is the fail-closed "stream broke or ended early" kind.
inline bool IsIncomplete(const absl::Status& status) {
  return core::ClassifyLlmError(status) == core::LlmErrorKind::kIncompleteStream;
}

}  // namespace pulse::testing::providers
