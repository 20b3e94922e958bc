#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cli_app.h"
#include "client.h"
#include "json_output.h"
#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"

namespace pulse::cli {
namespace {

constexpr std::size_t kMaxConfigBytes = 1u << 20;
constexpr std::size_t kMaxTokenBytes = 4096;

Failure ConfigFailure(std::string_view code, std::string message) {
  return LocalFailure(ExitCode::kUsage, code, std::move(message));
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// Reads at most `limit` + 1 bytes of `path`. nullopt when it cannot be opened; errno kept.
std::optional<std::string> ReadSmallFile(const std::string& path, std::size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    errno = EINVAL;
    return std::nullopt;
  }
  std::string out;
  char buf[8192];
  while (out.size() <= limit) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

bool ParseContext(const std::string& path, const std::string& name, const rapidjson::Value& v,
                  CliContext& out, Failure& failure) {
  const std::string where = absl::StrCat(path, ": context '", name, "'");
  if (!ValidContextName(name)) {
    failure = ConfigFailure(kCodeConfigInvalid,
                            absl::StrCat(path, ": a context name is 1 to 64 of A-Z a-z 0-9 . _ -"));
    return false;
  }
  if (!v.IsObject()) {
    failure = ConfigFailure(kCodeConfigInvalid, where + " is not an object");
    return false;
  }
  out.name = name;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    const std::string key(it->name.GetString(), it->name.GetStringLength());
    std::string* field = key == "server"       ? &out.server
                         : key == "token_file" ? &out.token_file
                         : key == "token_env"  ? &out.token_env
                                               : nullptr;
    if (field == nullptr) {
      failure = ConfigFailure(
          kCodeConfigInvalid,
          absl::StrCat(where, " has an unknown key '", key, "' (server, token_file, token_env)"));
      return false;
    }
    if (!it->value.IsString() || it->value.GetStringLength() == 0 ||
        it->value.GetStringLength() > 4096) {
      failure = ConfigFailure(kCodeConfigInvalid,
                              absl::StrCat(where, ": '", key, "' must be a non-empty string"));
      return false;
    }
    field->assign(it->value.GetString(), it->value.GetStringLength());
  }
  if (out.server.empty()) {
    failure = ConfigFailure(kCodeConfigInvalid, where + " has no 'server'");
    return false;
  }
  return true;
}

// The context's token: its file's first line, or its variable. "" when it names neither.
std::optional<std::string> ContextToken(const CliContext& c, std::string& source,
                                        Failure& failure) {
  if (!c.token_file.empty()) {
    source = absl::StrCat("context ", c.name, " (file ", c.token_file, ")");
    std::optional<std::string> text = ReadSmallFile(c.token_file, kMaxTokenBytes);
    if (!text.has_value()) {
      failure = ConfigFailure(kCodeTokenUnreadable,
                              absl::StrCat("context '", c.name, "': cannot read its token file ",
                                           c.token_file, ": ", std::strerror(errno)));
      return std::nullopt;
    }
    if (text->size() > kMaxTokenBytes) {
      failure = ConfigFailure(kCodeTokenUnreadable,
                              absl::StrCat("context '", c.name, "': its token file ", c.token_file,
                                           " is larger than a token"));
      return std::nullopt;
    }
    std::string token = text->substr(0, text->find('\n'));
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) {
      token.pop_back();
    }
    return token;
  }
  if (!c.token_env.empty()) {
    source = absl::StrCat("context ", c.name, " (variable ", c.token_env, ")");
    return Env(c.token_env.c_str());
  }
  source = "none";
  return std::string();
}

}  // namespace

const CliContext* CliConfig::Find(const std::string& name) const {
  for (const CliContext& c : contexts) {
    if (c.name == name) {
      return &c;
    }
  }
  return nullptr;
}

bool ValidContextName(const std::string& name) {
  if (name.empty() || name.size() > 64) {
    return false;
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
      return false;
    }
  }
  return true;
}

std::string ConfigPath() {
  const std::string xdg = Env("XDG_CONFIG_HOME");
  if (!xdg.empty() && xdg[0] == '/') {
    return xdg + "/pulse/cli.json";
  }
  const std::string home = Env("HOME");
  return home.empty() ? "" : home + "/.config/pulse/cli.json";
}

std::optional<CliConfig> LoadConfig(const std::string& path, Failure& failure) {
  CliConfig config;
  if (path.empty()) {
    return config;
  }
  std::optional<std::string> text = ReadSmallFile(path, kMaxConfigBytes);
  if (!text.has_value()) {
    if (errno == ENOENT) {
      return config;
    }
    failure = ConfigFailure(kCodeConfigInvalid,
                            absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    return std::nullopt;
  }
  if (text->size() > kMaxConfigBytes) {
    failure = ConfigFailure(kCodeConfigInvalid, path + " is larger than 1 MiB");
    return std::nullopt;
  }
  absl::StatusOr<rapidjson::Document> doc = ParseReplyJson(*text);
  if (!doc.ok() || !doc->IsObject()) {
    failure = ConfigFailure(kCodeConfigInvalid,
                            absl::StrCat(path, " is not a JSON object; fix or remove it"));
    return std::nullopt;
  }
  const rapidjson::Value& root = *doc;  // const: clang's -Wambiguous-reversed-operator
  for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
    const std::string key(it->name.GetString(), it->name.GetStringLength());
    if (key == "current") {
      if (!it->value.IsString()) {
        failure = ConfigFailure(kCodeConfigInvalid, path + ": 'current' must be a string");
        return std::nullopt;
      }
      config.current.assign(it->value.GetString(), it->value.GetStringLength());
    } else if (key == "contexts") {
      if (!it->value.IsObject()) {
        failure = ConfigFailure(kCodeConfigInvalid, path + ": 'contexts' must be an object");
        return std::nullopt;
      }
      for (auto c = it->value.MemberBegin(); c != it->value.MemberEnd(); ++c) {
        CliContext context;
        const std::string name(c->name.GetString(), c->name.GetStringLength());
        if (config.Find(name) != nullptr) {
          failure = ConfigFailure(kCodeConfigInvalid,
                                  absl::StrCat(path, ": context '", name, "' appears twice"));
          return std::nullopt;
        }
        if (!ParseContext(path, name, c->value, context, failure)) {
          return std::nullopt;
        }
        config.contexts.push_back(std::move(context));
      }
    } else {
      failure = ConfigFailure(kCodeConfigInvalid, absl::StrCat(path, " has an unknown key '", key,
                                                               "' (current, contexts)"));
      return std::nullopt;
    }
  }
  if (!config.current.empty() && config.Find(config.current) == nullptr) {
    failure = ConfigFailure(kCodeConfigInvalid, absl::StrCat(path, ": the current context '",
                                                             config.current, "' is not defined"));
    return std::nullopt;
  }
  return config;
}

bool SaveConfig(const std::string& path, const CliConfig& config, Failure& failure) {
  auto fail = [&](const std::string& what) {
    failure = LocalFailure(ExitCode::kRefused, kCodeConfigUnwritable,
                           absl::StrCat("cannot write ", path, ": ", what));
    return false;
  };
  if (path.empty()) {
    return fail("neither XDG_CONFIG_HOME nor HOME is set");
  }
  // Create the missing parents, 0700.
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return fail(absl::StrCat(dir, ": ", std::strerror(errno)));
    }
  }
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("current");
  w.String(config.current.c_str());
  w.Key("contexts");
  w.StartObject();
  for (const CliContext& c : config.contexts) {
    w.Key(c.name.c_str());
    w.StartObject();
    w.Key("server");
    w.String(c.server.c_str());
    if (!c.token_file.empty()) {
      w.Key("token_file");
      w.String(c.token_file.c_str());
    }
    if (!c.token_env.empty()) {
      w.Key("token_env");
      w.String(c.token_env.c_str());
    }
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  const std::string text = std::string(buffer.GetString(), buffer.GetSize()) + "\n";
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return fail(std::strerror(errno));
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail(std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return fail(std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return fail(std::strerror(err));
  }
  return true;
}

std::optional<Endpoint> ResolveEndpoint(const EndpointInputs& in, Failure& failure) {
  Endpoint e;
  const std::string env_server = Env("PULSE_SERVER");
  const char* env_token = std::getenv(std::string(kTokenEnv).c_str());
  // --context is a flag: its context wins over the variables (--server still wins over it).
  const bool explicit_context = in.context_flag.has_value();
  if (in.server_flag.has_value()) {
    e.server = *in.server_flag;
    e.server_source = "--server";
  } else if (!env_server.empty() && !explicit_context) {
    e.server = env_server;
    e.server_source = "PULSE_SERVER";
  }
  if (env_token != nullptr && !explicit_context) {
    e.token = env_token;
    e.token_source = std::string(kTokenEnv);
  }
  const bool need_config = explicit_context || e.server_source.empty() || e.token_source.empty();
  if (need_config) {
    std::optional<CliConfig> config = LoadConfig(in.config_path, failure);
    if (!config.has_value()) {
      return std::nullopt;
    }
    const std::string name = in.context_flag.value_or(config->current);
    const CliContext* context = name.empty() ? nullptr : config->Find(name);
    if (!name.empty() && context == nullptr) {
      failure = ConfigFailure(kCodeContextNotFound,
                              absl::StrCat("no context named '", name, "' in ", in.config_path,
                                           "; see pulse-cli context list"));
      return std::nullopt;
    }
    if (context != nullptr) {
      e.context = context->name;
      if (e.server_source.empty()) {
        e.server = context->server;
        e.server_source = "context " + context->name;
      }
      if (e.token_source.empty()) {
        std::optional<std::string> token = ContextToken(*context, e.token_source, failure);
        if (!token.has_value()) {
          return std::nullopt;
        }
        e.token = *std::move(token);
      }
    }
  }
  if (e.server_source.empty()) {
    e.server = std::string(kDefaultServer);
    e.server_source = "default";
  }
  if (e.token_source.empty()) {
    e.token_source = "none";
  }
  return e;
}

}  // namespace pulse::cli
