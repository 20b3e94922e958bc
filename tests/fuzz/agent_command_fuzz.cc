// Fuzzes the decoders pulse-agent runs on what a server sends (adapters/hostagent/wire.h): byte 0
// picks DecodeCommand or DecodeHello, the rest is the frame's data. Invariants: no crash; an error
// is InvalidArgument; a decoded command re-encodes to a frame that decodes to the same command
// (so what the agent records in its state file is what it was asked), has a command id, a
// deadline after its issue time, and only the members of its kind.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "pulse/adapters/hostagent/wire.h"

namespace {

namespace ha = pulse::adapters::hostagent;

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

void CheckCommand(std::string_view data) {
  const absl::StatusOr<ha::Command> c = ha::DecodeCommand(data);
  if (!c.ok()) {
    Require(absl::IsInvalidArgument(c.status()));
    return;
  }
  Require(ha::IsCommandId(c->command_id));
  Require(c->deadline > c->issued_at);
  switch (c->kind) {
    case ha::CommandKind::kDispatch:
      Require(!c->action_id.empty() && !c->attempt_id.empty() && !c->capability.empty());
      Require(c->exec_command.empty());
      break;
    case ha::CommandKind::kExec:
      Require(!c->resource_id.empty() && !c->exec_command.empty() && c->action_id.empty());
      break;
    case ha::CommandKind::kReport:
      Require(c->resource_id.empty() && c->action_id.empty() && c->exec_command.empty());
      break;
  }
  const absl::StatusOr<ha::Command> again = ha::DecodeCommand(ha::EncodeCommand(*c));
  Require(again.ok() && *again == *c);
}

void CheckHello(std::string_view data) {
  const absl::StatusOr<ha::Hello> h = ha::DecodeHello(data);
  if (!h.ok()) {
    Require(absl::IsInvalidArgument(h.status()));
    return;
  }
  Require(ha::IsAgentHostName(h->host));
  const absl::StatusOr<ha::Hello> again = ha::DecodeHello(ha::EncodeHello(*h));
  Require(again.ok() && *again == *h);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    CheckCommand(body);
  } else {
    CheckHello(body);
  }
  return 0;
}
