// Fuzzes the MCP message reader: bytes from stdin through McpSession (the bounded LineReader,
// DecodeMessage, McpServer::HandleLine) over a scripted pulse-server (FakePulseCaller). The input
// is fed whole and again cut at fuzzer-chosen points. Invariants: every reply line is one
// JSON-RPC 2.0 response object (jsonrpc "2.0", an id, exactly one of result and error); the cut
// never changes the replies; a request with an id gets exactly one reply carrying that id, a
// line DecodeMessage refuses gets its error, notifications, responses and blank lines none.
// Input: byte 0 picks the fake's answer (bits 0-2), a small line bound (bit 3) and the cut
// count (bits 4-6); the next `count` bytes are cut positions; the rest is stdin.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fake_pulse_caller.h"
#include "fuzz_support.h"
#include "pulse/adapters/mcp/json_rpc.h"
#include "pulse/adapters/mcp/line_reader.h"
#include "pulse/adapters/mcp/mcp_server.h"
#include "pulse/adapters/mcp/mcp_session.h"
#include "pulse/adapters/mcp/tool_allowlist.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"

namespace {

namespace mcp = pulse::adapters::mcp;
namespace core = pulse::core;

const core::JsonLimits kReplyLimits{std::size_t{64} << 20, 128};

const mcp::McpSurface& Surface() {
  static const mcp::McpSurface surface = [] {
    absl::StatusOr<mcp::McpSurface> s = mcp::McpSurfaceFromManifest(core::ManifestJson());
    PULSE_FUZZ_CHECK(s.ok(), "the manifest gives no MCP surface");
    return *std::move(s);
  }();
  return surface;
}

// What the scripted pulse-server answers every call with.
void Script(pulse::testing::FakePulseCaller& caller, std::uint8_t pick) {
  switch (pick & 0x07) {
    case 0:
      caller.Answer(200, R"({"ok":true})");
      break;
    case 1:
      caller.Answer(404, R"({"error":"resource_not_found","message":"no such resource"})");
      break;
    case 2:
      caller.Answer(409, R"({"error":"approval_required","message":"m","details":{"a":1}})");
      break;
    case 3:
      caller.Answer(500, "not json at all");
      break;
    case 4:
      caller.Answer(200, "[1,2,3]");
      break;
    case 5:
      caller.Answer(503, "");
      break;
    case 6:
      caller.Answer(200, R"({"findings":[{"id":"f1","title":"\u00e9\ud83d\ude00"}],"count":1})");
      break;
    default:
      caller.SetHandler([](const mcp::PulseRequest&) {
        return absl::StatusOr<mcp::PulseReply>(absl::UnavailableError("connection refused"));
      });
      break;
  }
}

// Checks that `out` is reply lines and returns each parsed.
std::vector<rapidjson::Document> Replies(const std::string& out) {
  std::vector<rapidjson::Document> replies;
  PULSE_FUZZ_CHECK(out.empty() || out.back() == '\n', "output does not end a line");
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    absl::StatusOr<rapidjson::Document> doc =
        core::ParseJson(std::string_view(out).substr(start, end - start), kReplyLimits);
    PULSE_FUZZ_CHECK(doc.ok() && doc->IsObject(), "a reply line is not a JSON object");
    PULSE_FUZZ_CHECK(core::GetString(*doc, "jsonrpc") == std::optional<std::string_view>("2.0"),
                     "a reply without jsonrpc 2.0");
    PULSE_FUZZ_CHECK(doc->HasMember("id"), "a reply without an id");
    PULSE_FUZZ_CHECK(doc->HasMember("result") != doc->HasMember("error"),
                     "a reply needs exactly one of result and error");
    if (doc->HasMember("error")) {
      const rapidjson::Value& error = (*doc)["error"];
      PULSE_FUZZ_CHECK(error.IsObject() && error.HasMember("code") && error["code"].IsInt() &&
                           error.HasMember("message") && error["message"].IsString(),
                       "a malformed error object");
    }
    replies.push_back(*std::move(doc));
    start = end + 1;
  }
  return replies;
}

// One scripted pulse-server and one MCP server for the whole run: building a server renders
// the tools/list result, which costs more than most inputs. The server keeps no state that
// changes a reply (initialize records the agreed version only to report it).
struct Rig {
  pulse::testing::FakePulseCaller caller;
  mcp::McpServer server{caller, Surface(), "fuzz"};
};

Rig& TheRig(std::uint8_t pick) {
  static Rig rig;
  Script(rig.caller, pick);
  rig.caller.requests.clear();
  return rig;
}

std::string RunSession(std::uint8_t pick, std::size_t max_line_bytes,
                       const std::vector<std::string_view>& pieces) {
  mcp::McpSession session(TheRig(pick).server, max_line_bytes);
  std::string out;
  for (std::string_view piece : pieces) {
    out += session.Feed(piece);
    PULSE_FUZZ_CHECK(session.buffered() <= max_line_bytes, "the reader outgrew its bound");
  }
  out += session.Finish();
  return out;
}

// Line by line against DecodeMessage: who gets a reply, and with which id.
void CheckLines(std::uint8_t pick, std::size_t max_line_bytes, std::string_view input) {
  mcp::McpServer& server = TheRig(pick).server;
  mcp::LineReader reader(max_line_bytes);
  std::vector<mcp::Line> lines;
  reader.Feed(input, lines);
  if (std::optional<mcp::Line> last = reader.Finish()) {
    lines.push_back(*std::move(last));
  }
  for (const mcp::Line& line : lines) {
    PULSE_FUZZ_CHECK(line.text.size() <= max_line_bytes, "a line over the bound was kept");
    if (line.oversized) {
      PULSE_FUZZ_CHECK(line.text.empty(), "an oversized line kept its bytes");
      continue;
    }
    const mcp::DecodedMessage decoded = mcp::DecodeMessage(line.text);
    PULSE_FUZZ_CHECK(!(decoded.request.has_value() && decoded.error.has_value()),
                     "a line is both a request and an error");
    const std::optional<std::string> reply = server.HandleLine(line.text);
    if (!reply.has_value()) {
      PULSE_FUZZ_CHECK(
          !decoded.error.has_value() || line.text.find_first_not_of(" \t\r\n") == std::string::npos,
          "a refused line got no error reply");
      PULSE_FUZZ_CHECK(!decoded.request.has_value() || decoded.request->notification(),
                       "a request with an id got no reply");
      continue;
    }
    PULSE_FUZZ_CHECK(reply->find('\n') == std::string::npos, "a reply holds a raw newline");
    std::vector<rapidjson::Document> parsed = Replies(*reply + "\n");
    PULSE_FUZZ_CHECK(parsed.size() == 1, "one line, one reply");
    const rapidjson::Value& id = parsed[0]["id"];
    if (decoded.request.has_value()) {
      PULSE_FUZZ_CHECK(!decoded.request->notification(), "a notification was answered");
      absl::StatusOr<rapidjson::Document> want = core::ParseJson(*decoded.request->id_json);
      PULSE_FUZZ_CHECK(want.ok() && id == *want, "the reply carries another id");
    } else {
      PULSE_FUZZ_CHECK(decoded.error.has_value(), "a client response was answered");
      PULSE_FUZZ_CHECK(parsed[0].HasMember("error") &&
                           parsed[0]["error"]["code"].GetInt() == decoded.error->code,
                       "a refused line got another error");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pulse::fuzz::Input in(data, size);
  const std::uint8_t control = in.Byte();
  const std::size_t max_line_bytes = (control & 0x08) != 0 ? 48 : mcp::kMaxLineBytes;
  std::vector<std::size_t> offsets;
  const std::size_t cuts = (control >> 4) & 0x07;
  std::vector<std::uint8_t> positions;
  for (std::size_t i = 0; i < cuts; ++i) {
    positions.push_back(in.Byte());
  }
  const std::string input(in.Rest());
  const std::string_view all(input);
  for (std::uint8_t p : positions) {
    offsets.push_back(all.size() * p / 256);
  }
  std::sort(offsets.begin(), offsets.end());
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  for (std::size_t offset : offsets) {
    pieces.push_back(all.substr(start, offset - start));
    start = offset;
  }
  pieces.push_back(all.substr(start));

  const std::string whole = RunSession(control, max_line_bytes, {all});
  const std::string cut = RunSession(control, max_line_bytes, pieces);
  PULSE_FUZZ_CHECK(whole == cut, "cutting stdin changed the replies");
  static_cast<void>(Replies(whole));
  CheckLines(control, max_line_bytes, all);
  return 0;
}
