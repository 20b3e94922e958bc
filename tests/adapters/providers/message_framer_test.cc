#include "pulse/adapters/providers/message_framer.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "pulse/core/model/llm_types.h"

namespace pulse::adapters::providers {
namespace {

using Message = std::pair<std::string, std::string>;  // event, data

struct Framed {
  absl::Status status;
  std::vector<Message> messages;
};

// Feeds `pieces` in order, then Finish.
Framed Frame(MessageFramer& framer, const std::vector<std::string>& pieces) {
  Framed out;
  auto on_message = [&out](std::string_view event, std::string_view data) {
    out.messages.emplace_back(std::string(event), std::string(data));
    return true;
  };
  for (const std::string& piece : pieces) {
    out.status = framer.Feed(piece, on_message);
    if (!out.status.ok()) {
      return out;
    }
  }
  out.status = framer.Finish(on_message);
  return out;
}

Framed FrameSse(const std::vector<std::string>& pieces, std::size_t max = kDefaultMaxMessageBytes) {
  SseParser parser(max);
  return Frame(parser, pieces);
}

Framed FrameNdjson(const std::vector<std::string>& pieces,
                   std::size_t max = kDefaultMaxMessageBytes) {
  NdjsonSplitter splitter(max);
  return Frame(splitter, pieces);
}

// The SSE rules in one body: comments, an event name, multi-line data, a field without a
// colon, a value without the optional space, id/retry fields, an empty data line, and all
// three line ends.
constexpr std::string_view kSseBody =
    ": keep-alive comment\n"
    "event: message_start\n"
    "data: {\"a\":1}\n"
    "\n"
    "data: line one\r\n"
    "data:line two\r\n"
    "id: 7\r\n"
    "retry: 100\r\n"
    "\r\n"
    "event: ping\rdata\r\r"
    "data: third\n"
    "unknown: field\n"
    "\n";

std::vector<Message> SseMessages() {
  return {
      {"message_start", "{\"a\":1}"},
      {"", "line one\nline two"},
      {"ping", ""},
      {"", "third"},
  };
}

TEST_CASE("SSE parser follows the event-stream rules", "[adapters][providers][framing]") {
  const Framed framed = FrameSse({std::string(kSseBody)});
  REQUIRE(framed.status.ok());
  CHECK(framed.messages == SseMessages());
}

TEST_CASE("SSE parser yields the same messages for a split at every byte",
          "[adapters][providers][framing]") {
  for (std::size_t split = 0; split <= kSseBody.size(); ++split) {
    const Framed framed =
        FrameSse({std::string(kSseBody.substr(0, split)), std::string(kSseBody.substr(split))});
    INFO("split at " << split);
    REQUIRE(framed.status.ok());
    REQUIRE(framed.messages == SseMessages());
  }
  std::vector<std::string> bytes;
  for (char c : kSseBody) {
    bytes.emplace_back(1, c);
  }
  const Framed one_by_one = FrameSse(bytes);
  REQUIRE(one_by_one.status.ok());
  CHECK(one_by_one.messages == SseMessages());
}

TEST_CASE("SSE parser treats CR then LF in separate pieces as one line end",
          "[adapters][providers][framing]") {
  // A CR at the end of a piece ends the line; the LF that follows must not end another
  // (which would dispatch the message early as a blank line).
  const Framed framed = FrameSse({"data: a\r", "\ndata: b\r", "\n\r", "\n"});
  REQUIRE(framed.status.ok());
  CHECK(framed.messages == std::vector<Message>{{"", "a\nb"}});
}

TEST_CASE("SSE parser strips a leading byte-order mark, even split",
          "[adapters][providers][framing]") {
  const Framed framed = FrameSse({"\xEF", "\xBB\xBF", "data: x\n\n"});
  REQUIRE(framed.status.ok());
  CHECK(framed.messages == std::vector<Message>{{"", "x"}});
}

TEST_CASE("SSE parser drops a message the body never terminated",
          "[adapters][providers][framing]") {
  const Framed framed = FrameSse({"data: complete\n\ndata: cut"});
  REQUIRE(framed.status.ok());
  CHECK(framed.messages == std::vector<Message>{{"", "complete"}});
  const Framed no_blank_line = FrameSse({"data: {\"partial\":\n"});
  REQUIRE(no_blank_line.status.ok());
  CHECK(no_blank_line.messages.empty());
}

TEST_CASE("SSE parser fails closed on a line or message over the bound",
          "[adapters][providers][framing]") {
  SECTION("one long line, never terminated") {
    const Framed framed = FrameSse({"data: " + std::string(100, 'x')}, 64);
    CHECK(framed.status.code() == absl::StatusCode::kDataLoss);
  }
  SECTION("one long line, arriving in small pieces") {
    std::vector<std::string> pieces(20, std::string(8, 'y'));
    pieces.insert(pieces.begin(), "data: ");
    const Framed framed = FrameSse(pieces, 64);
    CHECK(framed.status.code() == absl::StatusCode::kDataLoss);
  }
  SECTION("many short data lines adding up") {
    std::string body;
    for (int i = 0; i < 20; ++i) {
      body += "data: 0123456789\n";
    }
    const Framed framed = FrameSse({body + "\n"}, 64);
    CHECK(framed.status.code() == absl::StatusCode::kDataLoss);
    CHECK(framed.messages.empty());
  }
  SECTION("at the bound is fine") {
    const std::string data(58, 'z');  // "data: " + 58 = 64 bytes of line, 58 of data
    const Framed framed = FrameSse({"data: " + data + "\n\n"}, 64);
    REQUIRE(framed.status.ok());
    CHECK(framed.messages == std::vector<Message>{{"", data}});
  }
}

TEST_CASE("SSE parser stops when the consumer says so and stays stopped",
          "[adapters][providers][framing]") {
  SseParser parser;
  std::vector<std::string> seen;
  auto on_message = [&seen](std::string_view, std::string_view data) {
    seen.emplace_back(data);
    return data != "[DONE]";
  };
  REQUIRE(parser.Feed("data: a\n\ndata: [DONE]\n\ndata: after\n\n", on_message).ok());
  REQUIRE(parser.Feed("data: later\n\n", on_message).ok());
  REQUIRE(parser.Finish(on_message).ok());
  CHECK(seen == std::vector<std::string>{"a", "[DONE]"});
}

TEST_CASE("NDJSON splitter yields one message per line at every split",
          "[adapters][providers][framing]") {
  const std::string body = "{\"a\":1}\n\n  \r\n{\"b\":\"two\"}\r\n{\"c\":3}";
  const std::vector<Message> expected = {
      {"", "{\"a\":1}"}, {"", "{\"b\":\"two\"}"}, {"", "{\"c\":3}"}};
  for (std::size_t split = 0; split <= body.size(); ++split) {
    const Framed framed = FrameNdjson({body.substr(0, split), body.substr(split)});
    INFO("split at " << split);
    REQUIRE(framed.status.ok());
    REQUIRE(framed.messages == expected);
  }
}

TEST_CASE("NDJSON splitter fails closed on a line over the bound",
          "[adapters][providers][framing]") {
  CHECK(FrameNdjson({std::string(65, 'x')}, 64).status.code() == absl::StatusCode::kDataLoss);
  CHECK(FrameNdjson({std::string(65, 'x') + "\n"}, 64).status.code() ==
        absl::StatusCode::kDataLoss);
  const Framed at_bound = FrameNdjson({std::string(64, 'x') + "\r\n"}, 64);
  REQUIRE(at_bound.status.ok());
  CHECK(at_bound.messages.size() == 1);
}

TEST_CASE("the framer for a framing is the matching parser", "[adapters][providers][framing]") {
  auto sse = NewMessageFramer(Framing::kServerSentEvents, 1024);
  auto ndjson = NewMessageFramer(Framing::kNdjson, 1024);
  CHECK(Frame(*sse, {"data: x\n\n"}).messages == std::vector<Message>{{"", "x"}});
  CHECK(Frame(*ndjson, {"data: x\n\n"}).messages == std::vector<Message>{{"", "data: x"}});
}

}  // namespace
}  // namespace pulse::adapters::providers
