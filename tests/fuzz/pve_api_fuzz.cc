// Fuzzes the Proxmox VE answer decoders (adapters/proxmox/pve_api.h) on hostile bodies: byte 0
// picks the decoder, the rest is the body. Invariants: no crash; an error is DataLoss; decoded
// lists stay within kMaxPveEntries and decoded strings within kMaxPveStringBytes; a decoded
// UPID has the UPID shape; decoded rrddata rows have a time and no negative value; decoded tasks
// and backup jobs have their ids; a cluster member's address is an IP literal and a
// certificate's fingerprint 32 hex pairs; Printable and DecodeErrors stay printable and bounded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "pulse/adapters/proxmox/pve_api.h"

namespace {

namespace pve = pulse::proxmox;

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

template <class T>
void CheckError(const absl::StatusOr<T>& result) {
  Require(result.ok() || absl::IsDataLoss(result.status()));
}

void CheckText(const std::string& text) { Require(text.size() <= pve::kMaxPveStringBytes); }

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
  switch (which % 13) {
    case 0: {
      auto r = pve::DecodeClusterResources(body);
      CheckError(r);
      if (r.ok()) {
        Require(r->size() <= pve::kMaxPveEntries);
        for (const pve::PveClusterResource& x : *r) {
          CheckText(x.node);
          CheckText(x.name);
          Require(!x.node.empty());
        }
      }
      break;
    }
    case 1:
      CheckError(pve::DecodeNodeStatus(body));
      break;
    case 2: {
      auto r = pve::DecodeGuestStatus(body);
      CheckError(r);
      if (r.ok()) {
        CheckText(r->lock);
        Require(!r->status.empty());
      }
      break;
    }
    case 3:
      CheckError(pve::DecodeStorageList(body));
      break;
    case 4:
      CheckError(pve::DecodeHaStatus(body));
      break;
    case 5: {
      auto r = pve::DecodeTaskStatus(body);
      CheckError(r);
      if (r.ok()) {
        Require(r->status == "running" || r->status == "stopped");
      }
      break;
    }
    case 6: {
      auto r = pve::DecodeUpid(body);
      CheckError(r);
      if (r.ok()) {
        Require(r->rfind("UPID:", 0) == 0 && IsPrintable(*r) && r->size() <= 512);
      }
      break;
    }
    case 7: {
      auto r = pve::DecodeRrdData(body);
      CheckError(r);
      if (r.ok()) {
        Require(r->size() <= pve::kMaxPveEntries);
        for (const pve::PveRrdRow& row : *r) {
          Require(row.time > 0 && (!row.used.has_value() || *row.used >= 0) &&
                  (!row.cpu.has_value() || *row.cpu >= 0));
        }
      }
      break;
    }
    case 8: {
      auto r = pve::DecodeClusterTasks(body);
      CheckError(r);
      if (r.ok()) {
        for (const pve::PveTask& t : *r) {
          Require(!t.upid.empty() && !t.node.empty() && !t.type.empty());
          CheckText(t.status);
        }
      }
      break;
    }
    case 9: {
      auto r = pve::DecodeBackupJobs(body);
      CheckError(r);
      if (r.ok()) {
        for (const pve::PveBackupJob& j : *r) {
          Require(!j.id.empty());
          CheckText(j.vmid);
        }
      }
      break;
    }
    case 10: {
      // A member's ip becomes part of a URL: only a plain IP literal may come out.
      auto r = pve::DecodeClusterStatus(body);
      CheckError(r);
      if (r.ok()) {
        for (const pve::PveClusterMember& m : *r) {
          Require(!m.name.empty());
          CheckText(m.name);
          Require(m.ip.size() <= 64 &&
                  m.ip.find_first_not_of("0123456789abcdefABCDEF:.") == std::string::npos);
        }
      }
      break;
    }
    case 11: {
      auto r = pve::DecodeCertificateInfo(body);
      CheckError(r);
      if (r.ok()) {
        for (const pve::PveCertificate& c : *r) {
          Require(c.fingerprint.size() == 95 && IsPrintable(c.fingerprint));
        }
        const pve::PveCertificate* presented = pve::ProxyCertificate(*r);
        Require(presented == nullptr || presented->filename == "pve-ssl.pem" ||
                presented->filename == "pveproxy-ssl.pem");
      }
      break;
    }
    default: {
      const std::string errors = pve::DecodeErrors(body);
      Require(IsPrintable(errors) && errors.size() <= 1024);
      const std::string printable = pve::Printable(body, 100);
      Require(IsPrintable(printable) && printable.size() <= 100);
      CheckError(pve::DecodeVersion(body));
      break;
    }
  }
  return 0;
}
