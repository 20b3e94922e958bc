// pulse-cli's named contexts (docs/cli.md, "Contexts"): a config file at
// $XDG_CONFIG_HOME/pulse/cli.json, mode 0600, that names servers and where their tokens come
// from; precedence flags > variables > the current context (config.h); a malformed
// file is refused with the stable code config_invalid (exit 2), never a crash.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace pulse::testing::e2e {
namespace {

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_CASE("a context supplies the server and the token, and flags and variables win over it",
          "[e2e][cli][context]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const std::string xdg = "XDG_CONFIG_HOME=" + dir.File("config");
  WriteFile(dir.File("token"), token + "\n");

  const Captured added =
      RunCli({"context", "add", "lab", "--server", url, "--token-file", dir.File("token")},
             {.env = {xdg}});
  INFO(added.err);
  REQUIRE(added.exit_code == 0);
  CHECK(added.out.find("added context lab (current)") != std::string::npos);
  // The file: 0600 in a 0700 directory, and it holds the token's path, never the token.
  struct stat st {};
  REQUIRE(::stat(dir.File("config/pulse/cli.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(dir.File("config/pulse").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(ReadFile(dir.File("config/pulse/cli.json")).find(token) == std::string::npos);

  // No --server, no PULSE_SERVER, no PULSE_API_TOKEN: the context's.
  const Captured findings = RunCli({"--json", "findings"}, {.env = {xdg}});
  INFO(findings.err);
  CHECK(findings.exit_code == 0);
  // PULSE_SERVER wins over the context, --server over both; PULSE_API_TOKEN over its token.
  CHECK(RunCli({"status"}, {.env = {xdg, "PULSE_SERVER=http://127.0.0.1:1"}}).exit_code == 3);
  CHECK(RunCli({"--server", url, "findings"}, {.env = {xdg, "PULSE_SERVER=http://127.0.0.1:1"}})
            .exit_code == 0);
  CHECK(RunCli({"findings"}, {.env = {xdg, TokenEnv("pulse_not-a-real-token")}}).exit_code == 4);

  // show says where each setting comes from and never prints the token.
  const Captured show = RunCli({"context", "show"}, {.env = {xdg}});
  CHECK(show.exit_code == 0);
  CHECK(show.out.find("context lab (file " + dir.File("token") + ")") != std::string::npos);
  CHECK(show.out.find(token) == std::string::npos);
  const Captured shown =
      RunCli({"--json", "--server", "http://127.0.0.1:2", "context", "show"}, {.env = {xdg}});
  CHECK(shown.out.find("\"serverSource\":\"--server\"") != std::string::npos);

  // A second context with its token in a variable; use switches, --context picks one once.
  REQUIRE(RunCli({"context", "add", "other", "--server", "http://127.0.0.1:1", "--token-env",
                  "OTHER_TOKEN"},
                 {.env = {xdg}})
              .exit_code == 0);
  CHECK(RunCli({"findings"}, {.env = {xdg}}).exit_code == 0);  // still lab
  REQUIRE(RunCli({"context", "use", "other"}, {.env = {xdg}}).exit_code == 0);
  CHECK(RunCli({"findings"}, {.env = {xdg}}).exit_code == 3);
  CHECK(RunCli({"--context", "lab", "findings"}, {.env = {xdg}}).exit_code == 0);
  // --context is a flag: it wins over the variables, --server over it.
  CHECK(RunCli({"--context", "lab", "findings"},
               {.env = {xdg, "PULSE_SERVER=http://127.0.0.1:1", TokenEnv("pulse_bad")}})
            .exit_code == 0);
  CHECK(RunCli({"--context", "lab", "--server", "http://127.0.0.1:1", "findings"}, {.env = {xdg}})
            .exit_code == 3);
  const Captured list = RunCli({"--json", "context", "list"}, {.env = {xdg}});
  CHECK(list.out.find("\"current\":\"other\"") != std::string::npos);
  CHECK(list.out.find("\"token_env\":\"OTHER_TOKEN\"") != std::string::npos);

  // Unknown names are usage errors with their own code.
  const Captured unknown = RunCli({"--context", "prdo", "findings"}, {.env = {xdg}});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.rfind("pulse-cli: context_not_found: no context named 'prdo'", 0) == 0);
  CHECK(RunCli({"context", "use", "nope"}, {.env = {xdg}}).exit_code == 2);
  // A token file that is gone: its own code, exit 2.
  REQUIRE(RunCli({"context", "use", "lab"}, {.env = {xdg}}).exit_code == 0);
  ::unlink(dir.File("token").c_str());
  const Captured gone = RunCli({"findings"}, {.env = {xdg}});
  CHECK(gone.exit_code == 2);
  CHECK(gone.err.rfind("pulse-cli: token_file_unreadable:", 0) == 0);
  // remove forgets it; the current one removed leaves none.
  CHECK(RunCli({"context", "remove", "lab"}, {.env = {xdg}}).exit_code == 0);
  CHECK(RunCli({"--json", "context", "list"}, {.env = {xdg}}).out.find("\"lab\"") ==
        std::string::npos);
}

TEST_CASE("bad context arguments are usage errors and change nothing", "[e2e][cli][context]") {
  TempDir dir;
  const std::string xdg = "XDG_CONFIG_HOME=" + dir.File("config");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"context", "add", "a b", "--server", "http://127.0.0.1:1"},
           {"context", "add", std::string(65, 'a'), "--server", "http://127.0.0.1:1"},
           {"context", "add", "x", "--server", "ftp://127.0.0.1:1"},
           {"context", "add", "x", "--server", "http://127.0.0.1:1", "--token-env", "A=B"},
           {"context", "add", "x", "--server", "http://127.0.0.1:1", "--token-file",
            dir.File("missing")},
           {"context", "add", "x"}}) {
    const Captured r = RunCli(args, {.env = {xdg}});
    INFO(args[2] << " " << r.err);
    CHECK(r.exit_code == 2);
  }
  struct stat st {};
  CHECK(::stat(dir.File("config/pulse/cli.json").c_str(), &st) != 0);
}

TEST_CASE("a malformed config file is refused with config_invalid, never a crash",
          "[e2e][cli][context][hostile]") {
  TempDir dir;
  const std::string xdg = "XDG_CONFIG_HOME=" + dir.File("config");
  ::mkdir(dir.File("config").c_str(), 0700);
  ::mkdir(dir.File("config/pulse").c_str(), 0700);
  const std::string path = dir.File("config/pulse/cli.json");
  const std::vector<std::string> hostile = {
      "",
      "{",
      "[]",
      "null",
      "\"contexts\"",
      std::string("\xff\xfe\x00\x01garbage", 12),
      R"({"contexts":{"a":{"server":1}}})",
      R"({"contexts":{"a":{"server":"http://x","token":"pulse_secret"}}})",
      R"({"contexts":{"a b":{"server":"http://x"}}})",
      R"({"contexts":{"a":"http://x"}})",
      R"({"contexts":[]})",
      R"({"current":"ghost","contexts":{}})",
      R"({"current":7})",
      R"({"contexts":{"a":{"server":"http://x"},"a":{"server":"http://y"}}})",
      R"({"servers":{}})",
      std::string(100000, '[') + std::string(100000, ']'),
      "{\"current\":\"" + std::string(3u << 20, 'a') + "\"}",
  };
  for (const std::string& text : hostile) {
    WriteFile(path, text);
    const Captured r = RunCli({"--json", "findings"}, {.env = {xdg}});
    INFO(text.substr(0, 80) << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("pulse-cli: config_invalid: " + path, 0) == 0);
    CHECK(r.out.rfind("{\"error\":\"config_invalid\"", 0) == 0);
    CHECK(RunCli({"context", "list"}, {.env = {xdg}}).exit_code == 2);
  }
  // A directory where the file should be.
  ::unlink(path.c_str());
  ::mkdir(path.c_str(), 0700);
  CHECK(RunCli({"context", "list"}, {.env = {xdg}}).exit_code == 2);
  ::rmdir(path.c_str());
  // With the server and the token both given, the file is not read at all.
  WriteFile(path, "{");
  CHECK(RunCli({"--server", "http://127.0.0.1:1", "status"},
               {.env = {xdg, TokenEnv("pulse_x")}})
            .err.find("config_invalid") == std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
