// The body of the four provider stream fuzzers (openai, ollama, anthropic, gemini): the input
// is a response body, fed the way StreamingProvider feeds one (streaming_provider.cc) through
// the protocol's framer (SSE or NDJSON) into its decoder — once whole, once cut at
// fuzzer-chosen points and, for short bodies, once a byte at a time. Invariants (wire_protocol.h,
// fail closed): messages yield content deltas only; tool calls, usage and the single finish
// come only from OnEnd, only when it succeeds, in that order, finish last; a response that
// releases tool calls finishes with kToolCalls; the cut never changes the events or the outcome.
// Input: byte 0 holds the cut count (low 3 bits) and a small-message-bound flag (bit 3); the
// next `count` bytes are cut positions; the rest is the body.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fuzz_support.h"
#include "pulse/adapters/providers/message_framer.h"
#include "pulse/adapters/providers/wire_protocol.h"
#include "pulse/core/model/llm_types.h"

namespace pulse::fuzz {

struct StreamRun {
  absl::Status status;
  std::vector<core::LlmStreamEvent> message_events;  // emitted by OnMessage
  std::vector<core::LlmStreamEvent> end_events;      // emitted by OnEnd
};

// Feeds `pieces` (one response body) as the streaming transport does.
inline StreamRun RunStream(const adapters::providers::WireProtocol& protocol,
                           std::size_t max_message_bytes,
                           const std::vector<std::string_view>& pieces) {
  using adapters::providers::EmitFn;
  StreamRun run;
  std::unique_ptr<adapters::providers::MessageFramer> framer =
      adapters::providers::NewMessageFramer(protocol.framing(), max_message_bytes);
  std::unique_ptr<adapters::providers::StreamDecoder> decoder = protocol.NewDecoder();
  absl::Status framing;
  absl::Status decoding;
  bool complete = false;
  auto on_message_event = [&run](const core::LlmStreamEvent& e) {
    run.message_events.push_back(e);
  };
  auto on_message = [&](std::string_view event, std::string_view data) {
    decoding = decoder->OnMessage(event, data, EmitFn(on_message_event));
    if (!decoding.ok()) {
      return false;
    }
    complete = decoder->Complete();
    return !complete;
  };
  for (std::string_view piece : pieces) {
    if (!framing.ok() || !decoding.ok() || complete) {
      break;
    }
    framing = framer->Feed(piece, on_message);
  }
  if (!framing.ok()) {
    run.status = framing;
    return run;
  }
  if (!decoding.ok()) {
    run.status = decoding;
    return run;
  }
  if (!complete) {
    framing = framer->Finish(on_message);
    if (!framing.ok()) {
      run.status = framing;
      return run;
    }
    if (!decoding.ok()) {
      run.status = decoding;
      return run;
    }
  }
  auto on_end_event = [&run](const core::LlmStreamEvent& e) { run.end_events.push_back(e); };
  run.status = decoder->OnEnd(EmitFn(on_end_event));
  return run;
}

inline void CheckRun(const StreamRun& run) {
  using Kind = core::LlmStreamEvent::Kind;
  for (const core::LlmStreamEvent& e : run.message_events) {
    PULSE_FUZZ_CHECK(e.kind == Kind::kContentDelta, "a message released more than content");
  }
  if (!run.status.ok()) {
    PULSE_FUZZ_CHECK(run.end_events.empty(), "a failed response delivered events at its end");
    return;
  }
  const auto& end = run.end_events;
  PULSE_FUZZ_CHECK(!end.empty() && end.back().kind == Kind::kFinish, "no finish last");
  std::size_t i = 0;
  std::size_t calls = 0;
  while (i < end.size() && end[i].kind == Kind::kToolCall) {
    PULSE_FUZZ_CHECK(!end[i].tool_call.name.empty(), "a tool call without a name");
    PULSE_FUZZ_CHECK(!end[i].tool_call.id.empty(), "a tool call without an id");
    PULSE_FUZZ_CHECK(end[i].tool_call.provider_state.size() <= core::kMaxProviderStateBytes,
                     "provider state over its bound");
    ++calls;
    ++i;
  }
  if (i < end.size() && end[i].kind == Kind::kUsage) {
    ++i;
  }
  PULSE_FUZZ_CHECK(i + 1 == end.size(), "end events out of order or repeated");
  const core::FinishReason finish = end.back().finish_reason;
  if (calls > 0) {
    PULSE_FUZZ_CHECK(finish == core::FinishReason::kToolCalls,
                     "tool calls released without a tool_calls finish");
  }
}

inline bool SameRun(const StreamRun& a, const StreamRun& b) {
  return a.status.code() == b.status.code() && a.message_events == b.message_events &&
         a.end_events == b.end_events;
}

inline int FuzzProviderStream(const adapters::providers::WireProtocol& protocol,
                              const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  const std::uint8_t control = in.Byte();
  const std::size_t cuts = control & 0x07;
  const std::size_t max_message_bytes =
      (control & 0x08) != 0 ? 64 : adapters::providers::kDefaultMaxMessageBytes;
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < cuts; ++i) {
    positions.push_back(in.Byte());
  }
  const std::string body(in.Rest());  // owned: pieces must not alias the fuzzer's buffer end
  const std::string_view all(body);

  const StreamRun whole = RunStream(protocol, max_message_bytes, {all});
  CheckRun(whole);

  // Cut positions scale over the body so that long bodies are cut too.
  std::vector<std::string_view> pieces;
  std::vector<std::size_t> offsets;
  for (std::size_t p : positions) {
    offsets.push_back(all.empty() ? 0 : p * all.size() / 256);
  }
  std::sort(offsets.begin(), offsets.end());
  std::size_t start = 0;
  for (std::size_t offset : offsets) {
    pieces.push_back(all.substr(start, offset - start));  // empty pieces are legal too
    start = offset;
  }
  pieces.push_back(all.substr(start));
  const StreamRun cut = RunStream(protocol, max_message_bytes, pieces);
  CheckRun(cut);
  PULSE_FUZZ_CHECK(SameRun(whole, cut), "cutting the body changed the outcome");

  if (all.size() <= 512) {
    std::vector<std::string_view> bytes;
    for (std::size_t i = 0; i < all.size(); ++i) {
      bytes.push_back(all.substr(i, 1));
    }
    const StreamRun bytewise = RunStream(protocol, max_message_bytes, bytes);
    PULSE_FUZZ_CHECK(SameRun(whole, bytewise), "a byte-at-a-time body decoded differently");
  }
  return 0;
}

}  // namespace pulse::fuzz
