// Fuzzes the decoders pulse-server runs on what an agent posts (adapters/hostagent/wire.h): byte 0
// picks DecodeReport or DecodeResult, the rest is the body. Invariants: no crash; an error is
// InvalidArgument; a decoded report stays within its bounds, names only resources of its own host
// (a token bound to one host can never describe another) and references only its own resources;
// a decoded message re-encodes to one that decodes to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
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

void CheckReport(std::string_view data) {
  const absl::StatusOr<ha::Report> r = ha::DecodeReport(data);
  if (!r.ok()) {
    Require(absl::IsInvalidArgument(r.status()));
    return;
  }
  Require(ha::IsAgentHostName(r->host));
  Require(r->resources.size() <= ha::kMaxReportResources);
  Require(r->metrics.size() <= ha::kMaxReportMetrics);
  std::set<std::string> ids;
  for (const auto& resource : r->resources) {
    Require(ha::ResourceBelongsToHost(resource.id, r->host));
    Require(resource.attributes.size() <= ha::kMaxMapEntries);
    ids.insert(resource.id);
  }
  for (const auto& edge : r->relationships) {
    Require(ids.count(edge.from_id) == 1 && ids.count(edge.to_id) == 1);
  }
  for (const auto& status : r->statuses) {
    Require(ids.count(status.resource_id) == 1);
  }
  const absl::StatusOr<ha::Report> again = ha::DecodeReport(ha::EncodeReport(*r));
  Require(again.ok() && *again == *r);
}

void CheckResult(std::string_view data) {
  const absl::StatusOr<ha::Result> r = ha::DecodeResult(data);
  if (!r.ok()) {
    Require(absl::IsInvalidArgument(r.status()));
    return;
  }
  Require(ha::IsCommandId(r->command_id));
  Require(r->kind != ha::CommandKind::kReport);
  Require(!r->exec.has_value() || r->kind == ha::CommandKind::kExec);
  const absl::StatusOr<ha::Result> again = ha::DecodeResult(ha::EncodeResult(*r));
  Require(again.ok() && *again == *r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    CheckReport(body);
  } else {
    CheckResult(body);
  }
  return 0;
}
