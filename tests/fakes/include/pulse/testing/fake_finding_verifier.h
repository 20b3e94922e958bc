// FakeFindingVerifier: a FindingVerifier scripted per normalized finding key. A key with no
// script has no verifier (CanVerify is false). Every Verify call is recorded. Thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/ports/finding_verifier.h"

namespace pulse::testing {

class FakeFindingVerifier final : public core::FindingVerifier {
 public:
  // Findings with this key now have a verifier that answers `result` (a verdict or an
  // error) until scripted again.
  void Script(std::string_view key, absl::StatusOr<core::VerifierVerdict> result) {
    absl::MutexLock lock(&mu_);
    scripts_.insert_or_assign(std::string(key), std::move(result));
  }

  bool CanVerify(const core::Finding& finding) const override {
    absl::MutexLock lock(&mu_);
    return scripts_.count(finding.key) > 0;
  }

  absl::StatusOr<core::VerifierVerdict> Verify(const core::Finding& finding) override {
    absl::MutexLock lock(&mu_);
    verified_ids_.push_back(finding.id);
    auto it = scripts_.find(finding.key);
    if (it == scripts_.end()) {
      return core::VerifierVerdict::kInconclusive;
    }
    return it->second;
  }

  // Ids passed to Verify, in call order.
  std::vector<std::string> verified_ids() const {
    absl::MutexLock lock(&mu_);
    return verified_ids_;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, absl::StatusOr<core::VerifierVerdict>> scripts_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> verified_ids_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
