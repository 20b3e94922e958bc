// Fuzzes the Proxmox Backup Server answer decoders (adapters/proxmox/pbs_api.h) on hostile
// bodies: byte 0 picks the decoder, the rest is the body. Invariants: no crash; an error is
// DataLoss; decoded lists stay within kMaxPveEntries and decoded strings within
// kMaxPveStringBytes; a decoded snapshot has a known backup type, an id and a positive time; a
// decoded task names its worker type; DecodePbsError stays printable and at most 200 bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "pulse/adapters/proxmox/pbs_api.h"
#include "pulse/adapters/proxmox/pve_api.h"

namespace {

namespace pbs = pulse::proxmox;

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

template <class T>
void CheckError(const absl::StatusOr<T>& result) {
  Require(result.ok() || absl::IsDataLoss(result.status()));
}

void CheckText(const std::string& text) { Require(text.size() <= pbs::kMaxPveStringBytes); }

bool IsPrintable(std::string_view text) {
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pulse::fuzz::Input input(data, size);
  const std::uint8_t which = input.Byte();
  const std::string_view body = input.Rest();
  switch (which % 4) {
    case 0: {
      auto r = pbs::DecodeDatastoreUsage(body);
      CheckError(r);
      if (r.ok()) {
        Require(r->size() <= pbs::kMaxPveEntries);
        for (const pbs::PbsDatastoreUsage& d : *r) {
          Require(!d.store.empty());
          CheckText(d.store);
          CheckText(d.error);
        }
      }
      break;
    }
    case 1: {
      auto r = pbs::DecodeSnapshots(body);
      CheckError(r);
      if (r.ok()) {
        Require(r->size() <= pbs::kMaxPveEntries);
        for (const pbs::PbsSnapshot& s : *r) {
          Require(s.backup_type == "vm" || s.backup_type == "ct" || s.backup_type == "host");
          Require(!s.backup_id.empty() && s.backup_time > 0);
          CheckText(s.backup_id);
          CheckText(s.verify_state);
        }
      }
      break;
    }
    case 2: {
      auto r = pbs::DecodeTasks(body);
      CheckError(r);
      if (r.ok()) {
        Require(r->size() <= pbs::kMaxPveEntries);
        for (const pbs::PbsTask& t : *r) {
          Require(!t.worker_type.empty());
          CheckText(t.status);
          CheckText(t.worker_id);
        }
      }
      break;
    }
    default: {
      const std::string error = pbs::DecodePbsError(body);
      Require(IsPrintable(error) && error.size() <= 200);
      CheckError(pbs::DecodePbsVersion(body));
      break;
    }
  }
  return 0;
}
