// Fuzzes the Docker log demultiplexer (adapters/docker/log_demux.h) on hostile streams: byte 0
// picks TTY / timestamps and the bounds, byte 1 the piece size the body arrives in, the rest is
// the body. Invariants: no crash, the bounds hold (lines, line length, total bytes), and feeding
// the body in pieces gives exactly the lines and the outcome of feeding it whole.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "pulse/adapters/docker/log_demux.h"

namespace {

using pulse::docker::LogDemuxer;
using pulse::docker::LogDemuxOptions;
using pulse::docker::LogLine;

struct Outcome {
  bool feed_ok = true;
  bool finish_ok = true;
};

Outcome Run(LogDemuxer& demuxer, std::string_view body, std::size_t piece) {
  Outcome out;
  for (std::size_t i = 0; i < body.size() && out.feed_ok; i += piece) {
    out.feed_ok = demuxer.Feed(body.substr(i, piece)).ok();
  }
  out.finish_ok = demuxer.Finish().ok();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pulse::fuzz::Input input(data, size);
  const std::uint8_t mode = input.Byte();
  const std::size_t piece = 1 + input.Byte() % 17;
  LogDemuxOptions options;
  options.tty = (mode & 1) != 0;
  options.timestamps = (mode & 2) != 0;
  options.max_lines = 1 + ((mode >> 2) & 7) * 4;
  options.max_line_bytes = 1 + ((mode >> 5) & 7) * 12;
  options.max_bytes = 64 + (mode & 0x30) * 16;
  const std::string_view body = input.Rest();

  LogDemuxer whole(options);
  const Outcome a = Run(whole, body, body.empty() ? 1 : body.size());
  LogDemuxer pieces(options);
  const Outcome b = Run(pieces, body, piece);

  PULSE_FUZZ_CHECK(a.feed_ok == b.feed_ok, "piece size changed the feed outcome");
  PULSE_FUZZ_CHECK(a.finish_ok == b.finish_ok, "piece size changed the finish outcome");
  PULSE_FUZZ_CHECK(whole.Full() == pieces.Full(), "piece size changed the bound outcome");
  PULSE_FUZZ_CHECK(whole.lines().size() == pieces.lines().size(), "piece size changed lines");
  PULSE_FUZZ_CHECK(whole.lines().size() <= options.max_lines, "more lines than the bound");
  std::size_t total = 0;
  for (std::size_t i = 0; i < whole.lines().size(); ++i) {
    const LogLine& x = whole.lines()[i];
    const LogLine& y = pieces.lines()[i];
    PULSE_FUZZ_CHECK(
        x.text == y.text && x.stream == y.stream && x.time == y.time && x.truncated == y.truncated,
        "piece size changed a line");
    PULSE_FUZZ_CHECK(x.text.size() <= options.max_line_bytes, "a line over its bound");
    total += x.text.size();
  }
  PULSE_FUZZ_CHECK(total <= options.max_bytes, "more text than the byte bound");
  PULSE_FUZZ_CHECK(!options.tty || a.feed_ok, "a TTY stream cannot be broken");
  return 0;
}
