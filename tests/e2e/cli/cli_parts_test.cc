// pulse-cli's parts without a server: what server text becomes on a terminal, the SSE parser
// on awkward framing, the exit-code rule for server replies, output JSON, and the chat view
// over a scripted event sequence, and the client's transport failures.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chat_view.h"
#include "cli_app.h"
#include "client.h"
#include "console.h"
#include "failure.h"
#include "help_examples.h"
#include "human_time.h"
#include "id_resolution.h"
#include "json_output.h"
#include "pulse/adapters/http_client/sse_parser.h"
#include "render.h"
#include "suggest.h"
#include "text_safety.h"

namespace pulse::cli {
namespace {

using http_client::SseEvent;
using http_client::SseParser;

struct Captured {
  std::string out;
  std::string err;
};

Console StringConsole(Captured& c, ConsoleTraits traits = {}) {
  ConsoleSinks sinks;
  sinks.out = [&c](std::string_view t) { c.out.append(t); };
  sinks.err = [&c](std::string_view t) { c.err.append(t); };
  return Console(std::move(sinks), traits);
}

TEST_CASE("SafeText shows control characters instead of passing them to the terminal",
          "[cli][text]") {
  CHECK(SafeText("plain text, ünïcode ✓") == "plain text, ünïcode ✓");
  CHECK(SafeText("\x1b[31mred\x1b[0m") == "^[[31mred^[[0m");
  CHECK(SafeText("title\x1b]0;owned\x07") == "title^[]0;owned^G");
  CHECK(SafeText("a\x7f" "b\x00" "c", true) == "a^?b");  // a C string ends at NUL
  CHECK(SafeText(std::string_view("a\0b", 3)) == "a^@b");
  CHECK(SafeText("csi \xc2\x9b" "31m") == "csi \xef\xbf\xbd" "31m");
  CHECK(SafeText("rtl \xe2\x80\xae" "txet") == "rtl \xef\xbf\xbd" "txet");
  CHECK(SafeText("bad \xff utf8") == "bad \xef\xbf\xbd utf8");
  CHECK(SafeText("line\r\nnext\roverwrite") == "line\nnext\noverwrite");
  CHECK(SafeText("one\ntwo\tthree", false) == "one two three");
}

TEST_CASE("SafeCell cuts long text on a character boundary", "[cli][text]") {
  CHECK(SafeCell("short", 10) == "short");
  CHECK(SafeCell("abcdefghij", 5) == "abcd…");
  CHECK(SafeCell("ääääää", 4) == "äää…");
  CHECK(DisplayWidth("ää✓") == 3);
}

TEST_CASE("Utf8Joiner holds back a character split across pieces", "[cli][text]") {
  Utf8Joiner j;
  CHECK(j.Take("caf\xc3") == "caf");
  CHECK(j.Take("\xa9 ok") == "\xc3\xa9 ok");
  CHECK(j.Take("\xe2\x9c") == "");
  CHECK(j.Take("\x93") == "\xe2\x9c\x93");
  CHECK(j.Take("\xe2") == "");
  CHECK(j.Flush() == "\xe2");
}

std::vector<SseEvent> ParseAll(SseParser& p, const std::vector<std::string>& pieces) {
  std::vector<SseEvent> events;
  for (const std::string& piece : pieces) {
    REQUIRE(p.Feed(piece, [&](const SseEvent& e) { events.push_back(e); }));
  }
  return events;
}

TEST_CASE("the SSE parser handles any split, line ending, comment and multi-line data",
          "[cli][sse]") {
  const std::string stream =
      ": heartbeat\n\ndata: {\"a\":1}\n\nevent: x\r\nid: 7\r\ndata: one\r\ndata: two\r\n\r\n"
      "data:nospace\r\rdata\n\nfield: ignored\n\n";
  // Every split point, byte by byte, gives the same events.
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    SseParser p;
    const std::vector<SseEvent> events =
        ParseAll(p, {stream.substr(0, cut), stream.substr(cut)});
    REQUIRE(events.size() == 4);
    CHECK(events[0].data == "{\"a\":1}");
    CHECK(events[1].event == "x");
    CHECK(events[1].id == "7");
    CHECK(events[1].data == "one\ntwo");
    CHECK(events[2].data == "nospace");
    CHECK(events[3].data.empty());
    CHECK_FALSE(p.HasPartialEvent());
  }
  SseParser partial;
  ParseAll(partial, {"data: cut off"});
  CHECK(partial.HasPartialEvent());
}

TEST_CASE("the SSE parser refuses a line or event over its limit", "[cli][sse]") {
  SseParser p(64);
  int n = 0;
  CHECK(p.Feed("data: small\n\n", [&](const SseEvent&) { ++n; }));
  CHECK_FALSE(p.Feed("data: " + std::string(100, 'x'), [&](const SseEvent&) { ++n; }));
  CHECK(p.overflowed());
  CHECK_FALSE(p.Feed("\n\n", [&](const SseEvent&) { ++n; }));
  CHECK(n == 1);
  SseParser many(64);
  std::string lines;
  for (int i = 0; i < 20; ++i) {
    lines += "data: 0123456789\n";
  }
  CHECK_FALSE(many.Feed(lines, [](const SseEvent&) {}));
}

TEST_CASE("server replies map to the documented exit codes", "[cli][exit]") {
  const auto exit_of = [](int status, const std::string& body) {
    return static_cast<int>(ReplyFailure(status, body, true).exit);
  };
  CHECK(exit_of(401, R"({"error":"unauthorized","message":"no"})") == 4);
  CHECK(exit_of(401, "<html>") == 4);
  CHECK(exit_of(403, R"({"error":"missing_scope","message":"no","requiredScope":"ai:chat"})") ==
        4);
  CHECK(exit_of(403, R"({"error":"action_approval_forbidden","message":"no"})") == 1);
  CHECK(exit_of(403, R"({"error":"action_separation_required","message":"no"})") == 1);
  CHECK(exit_of(409, R"({"error":"action_not_pending","message":"no"})") == 1);
  CHECK(exit_of(503, R"({"error":"assistant_not_configured","message":"no"})") == 1);
  CHECK(exit_of(502, "<h1>Bad Gateway</h1>") == 1);
  const Failure scope =
      ReplyFailure(403, R"({"error":"missing_scope","message":"no","requiredScope":"ai:chat"})",
                   true);
  CHECK(scope.code == "missing_scope");
  CHECK(scope.hint.find("ai:chat") != std::string::npos);
  CHECK(ReplyFailure(401, "", false).hint.find("PULSE_API_TOKEN") != std::string::npos);
  CHECK(ReplyFailure(502, "<h1>", true).code == "invalid_response");

  CHECK(TransportFailure(absl::UnavailableError("refused"), "http://x").exit ==
        ExitCode::kUnreachable);
  CHECK(TransportFailure(absl::DeadlineExceededError("slow"), "http://x").exit ==
        ExitCode::kUnreachable);
  CHECK(TransportFailure(absl::ResourceExhaustedError("big"), "http://x").exit ==
        ExitCode::kRefused);
  CHECK(TransportFailure(absl::CancelledError("ctrl-c"), "http://x").exit ==
        ExitCode::kInterrupted);
}

TEST_CASE("the client tells a refused server from an unknown host and refuses bad URLs",
          "[cli][client]") {
  ClientOptions refused_options;
  refused_options.base_url = "http://127.0.0.1:1";
  refused_options.timeout = absl::Seconds(2);
  auto refused = PulseClient::Open(refused_options);
  REQUIRE(refused.ok());
  const absl::Status not_listening = (*refused)->Send("GET", "/api/status", std::nullopt).status();
  CHECK(not_listening.code() == absl::StatusCode::kUnavailable);
  CHECK(not_listening.message() == "the connection was refused (nothing listens there)");
  CHECK(TransportFailure(not_listening, "http://127.0.0.1:1").message ==
        "cannot reach pulse-server at http://127.0.0.1:1: the connection was refused (nothing "
        "listens there)");

  ClientOptions unknown_options = refused_options;
  unknown_options.base_url = "http://pulse-cli-test.invalid:7655";
  auto unknown = PulseClient::Open(unknown_options);
  REQUIRE(unknown.ok());
  const absl::Status no_such_host = (*unknown)->Send("GET", "/api/status", std::nullopt).status();
  CHECK(no_such_host.code() == absl::StatusCode::kUnavailable);
  CHECK(no_such_host.message() == "the host name could not be resolved");

  for (const char* bad : {"127.0.0.1:7655", "ftp://x", "http://", "http://a b", "http://h?x",
                          "http://h:0", "http://u:p@h"}) {
    INFO(bad);
    ClientOptions options;
    options.base_url = bad;
    const absl::Status status = PulseClient::Open(options).status();
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(status.message()).rfind("--server ", 0) == 0);
  }
}

TEST_CASE("a failure is printed on stderr, and as the envelope on stdout with --json",
          "[cli][exit]") {
  Captured human;
  CHECK(Report(StringConsole(human),
               ReplyFailure(409, R"({"error":"action_not_pending","message":"too late"})",
                            true)) == 1);
  CHECK(human.out.empty());
  CHECK(human.err == "pulse-cli: action_not_pending: too late (HTTP 409)\n");
  Captured json;
  ConsoleTraits traits;
  traits.json = true;
  CHECK(Report(StringConsole(json, traits),
               ReplyFailure(409, R"({"error":"action_not_pending","message":"too late"})",
                            true)) == 1);
  CHECK(json.out == "{\"error\":\"action_not_pending\",\"message\":\"too late\"}\n");
  Captured local;
  Report(StringConsole(local, traits),
         LocalFailure(ExitCode::kUnreachable, kCodeServerUnreachable, "no \"route\""));
  CHECK(local.out == "{\"error\":\"server_unreachable\",\"message\":\"no \\\"route\\\"\"}\n");
}

TEST_CASE("output JSON is ASCII with every control and non-ASCII character escaped",
          "[cli][json]") {
  absl::StatusOr<rapidjson::Document> doc =
      ParseReplyJson("{\"t\":\"\\u001b[31m \xc3\xa9 \xff \xf0\x9f\x98\x80\"}");
  REQUIRE(doc.ok());
  CHECK(OutputJson(*doc) == "{\"t\":\"\\u001B[31m \\u00E9 \\uFFFD \\uD83D\\uDE00\"}");
  CHECK_FALSE(ParseReplyJson("{\"a\":").ok());
  CHECK_FALSE(ParseReplyJson(std::string(100, '[') + std::string(100, ']')).ok());
}

std::string Event(const std::string& type, const std::string& data) {
  return R"({"type":")" + type + R"(","data":)" + data + "}";
}

TEST_CASE("the chat view streams text, prints the approval card and the session",
          "[cli][chat]") {
  Captured c;
  ConsoleTraits traits;
  traits.progress = true;
  const Console console = StringConsole(c, traits);
  ChatView view(console);
  view.OnFrame(Event("session", R"({"id":"ses_1"})"));
  view.OnFrame(Event("tool_start", R"({"id":"t1","name":"pulse_control","input":"{}"})"));
  view.OnFrame(Event("tool_end", R"({"id":"t1","name":"pulse_control","output":"","success":true})"));
  view.OnFrame(Event("content", R"({"text":"I planned a restart."})"));
  view.OnFrame(Event("approval_needed",
                     R"({"action_id":"act_9","plan_hash":"sha256:abc","risk":"medium",)"
                     R"("capability":"restart","resource_id":"vm:105","preflight":)"
                     R"({"target":"vm:105","current_state":"running","intended_change":"reboot"},)"
                     R"("state":"pending_approval"})"));
  view.OnFrame(Event("done", R"({"session_id":"ses_1","outcome":"awaiting_approval"})"));
  CHECK(view.Finish(absl::OkStatus(), false, false) == 0);
  CHECK(c.out.rfind("I planned a restart.\n\nApproval needed\n", 0) == 0);
  CHECK(c.out.find("act_9") != std::string::npos);
  CHECK(c.out.find("sha256:abc") != std::string::npos);
  CHECK(c.out.find("reboot") != std::string::npos);
  CHECK(c.out.find("pulse-cli sessions resume ses_1") != std::string::npos);
  CHECK(c.err.find("→ pulse_control") != std::string::npos);
  CHECK(c.err.find("session ses_1") != std::string::npos);
}

TEST_CASE("the chat view's exit code follows how the run ended", "[cli][chat]") {
  Captured failed;
  const Console failed_console = StringConsole(failed);
  ChatView failing(failed_console);
  failing.OnFrame(Event("error", R"({"code":"PROVIDER_ERROR","reason":"provider_unavailable",)"
                                 R"("message":"model down"})"));
  failing.OnFrame(Event("done", R"({"session_id":"s","outcome":"failed"})"));
  CHECK(failing.Finish(absl::OkStatus(), false, false) == 1);
  CHECK(failed.err.find("PROVIDER_ERROR: model down (provider_unavailable)") != std::string::npos);

  Captured cut;
  const Console cut_console = StringConsole(cut);
  ChatView cutting(cut_console);
  cutting.OnFrame(Event("content", R"({"text":"half"})"));
  CHECK(cutting.Finish(absl::UnavailableError("reset"), false, false) == 3);
  CHECK(cut.out == "half\n");
  CHECK(cut.err.find("stream_incomplete") != std::string::npos);

  Captured stopped;
  const Console stopped_console = StringConsole(stopped);
  ChatView stopping(stopped_console);
  CHECK(stopping.Finish(absl::CancelledError("x"), true, false) == 130);
}

TEST_CASE("a session's refused claim is shown as a refused claim, never as the assistant's answer",
          "[cli][session]") {
  Captured c;
  const Console console = StringConsole(c);
  absl::StatusOr<rapidjson::Document> reply = ParseReplyJson(
      R"({"id":"ses_1","status":"idle","messages":[)"
      R"({"index":0,"role":"user","content":"restart web"},)"
      R"({"index":1,"role":"refused_claim","content":"web is fixed"},)"
      R"({"index":2,"role":"assistant","content":"web is running again"}]})");
  REQUIRE(reply.ok());
  RenderSession(console, *reply);
  CHECK(c.out.find("refused claim (unverified, not an answer): web is fixed") != std::string::npos);
  CHECK(c.out.find("assistant: web is running again") != std::string::npos);
  CHECK(c.out.find("assistant: web is fixed") == std::string::npos);
}

TEST_CASE("EditDistance counts insertions, deletions, substitutions and swaps as one edit each",
          "[cli][suggest]") {
  CHECK(EditDistance("", "") == 0);
  CHECK(EditDistance("findings", "findings") == 0);
  CHECK(EditDistance("findigns", "findings") == 1);  // a swap
  CHECK(EditDistance("fndings", "findings") == 1);
  CHECK(EditDistance("findingz", "findings") == 1);
  CHECK(EditDistance("", "ask") == 3);
  CHECK(EditDistance("ask", "") == 3);
  // Long input is bounded: compared on 64 bytes plus the difference in length.
  const std::string huge(100000, 'x');
  CHECK(EditDistance(huge, "ask") == 64 + (100000 - 64) - 0);
}

TEST_CASE("Closest suggests near words and prefixes, closest first, at most three",
          "[cli][suggest]") {
  const std::vector<std::string> commands = {"ask",    "findings",  "actions",  "capabilities",
                                             "fleet",  "agents",    "patrol",   "sessions",
                                             "answer", "status",    "completion"};
  CHECK(Closest("findigns", commands) == std::vector<std::string>{"findings"});
  CHECK(Closest("actoins", commands) == std::vector<std::string>{"actions"});
  CHECK(Closest("fl", commands) == std::vector<std::string>{"fleet"});
  CHECK(Closest("sess", commands) == std::vector<std::string>{"sessions"});
  CHECK(Closest("ak", commands) == std::vector<std::string>{"ask"});
  CHECK(Closest("agnets", commands) == std::vector<std::string>{"agents"});
  CHECK(Closest("zzzzzz", commands).empty());
  CHECK(Closest("", commands).empty());
  CHECK(Closest("findings", commands).empty());  // known: nothing to suggest
  CHECK(Closest("a", commands).empty());         // one letter is a prefix of too much to guess
  CHECK(Closest(std::string(100000, 'f'), commands).empty());
  CHECK(Closest("\xff\xfe", commands).empty());
  CHECK(Closest("s", {"s1", "s2", "s3", "s4"}).size() <= 3);
}

TEST_CASE("durations and times read as words, never as milliseconds or nanoseconds",
          "[cli][time]") {
  CHECK(HumanDuration(absl::Minutes(15)) == "15 min");
  CHECK(HumanDuration(absl::Seconds(90)) == "1 min 30 s");
  CHECK(HumanDuration(absl::Hours(1)) == "1 h");
  CHECK(HumanDuration(absl::Minutes(65)) == "1 h 5 min");
  CHECK(HumanDuration(absl::Hours(26)) == "1 d 2 h");
  CHECK(HumanDuration(absl::Milliseconds(900000)) == "15 min");
  CHECK(HumanDuration(absl::Milliseconds(400)) == "0 s");
  CHECK(HumanDuration(-absl::Seconds(45)) == "45 s");
  CHECK(HumanDuration(absl::InfiniteDuration()).find("d") != std::string::npos);

  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  CHECK(RelativeTime(now, now) == "just now");
  CHECK(RelativeTime(now - absl::Seconds(5), now) == "just now");
  CHECK(RelativeTime(now - absl::Minutes(3) - absl::Seconds(20), now) == "3 min ago");
  CHECK(RelativeTime(now + absl::Minutes(12), now) == "in 12 min");
  CHECK(RelativeTime(now - absl::Hours(2) - absl::Minutes(5), now) == "2 h 5 min ago");
  CHECK(RelativeTime(now - absl::Hours(50) - absl::Minutes(7), now) == "2 d 2 h ago");

  // The server's RFC 3339 text, with nanoseconds; anything else comes back as it was.
  const std::string at = absl::FormatTime(absl::RFC3339_full, now - absl::Minutes(3),
                                          absl::UTCTimeZone());
  CHECK(HumanTime(at, now, false) == "3 min ago");
  CHECK(HumanTime("2027-01-15T08:00:00.123456789Z", absl::FromUnixSeconds(1'800'000'000), true)
            .rfind("2027-01-15 08:00:00 UTC (", 0) == 0);
  CHECK(HumanTime("", now, true).empty());
  CHECK(HumanTime("yesterday", now, true) == "yesterday");
  CHECK(HumanTime("2026-13-45T99:99:99Z", now, false) == "2026-13-45T99:99:99Z");
  const std::string huge(100000, '9');
  CHECK(HumanTime(huge, now, false) == huge);
}

TEST_CASE("ids match exactly or by a unique prefix of at least four characters", "[cli][ids]") {
  using Outcome = IdMatch::Outcome;
  const std::vector<std::string> ids = {"act_1a2b3c", "act_1a2bff", "act_9f00aa", "0f8a9ace"};
  CHECK(MatchId("act_9f00aa", ids).outcome == Outcome::kExact);
  const IdMatch unique = MatchId("act_9", ids);
  CHECK(unique.outcome == Outcome::kUnique);
  CHECK(unique.id == "act_9f00aa");
  CHECK(MatchId("0f8a", ids).id == "0f8a9ace");
  const IdMatch both = MatchId("act_1a2b", ids);
  CHECK(both.outcome == Outcome::kAmbiguous);
  CHECK(both.candidates == std::vector<std::string>{"act_1a2b3c", "act_1a2bff"});
  CHECK(MatchId("0f8", ids).outcome == Outcome::kTooShort);
  CHECK(MatchId("zzzz", ids).outcome == Outcome::kNone);
  CHECK(MatchId("", ids).outcome == Outcome::kTooShort);
  CHECK(MatchId("x", {}).outcome == Outcome::kNone);
  CHECK(MatchId(std::string(100000, 'a'), ids).outcome == Outcome::kNone);
  // An exact id that is also the prefix of a longer one is the exact one.
  CHECK(MatchId("ab12", {"ab12", "ab123"}).outcome == Outcome::kExact);
  // Never more than ten candidates are listed.
  std::vector<std::string> many;
  for (int i = 0; i < 50; ++i) {
    many.push_back("sess-" + std::to_string(100 + i));
  }
  CHECK(MatchId("sess-1", many).candidates.size() == 10);
}

TEST_CASE("display width counts wide characters as two columns and combining marks as none",
          "[cli][text]") {
  CHECK(DisplayWidth("db-01") == 5);
  CHECK(DisplayWidth("\xE6\x95\xB0\xE6\x8D\xAE\xE5\xBA\x93") == 6);  // 数据库
  CHECK(DisplayWidth("\xF0\x9F\x9A\x80 up") == 5);                    // 🚀 up
  CHECK(DisplayWidth("e\xCC\x81") == 1);                                // e + U+0301
  CHECK(DisplayWidth("") == 0);
  // Cut by columns, never inside a wide character: 数据库 in 5 columns is 数据 and "…".
  CHECK(SafeCell("\xE6\x95\xB0\xE6\x8D\xAE\xE5\xBA\x93", 5) ==
        "\xE6\x95\xB0\xE6\x8D\xAE\xE2\x80\xA6");
  CHECK(SafeCell("\xE6\x95\xB0\xE6\x8D\xAE\xE5\xBA\x93", 4) == "\xE6\x95\xB0\xE2\x80\xA6");
  CHECK(DisplayWidth(SafeCell(std::string(1000, 'x'), 10)) == 10);
}

TEST_CASE("agents list host, state, version, last seen in words and resources",
          "[cli][agents]") {
  Captured c;
  const Console console = StringConsole(c);
  const std::string seen =
      absl::FormatTime(absl::RFC3339_sec, absl::Now() - absl::Minutes(3), absl::UTCTimeZone());
  absl::StatusOr<rapidjson::Document> reply = ParseReplyJson(
      R"({"agents":[)"
      R"({"host":"db1","token_id":"tok_00000000000000aa","agent_version":"0.4.0",)"
      R"("state":"stale","connected":false,"last_seen":")" +
      seen + R"(","last_report":")" + seen +
      R"(","report_seq":7,"resources":12},)"
      R"({"host":"web1","token_id":"tok_00000000000000bb","agent_version":"",)"
      R"("state":"pending","connected":false,"last_seen":null,"last_report":null,)"
      R"("report_seq":0,"resources":0},)"
      R"({"host":"evil\u001b[2Jhost","token_id":"tok_00000000000000cc","agent_version":"1",)"
      R"("state":"connected","connected":true,"last_seen":null,"last_report":null,)"
      R"("report_seq":1,"resources":3}],)"
      R"("stale_after_seconds":90})");
  REQUIRE(reply.ok());
  RenderAgents(console, *reply);
  std::vector<std::string> lines;
  std::istringstream in(c.out);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("HOST", 0) == 0);
  for (const char* header : {"STATE", "VERSION", "LAST SEEN", "RESOURCES"}) {
    CHECK(lines[0].find(header) != std::string::npos);
  }
  CHECK(lines[1].rfind("db1", 0) == 0);
  CHECK(lines[1].find("stale") != std::string::npos);
  CHECK(lines[1].find("0.4.0") != std::string::npos);
  CHECK(lines[1].find("3 min ago") != std::string::npos);
  CHECK(lines[1].find("12") != std::string::npos);
  // Never reported: no version and no time, shown as dashes, not as the epoch.
  CHECK(lines[2].rfind("web1", 0) == 0);
  CHECK(lines[2].find("pending") != std::string::npos);
  CHECK(lines[2].find("1970") == std::string::npos);
  CHECK(lines[2].find(" - ") != std::string::npos);
  // A hostile host name reaches the terminal without its escape sequence.
  CHECK(c.out.find('\x1b') == std::string::npos);
  CHECK(lines[3].find("connected") != std::string::npos);
  CHECK(lines[4] == "3 agents; stale after 1 min 30 s without a report");

  Captured empty;
  const Console empty_console = StringConsole(empty);
  absl::StatusOr<rapidjson::Document> none =
      ParseReplyJson(R"({"agents":[],"stale_after_seconds":90})");
  REQUIRE(none.ok());
  RenderAgents(empty_console, *none);
  CHECK(empty.out.rfind("No host agents yet.", 0) == 0);
  CHECK(empty.out.find("--kind agent --host") != std::string::npos);
}

TEST_CASE("tables line up with wide names and fit the terminal, ids kept whole", "[cli][text]") {
  Captured c;
  ConsoleTraits traits;
  traits.columns = 40;
  const Console console = StringConsole(c, traits);
  RenderTable(console, {"ID", "NAME", "TITLE"},
              {{Cell{"0f8a9acec3889a5f"}, Cell{"\xE6\x95\xB0\xE6\x8D\xAE\xE5\xBA\x93"},
                Cell{"High memory usage on the database server"}},
               {Cell{"e86d35344838f884"}, Cell{"db"}, Cell{"ok"}}});
  std::vector<std::string> lines;
  std::istringstream in(c.out);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  REQUIRE(lines.size() == 3);
  for (const std::string& line : lines) {
    CHECK(DisplayWidth(line) <= 40);
  }
  CHECK(lines[1].find("0f8a9acec3889a5f") != std::string::npos);  // the id is whole
  // The TITLE column starts at the same display column on every line.
  const auto column_of = [](const std::string& line, const std::string& text) {
    return DisplayWidth(line.substr(0, line.find(text)));
  };
  CHECK(column_of(lines[0], "TITLE") == column_of(lines[1], "High"));
  CHECK(column_of(lines[0], "TITLE") == column_of(lines[2], "ok"));
}


TEST_CASE("every command's help has examples, and they run that command", "[cli][help]") {
  const std::vector<std::string> paths = CommandPaths();
  REQUIRE(paths.size() > 30);
  CHECK(paths.front().empty());
  for (const std::string& path : paths) {
    INFO("command: pulse-cli " << path);
    const std::string examples(ExamplesFor(path));
    REQUIRE_FALSE(examples.empty());
    CHECK(examples.find(path.empty() ? "  pulse-cli " : "  pulse-cli " + path) !=
          std::string::npos);
  }
  CHECK(ExamplesFor("no such command").empty());
}

}  // namespace
}  // namespace pulse::cli
