// `pulse-cli context ...`: the named contexts of the config file (config.h, docs/cli.md). These
// commands never talk to a server.
#include "commands_context.h"

#include <climits>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client.h"
#include "json_output.h"
#include "rapidjson/document.h"
#include "render.h"
#include "text_safety.h"

namespace pulse::cli {
namespace {

void Set(rapidjson::Value& object, const char* key, const std::string& value,
         rapidjson::Document::AllocatorType& a) {
  object.AddMember(
      rapidjson::StringRef(key),
      rapidjson::Value(value.c_str(), static_cast<rapidjson::SizeType>(value.size()), a), a);
}

rapidjson::Value ContextJson(const CliContext& c, bool current,
                             rapidjson::Document::AllocatorType& a) {
  rapidjson::Value v(rapidjson::kObjectType);
  Set(v, "name", c.name, a);
  Set(v, "server", c.server, a);
  if (!c.token_file.empty()) {
    Set(v, "token_file", c.token_file, a);
  }
  if (!c.token_env.empty()) {
    Set(v, "token_env", c.token_env, a);
  }
  v.AddMember("current", current, a);
  return v;
}

std::string TokenText(const CliContext& c) {
  if (!c.token_file.empty()) {
    return "file " + c.token_file;
  }
  if (!c.token_env.empty()) {
    return "$" + c.token_env;
  }
  return "-";
}

int Done(const Console& console, const std::string& message) {
  if (console.json()) {
    rapidjson::Document doc(rapidjson::kObjectType);
    Set(doc, "message", message, doc.GetAllocator());
    doc.AddMember("success", true, doc.GetAllocator());
    console.Out(OutputJson(doc) + "\n");
  } else {
    console.Out(SafeText(message, false) + "\n");
  }
  return 0;
}

bool ValidTokenEnv(const std::string& name) {
  if (name.empty() || name.size() > 128 || (name[0] >= '0' && name[0] <= '9')) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

}  // namespace

int CmdContextAdd(const Console& console, const ContextArgs& args, const std::string& path) {
  Failure failure;
  auto usage = [&](std::string message) {
    return Report(console, LocalFailure(ExitCode::kUsage, kCodeUsage, std::move(message)));
  };
  if (!ValidContextName(args.name)) {
    return usage("a context name is 1 to 64 of A-Z a-z 0-9 . _ -");
  }
  if (!args.token_file.empty() && !args.token_env.empty()) {
    return usage("give --token-file or --token-env, not both");
  }
  if (!args.token_env.empty() && !ValidTokenEnv(args.token_env)) {
    return usage(
        "--token-env takes a variable name, e.g. PULSE_PROD_TOKEN (the token itself "
        "never goes on the command line)");
  }
  ClientOptions probe;
  probe.base_url = args.server;
  if (absl::StatusOr<std::unique_ptr<PulseClient>> client = PulseClient::Open(probe);
      !client.ok()) {
    return usage(std::string(client.status().message()));
  }
  CliContext context{args.name, args.server, "", args.token_env};
  if (!args.token_file.empty()) {
    char resolved[PATH_MAX];
    if (::realpath(args.token_file.c_str(), resolved) == nullptr) {
      return Report(
          console, LocalFailure(ExitCode::kUsage, kCodeTokenUnreadable,
                                absl::StrCat("--token-file ", args.token_file, " does not exist")));
    }
    context.token_file = resolved;
  }
  std::optional<CliConfig> config = LoadConfig(path, failure);
  if (!config.has_value()) {
    return Report(console, failure);
  }
  bool replaced = false;
  for (CliContext& c : config->contexts) {
    if (c.name == context.name) {
      c = context;
      replaced = true;
    }
  }
  if (!replaced) {
    config->contexts.push_back(context);
  }
  const bool make_current = args.use || config->current.empty();
  if (make_current) {
    config->current = context.name;
  }
  if (!SaveConfig(path, *config, failure)) {
    return Report(console, failure);
  }
  return Done(console, absl::StrCat(replaced ? "updated" : "added", " context ", context.name,
                                    make_current ? " (current)" : "", " in ", path));
}

int CmdContextUse(const Console& console, const ContextArgs& args, const std::string& path) {
  Failure failure;
  std::optional<CliConfig> config = LoadConfig(path, failure);
  if (!config.has_value()) {
    return Report(console, failure);
  }
  if (config->Find(args.name) == nullptr) {
    return Report(console, LocalFailure(ExitCode::kUsage, kCodeContextNotFound,
                                        absl::StrCat("no context named '", args.name, "' in ", path,
                                                     "; see pulse-cli context list")));
  }
  config->current = args.name;
  if (!SaveConfig(path, *config, failure)) {
    return Report(console, failure);
  }
  return Done(console, "now using context " + args.name);
}

int CmdContextRemove(const Console& console, const ContextArgs& args, const std::string& path) {
  Failure failure;
  std::optional<CliConfig> config = LoadConfig(path, failure);
  if (!config.has_value()) {
    return Report(console, failure);
  }
  if (config->Find(args.name) == nullptr) {
    return Report(console, LocalFailure(ExitCode::kUsage, kCodeContextNotFound,
                                        absl::StrCat("no context named '", args.name, "' in ", path,
                                                     "; see pulse-cli context list")));
  }
  std::erase_if(config->contexts, [&](const CliContext& c) { return c.name == args.name; });
  if (config->current == args.name) {
    config->current.clear();
  }
  if (!SaveConfig(path, *config, failure)) {
    return Report(console, failure);
  }
  return Done(console, "removed context " + args.name);
}

int CmdContextList(const Console& console, const std::string& path) {
  Failure failure;
  std::optional<CliConfig> config = LoadConfig(path, failure);
  if (!config.has_value()) {
    return Report(console, failure);
  }
  if (console.json()) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    Set(doc, "config", path, a);
    Set(doc, "current", config->current, a);
    rapidjson::Value items(rapidjson::kArrayType);
    for (const CliContext& c : config->contexts) {
      items.PushBack(ContextJson(c, c.name == config->current, a), a);
    }
    doc.AddMember("contexts", items, a);
    console.Out(OutputJson(doc) + "\n");
    return 0;
  }
  if (config->contexts.empty()) {
    console.Out(SafeText(absl::StrCat("No contexts in ", path,
                                      ". Add one: pulse-cli context add NAME --server URL "
                                      "--token-file FILE"),
                         false) +
                "\n");
    return 0;
  }
  std::vector<std::vector<Cell>> rows;
  for (const CliContext& c : config->contexts) {
    rows.push_back({{c.name == config->current ? "*" : ""},
                    {SafeCell(c.name, 64)},
                    {SafeCell(c.server, 200)},
                    {SafeCell(TokenText(c), 200)}});
  }
  RenderTable(console, {"CURRENT", "NAME", "SERVER", "TOKEN"}, rows);
  return 0;
}

int CmdContextShow(const Console& console, const EndpointInputs& in) {
  Failure failure;
  std::optional<Endpoint> e = ResolveEndpoint(in, failure);
  if (!e.has_value()) {
    return Report(console, failure);
  }
  if (console.json()) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    Set(doc, "config", in.config_path, a);
    Set(doc, "context", e->context, a);
    Set(doc, "server", e->server, a);
    Set(doc, "serverSource", e->server_source, a);
    Set(doc, "tokenSource", e->token_source, a);
    doc.AddMember("tokenSet", !e->token.empty(), a);
    console.Out(OutputJson(doc) + "\n");
    return 0;
  }
  RenderFields(console, {{"config", SafeCell(in.config_path, 300)},
                         {"context", e->context.empty() ? "-" : SafeCell(e->context, 64)},
                         {"server", SafeCell(e->server, 300)},
                         {"server from", SafeCell(e->server_source, 300)},
                         {"token from", SafeCell(e->token_source, 300)},
                         {"token", e->token.empty() ? "not set" : "set (never shown)"}});
  return 0;
}

}  // namespace pulse::cli
