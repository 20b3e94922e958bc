#include "pulse/adapters/mcp/line_reader.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace pulse::adapters::mcp {
namespace {

TEST_CASE("lines split across chunks are reassembled", "[adapters][mcp][framing]") {
  LineReader reader;
  std::vector<Line> lines;
  reader.Feed("{\"a\"", lines);
  CHECK(lines.empty());
  reader.Feed(":1}\n{\"b\":2}\r\n{\"c\"", lines);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].text == R"({"a":1})");
  CHECK(lines[1].text == R"({"b":2})");  // the \r of CRLF is dropped
  auto last = reader.Finish();
  REQUIRE(last.has_value());
  CHECK(last->text == R"({"c")");
  CHECK_FALSE(reader.Finish().has_value());
}

TEST_CASE("an oversized line is dropped while it streams in and reported once",
          "[adapters][mcp][framing]") {
  LineReader reader(16);
  std::vector<Line> lines;
  const std::string chunk(10, 'x');
  for (int i = 0; i < 100; ++i) {
    reader.Feed(chunk, lines);
    CHECK(reader.buffered() <= 16);  // never buffers beyond the bound
  }
  CHECK(lines.empty());
  reader.Feed("tail\nok\n", lines);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].oversized);
  CHECK(lines[0].text.empty());
  CHECK_FALSE(lines[1].oversized);
  CHECK(lines[1].text == "ok");
}

TEST_CASE("a line of exactly the bound is accepted, one byte more is not",
          "[adapters][mcp][framing]") {
  LineReader reader(8);
  std::vector<Line> lines;
  reader.Feed("12345678\n123456789\n", lines);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].text == "12345678");
  CHECK(lines[1].oversized);
}

TEST_CASE("an unterminated oversized tail is reported at end of input",
          "[adapters][mcp][framing]") {
  LineReader reader(4);
  std::vector<Line> lines;
  reader.Feed("abcdefgh", lines);
  auto last = reader.Finish();
  REQUIRE(last.has_value());
  CHECK(last->oversized);
}

}  // namespace
}  // namespace pulse::adapters::mcp
