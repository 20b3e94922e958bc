// InMemoryTokenStore: the TokenStore fake. Tokens are deterministic (derived from a counter,
// so tests can predict nothing but also need nothing random) and indexed by their SHA-256, so
// like the real store it never keeps a raw token. Validates exactly as the port demands; the
// comparison is not constant-time (a fake needs no timing defence). FailNext injects one error
// into the next call. Thread-safe (one absl::Mutex).
#pragma once

#include <sodium/crypto_hash_sha256.h>
#include <sodium/utils.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/auth/api_token.h"
#include "pulse/core/ports/token_store.h"

namespace pulse::testing {

class InMemoryTokenStore final : public core::TokenStore {
 public:
  absl::StatusOr<core::IssuedApiToken> Create(const core::NewApiToken& request) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    absl::StatusOr<std::vector<std::string>> scopes = core::ValidateNewApiToken(request);
    if (!scopes.ok()) {
      return scopes.status();
    }
    ++counter_;
    core::IssuedApiToken issued;
    issued.info.id = absl::StrFormat("tok_%016x", counter_);
    issued.info.name = request.name;
    issued.info.kind = request.kind;
    issued.info.scopes = *std::move(scopes);
    issued.info.created_at = request.created_at;
    issued.info.expires_at = request.expires_at;
    const std::string seed = "fake-token-" + std::to_string(counter_);
    issued.token = std::string(core::kApiTokenPrefix) + Base64Url(Sha256(seed));
    tokens_[Sha256(issued.token)] = issued.info;
    return issued;
  }

  absl::StatusOr<core::ApiTokenInfo> Authenticate(std::string_view token, absl::Time now) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    if (!core::HasApiTokenShape(token)) {
      return absl::UnauthenticatedError("API token is not valid");
    }
    auto it = tokens_.find(Sha256(token));
    if (it == tokens_.end()) {
      return absl::UnauthenticatedError("API token is not valid");
    }
    if (core::IsApiTokenExpired(it->second, now)) {
      return absl::UnauthenticatedError("API token has expired");
    }
    if (core::ShouldRecordApiTokenUse(it->second, now)) {
      it->second.last_used_at = now;
    }
    return it->second;
  }

  absl::StatusOr<std::vector<core::ApiTokenInfo>> List() override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    std::vector<core::ApiTokenInfo> out;
    for (const auto& [hash, info] : tokens_) {
      out.push_back(info);
    }
    std::sort(out.begin(), out.end(), [](const core::ApiTokenInfo& a, const core::ApiTokenInfo& b) {
      return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
    });
    return out;
  }

  absl::Status Revoke(std::string_view id) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    for (auto it = tokens_.begin(); it != tokens_.end(); ++it) {
      if (it->second.id == id) {
        tokens_.erase(it);
        return absl::OkStatus();
      }
    }
    return absl::NotFoundError("no such API token");
  }

  // The next call of any method returns `status` (once).
  void FailNext(absl::Status status) {
    absl::MutexLock lock(&mu_);
    injected_ = std::move(status);
  }

 private:
  static std::string Sha256(std::string_view text) {
    std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
    crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(text.data()),
                       text.size());
    return std::string(digest.begin(), digest.end());
  }

  static std::string Base64Url(std::string_view bytes) {
    std::string out(
        sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING), '\0');
    sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                      bytes.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    out.resize(out.find('\0'));
    return out;
  }

  absl::Status TakeInjected() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!injected_.has_value()) {
      return absl::OkStatus();
    }
    absl::Status s = std::move(*injected_);
    injected_.reset();
    return s;
  }

  absl::Mutex mu_;
  // By SHA-256 of the raw token.
  std::map<std::string, core::ApiTokenInfo> tokens_ ABSL_GUARDED_BY(mu_);
  std::uint64_t counter_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<absl::Status> injected_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
