// The host agent protocol's codec (adapters/hostagent/wire.h): what a server accepts from an
// agent, and an agent from a server, decides what either end may do, so every decoder is fed
// the messages a hostile or broken peer would send and must refuse them whole, naming the place.
#include "pulse/adapters/hostagent/wire.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "catch2/catch.hpp"
#include "fmt/format.h"

namespace pulse::adapters::hostagent {
namespace {

Report SampleReport() {
  Report r;
  r.host = "web1";
  r.agent_version = "0.4.0";
  r.sent_at = absl::FromUnixSeconds(1'790'000'000);
  r.interval_seconds = 30;
  core::FleetResource node;
  node.id = "node:web1";
  node.type = "node";
  node.name = "web1";
  node.status = "online";
  node.technology = "linux";
  node.attributes = {{"os", "Debian GNU/Linux 12"}, {"kernel", "6.1.0"}};
  core::FleetResource svc;
  svc.id = "service:web1/nginx";
  svc.type = "service";
  svc.name = "nginx.service";
  svc.status = "running";
  svc.technology = "systemd";
  svc.parent_id = "node:web1";
  svc.revision = "12345";
  r.resources = {node, svc};
  r.relationships = {{"service:web1/nginx", "node:web1", "runs_on"}};
  r.statuses = {{"node:web1", "online", "web1 is online", {{"cpu_pct", "3.5"}}}};
  r.metrics = {{"node:web1", "cpu", "percent", 3.5}, {"node:web1", "memory", "percent", 41.25}};
  r.capabilities = {{"service:web1/nginx", {"restart", "start", "stop"}}};
  return r;
}

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return text;
}

void RequireRefused(const absl::StatusOr<Report>& decoded, std::string_view words) {
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(decoded.status().message()), Catch::Contains(std::string(words)));
}

TEST_CASE("a report survives its round trip exactly") {
  const Report report = SampleReport();
  const absl::StatusOr<Report> back = DecodeReport(EncodeReport(report));
  REQUIRE(back.ok());
  CHECK(*back == report);

  Report answer = report;
  answer.in_reply_to = "cmd_00112233aabbccdd";
  const absl::StatusOr<Report> back2 = DecodeReport(EncodeReport(answer));
  REQUIRE(back2.ok());
  CHECK(back2->in_reply_to == "cmd_00112233aabbccdd");
}

TEST_CASE("a report may describe only its own host's resources") {
  const std::string good = EncodeReport(SampleReport());
  // Another host's node, service, or a bare id with no host segment (a Docker container as a
  // local source names it) are all refused whole: a token bound to web1 must never describe db1.
  RequireRefused(DecodeReport(absl::StrReplaceAll(
                     good, {{"\"id\":\"node:web1\"", "\"id\":\"node:db1\""},
                            {"\"parent_id\":\"node:web1\"", "\"parent_id\":\"node:db1\""},
                            {"\"to\":\"node:web1\"", "\"to\":\"node:db1\""},
                            {"\"resource_id\":\"node:web1\"", "\"resource_id\":\"node:db1\""}})),
                 "another host");
  RequireRefused(DecodeReport(Replace(good, "\"id\":\"service:web1/nginx\"",
                                      "\"id\":\"service:web10/nginx\"")),
                 "another host");
  RequireRefused(
      DecodeReport(Replace(good, "\"id\":\"service:web1/nginx\"", "\"id\":\"service:nginx\"")),
      "another host");
  CHECK_FALSE(ResourceBelongsToHost("app-container:nginx", "web1"));
  // A prefix of the host is not the host.
  CHECK_FALSE(ResourceBelongsToHost("node:web", "web1"));
  CHECK_FALSE(ResourceBelongsToHost("service:web1", "web1"));
  CHECK_FALSE(ResourceBelongsToHost("service:web1/", "web1"));
  CHECK(ResourceBelongsToHost("storage:web1/var/lib", "web1"));
  CHECK_FALSE(ResourceBelongsToHost("storage:web1//x", "web1"));
  CHECK_FALSE(ResourceBelongsToHost("node:web1", "-web1"));
}

TEST_CASE("a report's references must name resources of the same report") {
  const std::string good = EncodeReport(SampleReport());
  RequireRefused(
      DecodeReport(Replace(good, "\"parent_id\":\"node:web1\"", "\"parent_id\":\"node:web1x\"")),
      "resources[1].parent_id");
  RequireRefused(DecodeReport(Replace(good, "\"from\":\"service:web1/nginx\"",
                                      "\"from\":\"service:web1/ghost\"")),
                 "relationships[0]");
  RequireRefused(DecodeReport(Replace(good, "{\"resource_id\":\"service:web1/nginx\",\"names\"",
                                      "{\"resource_id\":\"service:web1/ghost\",\"names\"")),
                 "capabilities[0]");
  Report twice = SampleReport();
  twice.resources.push_back(twice.resources[1]);
  RequireRefused(DecodeReport(EncodeReport(twice)), "repeats an id");
  Report wrong_type = SampleReport();
  wrong_type.resources[1].type = "vm";
  RequireRefused(DecodeReport(EncodeReport(wrong_type)), "type of its id");
}

TEST_CASE("a malformed report is refused whole and named") {
  const std::string good = EncodeReport(SampleReport());
  RequireRefused(DecodeReport(""), "report");
  RequireRefused(DecodeReport("[]"), "must be a JSON object");
  RequireRefused(DecodeReport("{\"protocol\":1"), "report");
  RequireRefused(DecodeReport(Replace(good, "\"protocol\":1", "\"protocol\":2")), "protocol");
  RequireRefused(
      DecodeReport(Replace(good, "\"host\":\"web1\"", "\"host\":\"web1\",\"host\":\"web1\"")),
      "duplicate");
  RequireRefused(
      DecodeReport(Replace(good, "\"host\":\"web1\"", "\"host\":\"web1\",\"admin\":true")),
      "unknown member");
  RequireRefused(DecodeReport(Replace(good, "\"host\":\"web1\"", "\"host\":\"../etc\"")), "host");
  RequireRefused(DecodeReport(Replace(good, "\"host\":\"web1\"", "\"host\":\"\"")), "host");
  RequireRefused(DecodeReport(Replace(good, "\"interval_seconds\":30", "\"interval_seconds\":0")),
                 "interval_seconds");
  RequireRefused(DecodeReport(Replace(good, "\"sent_at\":\"", "\"sent_at\":\"yesterday")),
                 "sent_at");
  RequireRefused(DecodeReport(Replace(good, "\"name\":\"web1\"", "\"name\":\"web1\\u001b[2J\"")),
                 "name");
  RequireRefused(DecodeReport(Replace(good, "\"os\":\"Debian", "\"os\":7,\"x\":\"Debian")),
                 "string values");
  RequireRefused(DecodeReport(Replace(good, "\"value\":3.5", "\"value\":\"3.5\"")), "value");
  RequireRefused(DecodeReport(Replace(good, "\"names\":[\"restart\"", "\"names\":[\"rm -rf\"")),
                 "capability names");
  RequireRefused(DecodeReport(Replace(good, "\"interval_seconds\"",
                                      "\"in_reply_to\":\"cmd_x\",\"interval_seconds\"")),
                 "in_reply_to");
}

TEST_CASE("a report over its bounds is refused, not truncated") {
  Report big = SampleReport();
  big.resources.resize(1);
  big.relationships.clear();
  big.statuses.clear();
  big.metrics.clear();
  big.capabilities.clear();
  for (std::size_t i = 0; i < kMaxReportResources; ++i) {
    core::FleetResource s;
    s.id = fmt::format("service:web1/u{}", i);
    s.type = "service";
    s.name = s.id;
    s.status = "running";
    big.resources.push_back(s);
  }
  RequireRefused(DecodeReport(EncodeReport(big)), "more than 2000 items");

  Report attrs = SampleReport();
  for (std::size_t i = 0; i <= kMaxMapEntries; ++i) {
    attrs.resources[0].attributes[fmt::format("k{}", i)] = "v";
  }
  RequireRefused(DecodeReport(EncodeReport(attrs)), "more than 64 members");

  Report long_text = SampleReport();
  long_text.resources[0].attributes["os"] = std::string(kMaxTextBytes + 1, 'x');
  RequireRefused(DecodeReport(EncodeReport(long_text)), "longer than");

  RequireRefused(DecodeReport(std::string(kMaxMessageBytes + 1, ' ')), "larger than");
  // Deep nesting is refused by the parser before any member is read.
  RequireRefused(DecodeReport(std::string(100, '[') + std::string(100, ']')), "report");
}

Command SampleDispatch() {
  Command c;
  c.command_id = "cmd_0123456789abcdef";
  c.kind = CommandKind::kDispatch;
  c.issued_at = absl::FromUnixSeconds(1'790'000'000);
  c.deadline = c.issued_at + absl::Seconds(60);
  c.action_id = "act_1";
  c.attempt_id = "act_1.dispatch.1";
  c.plan_hash = "sha256:abc";
  c.resource_id = "service:web1/nginx";
  c.capability = "restart";
  c.params_json = R"({"reason":"x"})";
  return c;
}

TEST_CASE("commands of every kind survive their round trip") {
  const Command dispatch = SampleDispatch();
  const absl::StatusOr<Command> back = DecodeCommand(EncodeCommand(dispatch));
  REQUIRE(back.ok());
  CHECK(*back == dispatch);

  Command exec;
  exec.command_id = "cmd_ffffffffffffffff";
  exec.kind = CommandKind::kExec;
  exec.issued_at = absl::FromUnixSeconds(1'790'000'000);
  exec.deadline = exec.issued_at + absl::Seconds(10);
  exec.resource_id = "node:web1";
  exec.exec_command = "df -h";
  const absl::StatusOr<Command> back_exec = DecodeCommand(EncodeCommand(exec));
  REQUIRE(back_exec.ok());
  CHECK(*back_exec == exec);

  Command report;
  report.command_id = "cmd_0000000000000001";
  report.kind = CommandKind::kReport;
  report.issued_at = absl::FromUnixSeconds(1'790'000'000);
  report.deadline = report.issued_at + absl::Seconds(10);
  const absl::StatusOr<Command> back_report = DecodeCommand(EncodeCommand(report));
  REQUIRE(back_report.ok());
  CHECK(*back_report == report);
}

TEST_CASE("a malformed command is refused, so the agent runs nothing from it") {
  const std::string good = EncodeCommand(SampleDispatch());
  const auto refused = [](const std::string& json, std::string_view words) {
    const absl::StatusOr<Command> c = DecodeCommand(json);
    REQUIRE_FALSE(c.ok());
    CHECK_THAT(std::string(c.status().message()), Catch::Contains(std::string(words)));
  };
  refused(Replace(good, "cmd_0123456789abcdef", "cmd_0123456789ABCDEF"), "command_id");
  refused(Replace(good, "\"kind\":\"dispatch\"", "\"kind\":\"shell\""), "kind");
  refused(Replace(good, "\"capability\":\"restart\"", "\"capability\":\"restart; rm -rf /\""),
          "capability");
  refused(Replace(good, "\"params\":{\"reason\":\"x\"}", "\"params\":[1]"), "params");
  refused(Replace(good, "\"resource_id\":\"service:web1/nginx\"", "\"resource_id\":\"../../x\""),
          "resource_id");
  refused(Replace(good, ",\"plan_hash\":\"sha256:abc\"", ""), "plan_hash");
  refused(Replace(good, "\"protocol\":1", "\"protocol\":1,\"sudo\":true"), "unknown member");
  // A report command carrying a dispatch's members is malformed, not a dispatch in disguise.
  refused(Replace(good, "\"kind\":\"dispatch\"", "\"kind\":\"report\""), "unknown member");
  Command late = SampleDispatch();
  late.deadline = late.issued_at;
  refused(EncodeCommand(late), "deadline");
  refused("{\"protocol\":1,\"command_id\":\"cmd_0123456789abcdef\"}", "kind");
  refused("not json", "command");
}

TEST_CASE("results survive their round trip and refuse what an agent must not say") {
  Result r;
  r.host = "web1";
  r.command_id = "cmd_0123456789abcdef";
  r.kind = CommandKind::kDispatch;
  r.action_id = "act_1";
  r.attempt_id = "act_1.dispatch.1";
  r.status = core::ExecutionStatus::kSucceeded;
  r.summary = "systemctl restart nginx exited 0";
  r.replayed = true;
  const absl::StatusOr<Result> back = DecodeResult(EncodeResult(r));
  REQUIRE(back.ok());
  CHECK(*back == r);

  Result e;
  e.host = "web1";
  e.command_id = "cmd_0123456789abcdef";
  e.kind = CommandKind::kExec;
  e.status = core::ExecutionStatus::kSucceeded;
  // Command output is data: terminal escapes travel (the printers sanitize them).
  e.exec = ExecResult{0, "Filesystem  Size\n\x1b[31mred\x1b[0m\n", false};
  const absl::StatusOr<Result> back_exec = DecodeResult(EncodeResult(e));
  REQUIRE(back_exec.ok());
  CHECK(*back_exec == e);

  const std::string good = EncodeResult(r);
  CHECK_FALSE(
      DecodeResult(Replace(good, "\"status\":\"succeeded\"", "\"status\":\"confirmed\"")).ok());
  CHECK_FALSE(
      DecodeResult(Replace(good, "\"reason_code\":\"\"", "\"reason_code\":\"Not Snake\"")).ok());
  CHECK_FALSE(DecodeResult(Replace(good, "\"kind\":\"dispatch\"", "\"kind\":\"report\"")).ok());
  CHECK_FALSE(DecodeResult(Replace(good, "\"host\":\"web1\"", "\"host\":\"web 1\"")).ok());
  // A dispatch result carries no exec output.
  CHECK_FALSE(
      DecodeResult(Replace(good, "\"replayed\":true", "\"replayed\":true,\"exec\":{}")).ok());
  const std::string exec_json = EncodeResult(e);
  CHECK_FALSE(DecodeResult(Replace(exec_json, "\"exit_code\":0", "\"exit_code\":256")).ok());
  CHECK_FALSE(DecodeResult(Replace(exec_json, "\"exit_code\":0",
                                   fmt::format("\"exit_code\":0,\"output\":\"{}\"",
                                               std::string(kMaxExecTextBytes + 1, 'a'))))
                  .ok());
}

TEST_CASE("host names are sanitized into the protocol's form") {
  CHECK(SanitizeHostName("web1.example.org") == "web1.example.org");
  CHECK(SanitizeHostName("my host/with:odd") == "my-host-with-odd");
  CHECK(SanitizeHostName("-.-") == "localhost");
  CHECK(SanitizeHostName("") == "localhost");
  CHECK(SanitizeHostName(std::string(100, 'a')).size() == 64);
  CHECK(IsAgentHostName(SanitizeHostName("\xff\xfe weird")));
  CHECK_FALSE(IsAgentHostName("a b"));
  CHECK_FALSE(IsAgentHostName(std::string(65, 'a')));
}

TEST_CASE("hello survives its round trip") {
  const Hello h{"web1", 15, "0.4.0"};
  const absl::StatusOr<Hello> back = DecodeHello(EncodeHello(h));
  REQUIRE(back.ok());
  CHECK(*back == h);
  CHECK_FALSE(DecodeHello(R"({"protocol":1,"host":"web1","heartbeat_seconds":0})").ok());
}

}  // namespace
}  // namespace pulse::adapters::hostagent
