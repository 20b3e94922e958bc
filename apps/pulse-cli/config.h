// pulse-cli's config file: named contexts (a server and where its token comes from) and the
// current one (docs/cli.md, "Contexts"). The file is $XDG_CONFIG_HOME/pulse/cli.json, else
// ~/.config/pulse/cli.json, written mode 0600 (its directory 0700) by an atomic rename:
//   {"current": "prod",
//    "contexts": {"prod": {"server": "https://pulse.example:7655", "token_file": "/root/.t"},
//                 "lab":  {"server": "http://127.0.0.1:7655", "token_env": "LAB_TOKEN"}}}
// A file that is not exactly this shape is refused with the stable code config_invalid (exit
// 2), never half-read. The token itself is never stored: a context names a file (its first
// line) or an environment variable.
//
// Precedence, flags before variables before the file: the server is --server > --context NAME's
// > PULSE_SERVER > the current context's > the default; the token is --context NAME's >
// PULSE_API_TOKEN > the current context's > none.
// Not thread-safe (reads the environment); one call per process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "failure.h"

namespace pulse::cli {

inline constexpr std::string_view kCodeConfigInvalid = "config_invalid";           // exit 2
inline constexpr std::string_view kCodeContextNotFound = "context_not_found";      // exit 2
inline constexpr std::string_view kCodeTokenUnreadable = "token_file_unreadable";  // exit 2
inline constexpr std::string_view kCodeConfigUnwritable = "config_unwritable";     // exit 1

struct CliContext {
  std::string name;
  std::string server;
  std::string token_file;  // absolute; "" for none
  std::string token_env;   // a variable name; "" for none
};

struct CliConfig {
  std::string current;  // "" for none
  std::vector<CliContext> contexts;

  const CliContext* Find(const std::string& name) const;
};

// $XDG_CONFIG_HOME/pulse/cli.json when XDG_CONFIG_HOME is an absolute path, else
// $HOME/.config/pulse/cli.json; "" when neither is set.
std::string ConfigPath();

// The config at `path`; an empty config when the file does not exist. nullopt with `failure`
// set (config_invalid) when it cannot be read or is not the documented shape.
std::optional<CliConfig> LoadConfig(const std::string& path, Failure& failure);

// Writes `config` to `path` (mode 0600, parent directories 0700) through a temporary file and
// a rename. False with `failure` set (config_unwritable).
bool SaveConfig(const std::string& path, const CliConfig& config, Failure& failure);

// A context name: 1 to 64 of [A-Za-z0-9._-].
bool ValidContextName(const std::string& name);

// Where the server and the token come from, after the precedence rule above.
struct Endpoint {
  std::string server;
  std::string server_source;  // "--server", "PULSE_SERVER", "context NAME", "default"
  std::string token;
  std::string token_source;  // "PULSE_API_TOKEN", "context NAME (file F)", ..., "none"
  std::string context;       // the context used, "" for none
};

struct EndpointInputs {
  std::optional<std::string> server_flag;
  std::optional<std::string> context_flag;
  std::string config_path;
};

// Resolves the endpoint; the config file is read only when a flag or variable leaves something
// open or --context names one. nullopt with `failure` set on a bad file, an unknown context or
// an unreadable token file.
std::optional<Endpoint> ResolveEndpoint(const EndpointInputs& in, Failure& failure);

}  // namespace pulse::cli
