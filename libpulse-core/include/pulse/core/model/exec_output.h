// What an executor returns for a read-only command the exec classifier accepted
// (tools/exec_classifier.h decides what may run; ports/fleet.h runs it).
#pragma once

#include <cstddef>
#include <string>

namespace pulse::core {

// The most command output an executor returns (the rest is dropped and flagged).
inline constexpr std::size_t kMaxExecOutputBytes = 64 * 1024;

// What an executor returns for an accepted command.
struct ExecOutput {
  int exit_code = 0;
  std::string output;      // stdout then stderr, at most kMaxExecOutputBytes
  bool truncated = false;  // output beyond the bound was dropped
  bool simulated = false;  // answered by a simulator rather than a real program
};

}  // namespace pulse::core
