// Redaction by destination, end to end: the real pulse-server talks to the loopback fake
// provider as `openai-compatible`. A user types a secret and asks about a resource the operator
// marked localOnly; the model reads that resource. When the operator declares the endpoint
// remote (--provider-locality remote, what an address off this machine gets by default) neither
// the secret nor the resource's id or name reaches the provider; when the endpoint is decided
// local from its loopback URL they do (a local model gets full context). The decision is
// stated in the startup line and in GET /api/ai/models.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kSecret[] = "Canary-7f3a9c1e";
constexpr char kMessage[] =
    R"({"message":"db-01 is slow; our database password=Canary-7f3a9c1e in case you need it. )"
    R"(Please look at vm:105."})";
constexpr char kQueryArgs[] = R"({"action":"get","resource_id":"vm:105"})";
constexpr char kModels[] = R"({"object":"list","data":[{"id":"test-model","object":"model"}]})";

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

// How many recorded chat requests carry `needle` anywhere in their body.
int RequestsCarrying(const FakeProviderServer& fake, const std::string& needle) {
  int n = 0;
  for (const RecordedRequest& request : fake.Requests()) {
    if (request.path == "/v1/chat/completions" && request.body.find(needle) != std::string::npos) {
      ++n;
    }
  }
  return n;
}

struct Run {
  std::string log;
  std::string models_body;
  int chat_requests = 0;
  int with_secret = 0;
  int with_id = 0;
  int with_name = 0;
  int with_redaction_marker = 0;
  int with_local_only_marker = 0;
};

// One server against a fresh fake with `extra` flags: marks vm:105 (db-01) localOnly, runs the
// chat (the model reads vm:105, then answers), and counts what reached the provider.
Run ChatThrough(const std::vector<std::string>& extra) {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(ToolTurn("call_q", "pulse_query", kQueryArgs)));
  fake.Enqueue(Turn(TextTurn("db-01 is running; memory is high.")));
  const std::string token = MintToken(dir.path(), "ai:chat,monitoring:write", "operator");
  ServerOptions options{.args = {"--provider", "openai-compatible", "--provider-base-url",
                                 fake.base_url() + "/v1", "--model", "test-model"}};
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  ServerProcess server(dir.path(), options);
  const int port = server.port();

  const Reply marked = Send(port, "PUT", "/api/resources/vm%3A105/operator-state", token,
                            R"({"intentionallyOffline":false,"neverAutoRemediate":false,)"
                            R"("localOnly":true})");
  INFO(marked.body);
  REQUIRE(marked.status == 200);

  const ChatStream chat = PostStream(port, "/api/ai/chat", token, kMessage);
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "answered");

  ScriptedResponse models = JsonResponse(200, kModels);
  models.path = "/v1/models";
  fake.Enqueue(models);
  const Reply listed = Send(port, "GET", "/api/ai/models", token);
  INFO(listed.body);
  REQUIRE(listed.status == 200);

  Run run;
  run.log = server.Log();
  run.models_body = listed.body;
  run.chat_requests = RequestsCarrying(fake, "");
  run.with_secret = RequestsCarrying(fake, kSecret);
  run.with_id = RequestsCarrying(fake, "vm:105");
  run.with_name = RequestsCarrying(fake, "db-01");
  run.with_redaction_marker = RequestsCarrying(fake, "[REDACTED]");
  run.with_local_only_marker = RequestsCarrying(fake, "[local-only resource]");
  return run;
}

TEST_CASE("an endpoint declared remote never receives a typed secret or a localOnly resource",
          "[e2e][server][destination]") {
  const Run run = ChatThrough({"--provider-locality", "remote"});
  INFO(run.log);
  // The run reached the provider twice (the tool turn and the answer) ...
  CHECK(run.chat_requests == 2);
  // ... and neither request carried the secret, the id or the name.
  CHECK(run.with_secret == 0);
  CHECK(run.with_id == 0);
  CHECK(run.with_name == 0);
  CHECK(run.with_redaction_marker == 2);
  CHECK(run.with_local_only_marker == 2);
  CHECK(run.log.find("destination remote") != std::string::npos);
  CHECK(run.log.find("declared remote by the operator") != std::string::npos);
  const rapidjson::Document models = Json(run.models_body);
  CHECK(Str(models, "destination") == "remote");
  CHECK(Str(models, "destination_reason").find("declared remote") != std::string::npos);
}

TEST_CASE("a loopback endpoint is decided local and gets the full context",
          "[e2e][server][destination]") {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{}, std::vector<std::string>{"--provider-locality", "auto"}}) {
    const Run run = ChatThrough(flags);
    INFO(run.log);
    CHECK(run.chat_requests == 2);
    CHECK(run.with_secret == 2);
    CHECK(run.with_id == 2);
    CHECK(run.with_redaction_marker == 0);
    CHECK(run.with_local_only_marker == 0);
    CHECK(run.log.find("destination local") != std::string::npos);
    CHECK(run.log.find("loopback address") != std::string::npos);
    const rapidjson::Document models = Json(run.models_body);
    CHECK(Str(models, "destination") == "local");
    CHECK(Str(models, "destination_reason").find("loopback address") != std::string::npos);
  }
}

TEST_CASE("the locality flags refuse what they cannot mean", "[e2e][server][destination]") {
  TempDir dir;
  const std::string server = ServerBinary();
  const std::vector<std::string> base = {server, "--data-dir", dir.path(), "--listen",
                                         "127.0.0.1:0"};
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  };
  const Captured bad_value = run({"--provider", "ollama", "--provider-locality", "LOCAL"});
  CHECK(bad_value.exit_code == 2);
  CHECK(bad_value.err.find("--provider-locality") != std::string::npos);
  const Captured no_provider = run({"--provider-locality", "local"});
  CHECK(no_provider.exit_code == 2);
  CHECK(no_provider.err.find("needs a provider") != std::string::npos);
  const Captured contradiction =
      run({"--provider", "ollama", "--provider-trusted-local", "--provider-locality", "remote"});
  CHECK(contradiction.exit_code == 2);
  CHECK(contradiction.err.find("--provider-trusted-local") != std::string::npos);
  // A hosted API at its own address is a third party: it cannot be declared local.
  const Captured hosted = run({"--provider", "openai", "--provider-trusted-local"});
  CHECK(hosted.exit_code == 1);
  CHECK(hosted.err.find("hosted") != std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
