// The lenient member reads the Proxmox VE and Proxmox Backup Server decoders share (pve_api.cc,
// pbs_api.cc): both APIs answer in a {"data": ...} envelope and spell numbers as JSON numbers or
// numeric strings and booleans as true/false, 0/1 or "1". Every problem is DataLoss naming the
// product and the member. Internal to adapters/proxmox; pure, thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/proxmox/pve_api.h"
#include "pulse/core/json/json.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox::internal {

inline core::JsonLimits AnswerLimits() {
  core::JsonLimits limits;
  limits.max_bytes = kMaxPveAnswerBytes;
  limits.max_depth = 32;
  return limits;
}

// `product` is "Proxmox VE" or "Proxmox Backup Server": the message says whose answer it was.
inline absl::Status Malformed(std::string_view product, std::string_view what) {
  return absl::DataLossError(
      absl::StrCat("malformed ", core::ToAbsl(product), " answer: ", core::ToAbsl(what)));
}

// The "data" member of the envelope, kept alive with its document.
struct Envelope {
  rapidjson::Document doc;
  const rapidjson::Value* data = nullptr;
};

inline absl::StatusOr<Envelope> OpenEnvelope(std::string_view product, std::string_view body,
                                             bool want_array) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body, AnswerLimits());
  if (!doc.ok()) {
    return Malformed(product, "not JSON within the bounds");
  }
  Envelope env;
  env.doc = *std::move(doc);
  if (!env.doc.IsObject()) {
    return Malformed(product, "not an object");
  }
  env.data = core::GetMember(env.doc, "data");
  if (env.data == nullptr) {
    return Malformed(product, "no data member");
  }
  if (want_array ? !env.data->IsArray() : !env.data->IsObject()) {
    return Malformed(product, want_array ? "data is not a list" : "data is not an object");
  }
  if (want_array && env.data->Size() > kMaxPveEntries) {
    return Malformed(product, "too many entries");
  }
  return env;
}

// Reads members of one object leniently as Proxmox spells them, remembering the first problem.
class Fields {
 public:
  Fields(std::string_view product, const rapidjson::Value& object, std::string_view where,
         absl::Status* error)
      : product_(product), object_(object), where_(where), error_(error) {}

  std::string Str(std::string_view key) {
    const rapidjson::Value* v = core::GetMember(object_, key);
    if (v == nullptr || v->IsNull()) {
      return "";
    }
    if (v->IsString()) {
      if (v->GetStringLength() > kMaxPveStringBytes) {
        return Fail(key, "a string too long"), "";
      }
      return std::string(core::StringViewOf(*v));
    }
    if (v->IsInt64()) {  // names and tags that look like numbers
      return absl::StrCat(v->GetInt64());
    }
    return Fail(key, "a string"), "";
  }

  double Num(std::string_view key) {
    const rapidjson::Value* v = core::GetMember(object_, key);
    if (v == nullptr || v->IsNull()) {
      return 0;
    }
    double out = 0;
    if (v->IsNumber()) {
      out = v->GetDouble();
    } else if (v->IsString() && v->GetStringLength() <= 64 &&
               absl::SimpleAtod(core::ToAbsl(core::StringViewOf(*v)), &out)) {
    } else {
      return Fail(key, "a number"), 0;
    }
    if (!std::isfinite(out)) {
      return Fail(key, "a finite number"), 0;
    }
    return out;
  }

  std::int64_t Int(std::string_view key) {
    const double d = Num(key);
    if (d < -9.0e15 || d > 9.0e15) {
      return Fail(key, "an integer in range"), 0;
    }
    return static_cast<std::int64_t>(d);
  }

  std::uint64_t Count(std::string_view key) {
    const double d = Num(key);
    if (d < 0 || d > 1.8e19) {
      return Fail(key, "a non-negative count"), 0;
    }
    return d >= 9.0e18 ? std::numeric_limits<std::uint64_t>::max() / 2
                       : static_cast<std::uint64_t>(d);
  }

  // nullopt when the member is absent or null (PVE's "no value"); otherwise Num's rules plus
  // non-negative.
  std::optional<double> Maybe(std::string_view key) {
    const rapidjson::Value* v = core::GetMember(object_, key);
    if (v == nullptr || v->IsNull()) {
      return std::nullopt;
    }
    const double d = Num(key);
    if (d < 0) {
      return Fail(key, "a non-negative number"), std::nullopt;
    }
    return d;
  }

  bool Flag(std::string_view key) {
    const rapidjson::Value* v = core::GetMember(object_, key);
    if (v != nullptr && v->IsBool()) {
      return v->GetBool();
    }
    return Int(key) != 0;
  }

  const rapidjson::Value* Object(std::string_view key) {
    const rapidjson::Value* v = core::GetMember(object_, key);
    if (v == nullptr || v->IsNull()) {
      return nullptr;
    }
    if (!v->IsObject()) {
      return Fail(key, "an object"), nullptr;
    }
    return v;
  }

 private:
  void Fail(std::string_view key, std::string_view want) {
    if (error_->ok()) {
      *error_ = Malformed(product_, absl::StrCat(core::ToAbsl(where_), ".", Printable(key, 64),
                                                 " is not ", core::ToAbsl(want)));
    }
  }

  std::string_view product_;
  const rapidjson::Value& object_;
  std::string_view where_;
  absl::Status* error_;
};

}  // namespace pulse::proxmox::internal
