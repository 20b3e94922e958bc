// FindingVerifier: a deterministic, model-free re-check of the signal behind a finding (is the
// backup still failing? is the disk still over its threshold?). It is the only thing that may
// close a backup, reliability, security or general finding on Patrol's behalf: the model's
// word is not enough. Real implementations re-read the fleet with a bounded
// deadline; tests use pulse::testing::FakeFindingVerifier.
// Thread-safety: implementations must be safe to call from any thread.
// Codes: Verify may return any error (DeadlineExceeded, Unavailable, ...). Callers treat every
// error exactly like kInconclusive: "we do not know", which never resolves anything.
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/model/finding.h"

namespace pulse::core {

class FindingVerifier {
 public:
  virtual ~FindingVerifier() = default;

  // Whether a deterministic check exists for this finding (usually decided by its category
  // and normalized key). The single source of truth for "has a verifier": the resolve gate
  // and the stale reconciliation both ask it. Must not block.
  virtual bool CanVerify(const Finding& finding) const = 0;

  // Re-checks the signal now. A finding CanVerify rejects yields kInconclusive or an error.
  [[nodiscard]] virtual absl::StatusOr<VerifierVerdict> Verify(const Finding& finding) = 0;
};

}  // namespace pulse::core
