// LogDemuxer: the multiplexed log stream of the Engine API (8-byte frame headers) into bounded
// lines — frames split anywhere, broken headers, cut streams, TTY streams and timestamps.
#include "pulse/adapters/docker/log_demux.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

namespace pulse::docker {
namespace {

std::string Frame(int stream, std::string_view payload) {
  std::string out;
  out.push_back(static_cast<char>(stream));
  out.append(3, '\0');
  const auto n = static_cast<std::uint32_t>(payload.size());
  out.push_back(static_cast<char>((n >> 24) & 0xff));
  out.push_back(static_cast<char>((n >> 16) & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  out.push_back(static_cast<char>(n & 0xff));
  out.append(payload);
  return out;
}

TEST_CASE("log frames are demultiplexed into stdout and stderr lines", "[docker][logs]") {
  const std::string body = Frame(1, "hello\n") + Frame(2, "oops\n") + Frame(1, "bye\n");
  LogDemuxer demuxer({});
  REQUIRE(demuxer.Feed(body).ok());
  REQUIRE(demuxer.Finish().ok());
  const auto& lines = demuxer.lines();
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].stream == LogStream::kStdout);
  CHECK(lines[0].text == "hello");
  CHECK(lines[1].stream == LogStream::kStderr);
  CHECK(lines[1].text == "oops");
  CHECK(lines[2].text == "bye");
  CHECK_FALSE(demuxer.Full());
}

TEST_CASE("frames split at every byte boundary give the same lines", "[docker][logs]") {
  const std::string body = Frame(1, "a line\nand a half") + Frame(2, "err\n") +
                           Frame(1, " more\n") + Frame(1, "") + Frame(2, "tail");
  for (std::size_t piece = 1; piece <= 9; ++piece) {
    LogDemuxer demuxer({});
    for (std::size_t i = 0; i < body.size(); i += piece) {
      REQUIRE(demuxer.Feed(std::string_view(body).substr(i, piece)).ok());
    }
    REQUIRE(demuxer.Finish().ok());
    const auto& lines = demuxer.lines();
    REQUIRE(lines.size() == 4);
    CHECK(lines[0].text == "a line");
    CHECK(lines[1].text == "err");
    CHECK(lines[1].stream == LogStream::kStderr);
    // A line continued over two frames of one stream is one line.
    CHECK(lines[2].text == "and a half more");
    CHECK(lines[3].text == "tail");  // the unterminated last line is kept at the end
  }
}

TEST_CASE("a frame header naming an unknown stream is a broken stream", "[docker][logs]") {
  LogDemuxer demuxer({});
  REQUIRE(demuxer.Feed(Frame(1, "fine\n")).ok());
  std::string bad = Frame(7, "x\n");
  const absl::Status status = demuxer.Feed(bad);
  CHECK(status.code() == absl::StatusCode::kDataLoss);
  CHECK(demuxer.Feed(Frame(1, "later\n")).code() == absl::StatusCode::kDataLoss);
  CHECK(demuxer.Finish().code() == absl::StatusCode::kDataLoss);
  REQUIRE(demuxer.lines().size() == 1);
}

TEST_CASE("non-zero padding in a frame header is a broken stream", "[docker][logs]") {
  std::string bad = Frame(1, "x\n");
  bad[2] = 'Z';
  LogDemuxer demuxer({});
  CHECK(demuxer.Feed(bad).code() == absl::StatusCode::kDataLoss);
  // Plain text where frames were expected (a TTY stream read as framed) is refused too.
  LogDemuxer text({});
  CHECK(text.Feed("hello world\n").code() == absl::StatusCode::kDataLoss);
}

TEST_CASE("a stream cut inside a header or a payload keeps the lines and reports the cut",
          "[docker][logs]") {
  const std::string whole = Frame(1, "one\n") + Frame(1, "two is long\n");
  for (const std::size_t cut : {whole.size() - 3, std::size_t{14}}) {
    LogDemuxer demuxer({});
    REQUIRE(demuxer.Feed(whole.substr(0, cut)).ok());
    CHECK(demuxer.Finish().code() == absl::StatusCode::kDataLoss);
    REQUIRE_FALSE(demuxer.lines().empty());
    CHECK(demuxer.lines()[0].text == "one");
  }
}

TEST_CASE("a huge announced frame length is streamed, never allocated", "[docker][logs]") {
  std::string header = Frame(1, "");
  header[4] = header[5] = header[6] = header[7] = static_cast<char>(0xff);
  LogDemuxOptions options;
  options.max_bytes = 1000;
  LogDemuxer demuxer(options);
  REQUIRE(demuxer.Feed(header).ok());
  REQUIRE(demuxer.Feed(std::string(600, 'a') + "\n" + std::string(600, 'b')).ok());
  CHECK(demuxer.Full());
  CHECK(demuxer.Finish().ok());  // a bound reached is not a cut stream
  REQUIRE(demuxer.lines().size() == 1);
  CHECK(demuxer.lines()[0].text.size() == 600);
}

TEST_CASE("lines are bounded in count, length and total bytes", "[docker][logs]") {
  LogDemuxOptions options;
  options.max_lines = 3;
  options.max_line_bytes = 5;
  LogDemuxer demuxer(options);
  std::string body;
  for (int i = 0; i < 10; ++i) {
    body += Frame(1, "0123456789\n");
  }
  REQUIRE(demuxer.Feed(body).ok());
  CHECK(demuxer.Full());
  REQUIRE(demuxer.lines().size() == 3);
  CHECK(demuxer.lines()[0].text == "01234");
  CHECK(demuxer.lines()[0].truncated);
}

TEST_CASE("a TTY stream is raw stdout without frame headers", "[docker][logs]") {
  LogDemuxOptions options;
  options.tty = true;
  LogDemuxer demuxer(options);
  REQUIRE(demuxer.Feed("line one\r\nline").ok());
  REQUIRE(demuxer.Feed(" two\n\x01\x00 raw").ok());
  REQUIRE(demuxer.Finish().ok());
  REQUIRE(demuxer.lines().size() == 3);
  CHECK(demuxer.lines()[0].text == "line one");  // the TTY's \r is dropped
  CHECK(demuxer.lines()[1].text == "line two");
  CHECK(demuxer.lines()[2].stream == LogStream::kStdout);
}

TEST_CASE("timestamps are split off each line, and a line without one keeps its text",
          "[docker][logs]") {
  LogDemuxOptions options;
  options.timestamps = true;
  LogDemuxer demuxer(options);
  REQUIRE(demuxer
              .Feed(Frame(1, "2026-12-02T01:17:15.040885716Z tick\n") +
                    Frame(2, "not-a-time boom\n") + Frame(1, "2026-12-02T01:17:16Z\n"))
              .ok());
  REQUIRE(demuxer.Finish().ok());
  const auto& lines = demuxer.lines();
  REQUIRE(lines.size() == 3);
  REQUIRE(lines[0].time.has_value());
  CHECK(absl::ToUnixSeconds(*lines[0].time) == 1796174235);
  CHECK(lines[0].text == "tick");
  CHECK_FALSE(lines[1].time.has_value());
  CHECK(lines[1].text == "not-a-time boom");
  CHECK(lines[2].time.has_value());
  CHECK(lines[2].text.empty());
}

TEST_CASE("stream names are stable", "[docker][logs]") {
  CHECK(LogStreamName(LogStream::kStdin) == "stdin");
  CHECK(LogStreamName(LogStream::kStdout) == "stdout");
  CHECK(LogStreamName(LogStream::kStderr) == "stderr");
}

}  // namespace
}  // namespace pulse::docker
