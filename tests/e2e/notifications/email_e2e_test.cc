// The email channel end to end (docs/notifications.md "Email"): the real pulse-server sending
// through libcurl's SMTP client to a loopback SMTP server (smtp_sink.py, Python's standard
// library) that offers STARTTLS with a test certificate and requires AUTH after it. The sink
// records what it accepted; faults are scripted there (451 then 550 at the end of DATA, no
// STARTTLS, implicit TLS) and on the server's side (no CA for the certificate, a wrong password).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "child_process.h"
#include "notification_test_support.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_pve_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e::email {  // its own: the e2e helpers are unity-built together
namespace {

constexpr char kUser[] = "pulse-mailer";
constexpr char kPassword[] = "smtp pass: 0123 \xc3\xa9";  // spaces, a colon, UTF-8

struct SinkOptions {
  std::vector<std::string> args;  // --fail 451, --no-starttls, --implicit-tls
  bool auth = true;
};

// One accepted message as the sink recorded it.
struct Mail {
  std::string mail_from;
  std::vector<std::string> rcpt_to;
  std::string data;
  bool tls = false;
  std::string user;

  // A header's value ("" when absent); unfolded.
  std::string Header(const std::string& name) const {
    const std::string head = data.substr(0, data.find("\r\n\r\n"));
    std::string value;
    bool in = false;
    for (const absl::string_view line : absl::StrSplit(head, "\r\n")) {
      if (in && !line.empty() && (line[0] == ' ' || line[0] == '\t')) {
        absl::StrAppend(&value, line.substr(1));
        continue;
      }
      in = false;
      if (absl::StartsWithIgnoreCase(line, absl::StrCat(name, ": "))) {
        value = std::string(line.substr(name.size() + 2));
        in = true;
      }
    }
    return value;
  }
  // The base64 body, decoded.
  std::string Body() const {
    std::string encoded;
    for (const char c : data.substr(data.find("\r\n\r\n") + 4)) {
      if (c != '\r' && c != '\n') {
        encoded.push_back(c);
      }
    }
    std::string out;
    REQUIRE(absl::Base64Unescape(encoded, &out));
    return out;
  }
};

class SmtpSink {
 public:
  SmtpSink(const std::string& dir, const TestCertificate& cert, const SinkOptions& options = {})
      : out_(dir + "/mail-" + std::to_string(++serial_) + ".jsonl") {
    ChildProcessOptions child;
    child.argv = {PULSE_PYTHON3, PULSE_SMTP_SINK, "--cert", cert.cert_file,
                  "--key",       cert.key_file,   "--out",  out_};
    if (options.auth) {
      child.argv.insert(child.argv.end(), {"--user", kUser, "--password", kPassword});
    }
    child.argv.insert(child.argv.end(), options.args.begin(), options.args.end());
    child.log_path = out_ + ".log";
    absl::StatusOr<std::unique_ptr<ChildProcess>> started = ChildProcess::Start(child);
    REQUIRE(started.ok());
    process_ = *std::move(started);
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (port_ == 0 && absl::Now() < deadline) {
      std::ifstream log(child.log_path);
      const std::string text((std::istreambuf_iterator<char>(log)),
                             std::istreambuf_iterator<char>());
      if (const std::size_t end = text.find('\n'); end != std::string::npos) {
        port_ = std::atoi(text.substr(0, end).c_str());  // the first line, once whole
      }
      if (port_ == 0) {
        REQUIRE(process_->Running());
        absl::SleepFor(absl::Milliseconds(20));
      }
    }
    INFO(process_->LogTail());
    REQUIRE(port_ > 0);
  }
  int port() const { return port_; }
  std::string Url(const std::string& scheme = "smtp") const {
    return absl::StrCat(scheme, "://127.0.0.1:", port_);
  }
  std::vector<Mail> Messages() const {
    std::vector<Mail> out;
    std::ifstream in(out_);
    std::string line;
    while (std::getline(in, line)) {
      rapidjson::Document d = Json(line);
      Mail m;
      m.mail_from = Str(d, "mail_from");
      for (const rapidjson::Value& to : d["rcpt_to"].GetArray()) {
        m.rcpt_to.emplace_back(core::StringViewOf(to));
      }
      m.data = Str(d, "data");
      m.tls = d["tls"].GetBool();
      m.user = d["user"].IsString() ? Str(d, "user") : "";
      out.push_back(std::move(m));
    }
    return out;
  }
  bool WaitFor(std::size_t n, absl::Duration timeout) const {
    const absl::Time deadline = absl::Now() + timeout;
    while (Messages().size() < n) {
      if (absl::Now() > deadline) {
        return false;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    return true;
  }

 private:
  static inline int serial_ = 0;
  std::string out_;
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
};

TestCertificate Certificate(const std::string& dir) {
  absl::StatusOr<TestCertificate> cert = MakeTestCertificate(dir, "smtp");
  REQUIRE(cert.ok());
  return *cert;
}

std::string EmailChannel(const std::string& url, const std::string& extra = "") {
  return absl::StrCat(R"([{"name":"mail","kind":"email","url":")", url,
                      R"(","email":{"from":"pulse@lab.example","to":["ops@lab.example",)",
                      R"("oncall@lab.example"],"username":")", kUser, R"("},"secret":")", kPassword,
                      R"(","min_severity":"warning","events":["finding.created"])", extra, "}]");
}

rapidjson::Document TestSend(int port, const std::string& token) {
  const Reply reply = Send(port, "POST", "/api/settings/notifications/mail/test", token);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  return Json(reply.body);
}

TEST_CASE("an email channel mails each new finding once, over STARTTLS, authenticated",
          "[e2e][notifications][email]") {
  TempDir dir;
  const TestCertificate cert = Certificate(dir.path());
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  SmtpSink sink(dir.path(), cert);
  ServerProcess server(dir.path(),
                       {.args = {"--patrol-interval", "0", "--notify-ca-file", cert.cert_file}});
  const int port = server.port();
  const Reply put = PutChannels(port, token, EmailChannel(sink.Url()));
  INFO(put.body);
  REQUIRE(put.status == 200);
  // The password is write-only; the addressing is answered.
  CHECK(put.body.find("smtp pass") == std::string::npos);
  rapidjson::Document settings = Settings(port, token);
  const rapidjson::Value& channel = settings["channels"][0];
  CHECK(Str(channel, "kind") == "email");
  CHECK(Str(channel, "url") == sink.Url());
  CHECK(channel["secret_set"].GetBool());
  CHECK(Str(channel["email"], "from") == "pulse@lab.example");
  CHECK(channel["email"]["to"].Size() == 2);
  CHECK(Str(channel["email"], "username") == kUser);
  CHECK(core::ToJsonString(settings).find("smtp pass") == std::string::npos);

  const std::vector<std::string> created = RunPatrol(port, token);
  REQUIRE(created.size() >= 3);
  REQUIRE(sink.WaitFor(created.size(), absl::Seconds(20)));
  absl::SleepFor(absl::Milliseconds(500));  // nothing more is coming
  const std::vector<Mail> mails = sink.Messages();
  REQUIRE(mails.size() == created.size());
  std::set<std::string> keys;
  std::set<std::string> message_ids;
  for (const Mail& m : mails) {
    INFO(m.data);
    CHECK(m.tls);
    CHECK(m.user == kUser);
    CHECK(m.mail_from == "pulse@lab.example");
    CHECK(m.rcpt_to == std::vector<std::string>{"ops@lab.example", "oncall@lab.example"});
    CHECK(m.Header("From") == "Pulse <pulse@lab.example>");
    CHECK(m.Header("To") == "ops@lab.example, oncall@lab.example");
    CHECK(m.Header("Subject").rfind("[Pulse] [", 0) == 0);
    CHECK(m.Header("X-Pulse-Event") == "finding.created");
    CHECK(m.Header("Auto-Submitted") == "auto-generated");
    CHECK(m.Header("Content-Type") == "text/plain; charset=utf-8");
    const std::string key = m.Header("X-Pulse-Idempotency-Key");
    CHECK(key.rfind("ntf_", 0) == 0);
    CHECK(m.Header("Message-ID") == absl::StrCat("<", key, ".pulse@lab.example>"));
    keys.insert(key);
    message_ids.insert(m.Header("Message-ID"));
    const std::string body = m.Body();
    CHECK(body.find("Idempotency key: " + key) != std::string::npos);
    CHECK(body.find("Event: finding.created") != std::string::npos);
    bool names_a_finding = false;
    for (const std::string& id : created) {
      names_a_finding = names_a_finding || body.find(id) != std::string::npos;
    }
    CHECK(names_a_finding);
  }
  CHECK(keys.size() == mails.size());
  CHECK(message_ids.size() == mails.size());
  settings = Settings(port, token);
  CHECK(settings["outbox"]["delivered"].GetInt64() == static_cast<std::int64_t>(mails.size()));
  CHECK(core::ToJsonString(settings).find("smtp pass") == std::string::npos);
}

TEST_CASE("an SMTP server's 451 is retried and its 550 is final", "[e2e][notifications][email]") {
  TempDir dir;
  const TestCertificate cert = Certificate(dir.path());
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  // The first two messages' DATA is answered 451 (try later), the third's 550 (refused).
  SmtpSink sink(dir.path(), cert, {.args = {"--fail", "451,451,550"}});
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0", "--notify-retry-base",
                                             "200ms", "--notify-ca-file", cert.cert_file}});
  const int port = server.port();
  REQUIRE(PutChannels(port, token, EmailChannel(sink.Url())).status == 200);

  // Send-test goes through once (no retries): 451 answered as such.
  rapidjson::Document test = TestSend(port, token);
  CHECK_FALSE(test["delivered"].GetBool());
  CHECK(test["http_status"].GetInt() == 451);
  CHECK(Str(test, "error").find("451") != std::string::npos);
  // The outbox retries the row that met the second 451; the 550 is permanent, so the row that
  // meets it is dead at once, and every other one is delivered once.
  const std::vector<std::string> created = RunPatrol(port, token);
  REQUIRE(created.size() >= 3);
  REQUIRE(sink.WaitFor(created.size() - 1, absl::Seconds(30)));
  absl::SleepFor(absl::Seconds(1));
  const std::vector<Mail> mails = sink.Messages();
  CHECK(mails.size() == created.size() - 1);
  std::set<std::string> keys;
  for (const Mail& m : mails) {
    keys.insert(m.Header("X-Pulse-Idempotency-Key"));
  }
  CHECK(keys.size() == mails.size());
  rapidjson::Document settings = Settings(port, token);
  CHECK(settings["outbox"]["dead"].GetInt64() == 1);
  CHECK(settings["outbox"]["pending"].GetInt64() == 0);
  // The row that met the 550 is dead after that attempt: its first, or its second when it was
  // the row that met the 451 (the sender goes on to the next due row while one waits).
  const rapidjson::Value& dead = settings["outbox"]["dead_letters"][0];
  CHECK(Str(dead, "last_error").find("550") != std::string::npos);
  CHECK(dead["attempts"].GetInt64() >= 1);
  CHECK(dead["attempts"].GetInt64() <= 2);
}

TEST_CASE("an email channel never sends in plaintext, to an untrusted server or unauthenticated",
          "[e2e][notifications][email][hostile]") {
  TempDir dir;
  const TestCertificate cert = Certificate(dir.path());
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");

  SECTION("a server that does not offer STARTTLS gets nothing") {
    SmtpSink sink(dir.path(), cert, {.args = {"--no-starttls"}});
    ServerProcess server(dir.path(),
                         {.args = {"--patrol-interval", "0", "--notify-ca-file", cert.cert_file}});
    REQUIRE(PutChannels(server.port(), token, EmailChannel(sink.Url())).status == 200);
    rapidjson::Document test = TestSend(server.port(), token);
    CHECK_FALSE(test["delivered"].GetBool());
    CHECK(Str(test, "error").find("STARTTLS") != std::string::npos);
    CHECK(sink.Messages().empty());
  }
  SECTION("a certificate that chains to no trusted CA gets nothing") {
    SmtpSink sink(dir.path(), cert);
    ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
    REQUIRE(PutChannels(server.port(), token, EmailChannel(sink.Url())).status == 200);
    rapidjson::Document test = TestSend(server.port(), token);
    CHECK_FALSE(test["delivered"].GetBool());
    CHECK(Str(test, "error").find("not trusted") != std::string::npos);
    CHECK(sink.Messages().empty());
  }
  SECTION("a wrong password is refused and never shown") {
    SmtpSink sink(dir.path(), cert);
    ServerProcess server(dir.path(),
                         {.args = {"--patrol-interval", "0", "--notify-ca-file", cert.cert_file}});
    const std::string wrong = absl::StrCat(
        R"([{"name":"mail","kind":"email","url":")", sink.Url(),
        R"(","email":{"from":"pulse@lab.example","to":["ops@lab.example"],"username":")", kUser,
        R"("},"secret":"not-the-password"}])");
    REQUIRE(PutChannels(server.port(), token, wrong).status == 200);
    rapidjson::Document test = TestSend(server.port(), token);
    CHECK_FALSE(test["delivered"].GetBool());
    CHECK(Str(test, "error").find("refused the user name or password") != std::string::npos);
    CHECK(core::ToJsonString(test).find("not-the-password") == std::string::npos);
    CHECK(sink.Messages().empty());
    CHECK(server.Log().find("not-the-password") == std::string::npos);
  }
  SECTION("smtps:// speaks TLS from the first byte") {
    SmtpSink sink(dir.path(), cert, {.args = {"--implicit-tls"}});
    ServerProcess server(dir.path(),
                         {.args = {"--patrol-interval", "0", "--notify-ca-file", cert.cert_file}});
    REQUIRE(PutChannels(server.port(), token, EmailChannel(sink.Url("smtps"))).status == 200);
    rapidjson::Document test = TestSend(server.port(), token);
    INFO(core::ToJsonString(test));
    CHECK(test["delivered"].GetBool());
    CHECK(test["http_status"].GetInt() == 250);
    REQUIRE(sink.WaitFor(1, absl::Seconds(5)));
    const Mail m = sink.Messages()[0];
    CHECK(m.tls);
    CHECK(m.Header("X-Pulse-Event") == "test");
    CHECK(m.Header("Subject") == "[Pulse] [INFO] Pulse test notification");
  }
}

TEST_CASE("the email settings refuse hostile addressing and change nothing",
          "[e2e][notifications][email][hostile]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();
  REQUIRE(PutChannels(port, token, EmailChannel("smtp://127.0.0.1:2525")).status == 200);
  const std::string before = core::ToJsonString(Settings(port, token)["channels"]);
  const auto email = [](const std::string& url, const std::string& addressing,
                        const std::string& extra = "") {
    return absl::StrCat(R"([{"name":"mail","kind":"email","url":")", url, R"(")",
                        addressing.empty() ? "" : absl::StrCat(R"(,"email":)", addressing), extra,
                        "}]");
  };
  const std::string ok_to = R"({"from":"pulse@lab.example","to":["ops@lab.example"]})";
  const std::vector<std::string> bad = {
      // the addressing
      email("smtp://127.0.0.1:2525", ""),
      email("smtp://127.0.0.1:2525", R"({"from":"pulse@lab.example","to":[]})"),
      email("smtp://127.0.0.1:2525", R"({"from":"pulse@lab.example"})"),
      email("smtp://127.0.0.1:2525", R"({"from":"pulse","to":["ops@lab.example"]})"),
      email("smtp://127.0.0.1:2525", R"({"from":"a@@b.c","to":["ops@lab.example"]})"),
      email("smtp://127.0.0.1:2525", R"({"from":"<pulse@lab.example>","to":["o@lab.example"]})"),
      email("smtp://127.0.0.1:2525",
            R"({"from":"pulse@lab.example","to":["o@lab.example>\r\nRCPT TO:<evil@x.example"]})"),
      email("smtp://127.0.0.1:2525", R"({"from":"pulse@lab.example","to":["a b@lab.example"]})"),
      email("smtp://127.0.0.1:2525", R"({"from":"pulse@lab.example","to":["o@lab..example"]})"),
      email("smtp://127.0.0.1:2525", R"({"from":"pulse@lab.example","to":["o@lab.example"],)"
                                     R"("to":["p@lab.example"]})"),
      email("smtp://127.0.0.1:2525",
            R"({"from":"pulse@lab.example","to":["o@lab.example","o@lab.example"]})"),
      email("smtp://127.0.0.1:2525", R"({"from":"pulse@lab.example","to":["a@x.example",)"
                                     R"("b@x.example","c@x.example","d@x.example","e@x.example",)"
                                     R"("f@x.example","g@x.example","h@x.example","i@x.example",)"
                                     R"("j@x.example","k@x.example"]})"),
      email("smtp://127.0.0.1:2525", R"({"from":"pulse@lab.example","to":["o@lab.example"],)"
                                     R"("bcc":["p@lab.example"]})"),
      // user name and password go together
      email("smtp://127.0.0.1:2525",
            R"({"from":"pulse@lab.example","to":["o@lab.example"],"username":"u"})",
            R"(,"secret":null)"),
      email("smtp://127.0.0.1:2525", ok_to, R"(,"secret":"a password without a user")"),
      // the URL
      email("http://127.0.0.1:2525", ok_to),
      email("smtp://user:pw@127.0.0.1:2525", ok_to),
      email("smtp://127.0.0.1:2525/relay", ok_to),
      email("smtp://127.0.0.1:2525?x=1", ok_to),
      email("smtp://127.0.0.1:99999", ok_to),
      email("smtp://", ok_to),
      email("smtp://exa mple.org", ok_to),
      email("smtp://[::1", ok_to),
      email(absl::StrCat("smtp://", std::string(3000, 'a')), ok_to),
      // email addressing on another kind, an smtp URL for another kind
      R"([{"name":"w","kind":"webhook","url":"http://127.0.0.1:1/h","email":)" + ok_to + "}]",
      R"([{"name":"w","kind":"webhook","url":"smtp://127.0.0.1:2525"}])",
  };
  for (const std::string& channels : bad) {
    INFO(channels);
    const Reply reply = PutChannels(port, token, channels);
    INFO(reply.body);
    CHECK(reply.status == 400);
    CHECK(ErrorCode(reply.body) == "invalid_request");
  }
  CHECK(core::ToJsonString(Settings(port, token)["channels"]) == before);
  // The server is still up and the good shapes pass: smtps, IPv6, a trailing slash, no AUTH.
  for (const std::string url :
       {"smtps://mail.example.org", "smtp://[::1]:2525/", "SMTP://relay.lab.example:25"}) {
    INFO(url);
    CHECK(PutChannels(port, token, email(url, ok_to, R"(,"secret":null)")).status == 200);
  }
  REQUIRE(server.Running());
}

}  // namespace
}  // namespace pulse::testing::e2e::email
