// Fuzzes the kept transport's reply reader (adapters/http_client/src/reply_reader.h: Beast's
// response parser with the 1xx, bare status line and transfer-coding rules around it) on hostile
// replies: byte 0 picks HEAD or GET and the caps, byte 1 the piece size the reply arrives in,
// byte 2 whether the connection then closes or breaks; the rest is the reply. Invariants: no
// crash; the head is handed on at most once, with a final status of 200-999 and a reason of at
// most 512 bytes; a whole reply handed its head on; the body stays under its cap and never
// follows a HEAD; a failure carries an ErrorKind; and reading the reply in pieces ends as
// reading it whole does, with the same head, and the same reply when it is read whole (only
// bytes beyond it, which the pieces may not have reached, can leave the connection usable).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "src/exchange_state.h"
#include "src/reply_reader.h"

namespace {

using pulse::http_client::ClientOptions;
using pulse::http_client::ErrorKindOf;
using pulse::http_client::ExchangeState;
using pulse::http_client::ReplyReader;
using pulse::http_client::ResponseHead;

struct Outcome {
  ReplyReader::Progress progress = ReplyReader::Progress::kMore;
  int heads = 0;
  int status = 0;
  std::string body;
  bool reusable = false;
  std::string failure;

  bool operator==(const Outcome&) const = default;
};

Outcome Read(const ClientOptions& options, bool head_only, std::string_view reply,
             std::size_t piece, bool reset) {
  Outcome out;
  // Named: ExchangeState keeps references to them.
  const auto on_head = [&out](const ResponseHead& head) {
    ++out.heads;
    out.status = head.status;
    PULSE_FUZZ_CHECK(head.status >= 200 && head.status <= 999, "a final status is handed on");
    PULSE_FUZZ_CHECK(head.reason.size() <= 512, "the reason is bounded");
    return true;
  };
  const auto on_body = [&out](std::string_view bytes) {
    out.body.append(bytes);
    return true;
  };
  ExchangeState state(options, on_head, on_body, nullptr);
  ReplyReader reader(state, head_only);
  for (std::size_t at = 0; at < reply.size() && out.progress == ReplyReader::Progress::kMore;
       at += piece) {
    const std::string_view chunk = reply.substr(at, piece);
    auto [space, room] = reader.Space();
    PULSE_FUZZ_CHECK(room >= chunk.size(), "Space() has room for a read");
    std::memcpy(space, chunk.data(), chunk.size());
    out.progress = reader.Added(chunk.size());
  }
  if (out.progress == ReplyReader::Progress::kMore) {
    out.progress = reader.End(reset);
    PULSE_FUZZ_CHECK(out.progress != ReplyReader::Progress::kMore, "the end decides");
  }
  if (out.progress == ReplyReader::Progress::kDone) {
    out.reusable = reader.reusable();
    PULSE_FUZZ_CHECK(out.heads == 1, "a whole reply handed its head on");
  } else {
    const absl::Status failure = reader.failure();
    PULSE_FUZZ_CHECK(!failure.ok(), "a failure says why");
    PULSE_FUZZ_CHECK(ErrorKindOf(failure).has_value(), "a failure has an ErrorKind");
    out.failure = failure.ToString();
  }
  PULSE_FUZZ_CHECK(out.heads <= 1, "one head at most");
  PULSE_FUZZ_CHECK(options.max_body_bytes == 0 || out.body.size() <= options.max_body_bytes,
                   "the body cap holds");
  PULSE_FUZZ_CHECK(!head_only || out.body.empty(), "no body after a HEAD");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pulse::fuzz::Input input(data, size);
  const std::uint8_t mode = input.Byte();
  const std::size_t piece = 1 + input.Byte() % 23;
  const bool reset = (input.Byte() & 1) != 0;
  ClientOptions options;
  options.max_header_bytes = (mode & 2) != 0 ? 256 : std::size_t{64} << 10;
  options.max_body_bytes = (mode & 4) != 0 ? 16 : 0;
  const bool head_only = (mode & 1) != 0;
  const std::string_view reply = input.Rest();
  const Outcome whole = Read(options, head_only, reply, reply.size() + 1, reset);
  const Outcome pieces = Read(options, head_only, reply, piece, reset);
  PULSE_FUZZ_CHECK(whole.progress == pieces.progress, "pieces end as the whole does");
  PULSE_FUZZ_CHECK(whole.heads == pieces.heads && whole.status == pieces.status,
                   "pieces hand on the head the whole does");
  if (whole.progress == ReplyReader::Progress::kDone) {
    // Bytes after the reply make the connection unusable, but the pieces may end before them
    // (the transport then finds them on the idle connection before using it again).
    PULSE_FUZZ_CHECK(!whole.reusable || pieces.reusable, "pieces see no more than the whole");
    Outcome same = pieces;
    same.reusable = whole.reusable;
    PULSE_FUZZ_CHECK(whole == same, "pieces read as the whole");
  } else {
    // A failure can come at different points: over the body cap, the pieces before the one that
    // crossed it were handed on (more of them when they are smaller); a malformed reply that is
    // also cut short reads as malformed or as cut, depending on where Beast could tell.
    const std::string_view shorter =
        whole.body.size() <= pieces.body.size() ? whole.body : pieces.body;
    const std::string_view longer =
        whole.body.size() <= pieces.body.size() ? pieces.body : whole.body;
    PULSE_FUZZ_CHECK(longer.substr(0, shorter.size()) == shorter, "the same body bytes");
  }
  return 0;
}
