// `pulse-cli context add|use|list|show|remove`: the named contexts of the config file
// (config.h). Local commands: none of them talks to a server. Each returns the exit code.
#pragma once

#include <string>

#include "config.h"
#include "console.h"

namespace pulse::cli {

struct ContextArgs {
  std::string name;
  std::string server;
  std::string token_file;
  std::string token_env;
  bool use = false;  // add: make it the current context too
};

int CmdContextAdd(const Console& console, const ContextArgs& args, const std::string& path);
int CmdContextUse(const Console& console, const ContextArgs& args, const std::string& path);
int CmdContextRemove(const Console& console, const ContextArgs& args, const std::string& path);
int CmdContextList(const Console& console, const std::string& path);
// The effective server and token source after the precedence rule (config.h).
int CmdContextShow(const Console& console, const EndpointInputs& in);

}  // namespace pulse::cli
