// BodyValidator: the closed-schema check of a JSON request body, run before any handler. A
// body must parse within bounds (core::ParseJson, then core::CheckArgumentStructure: depth,
// size, UTF-8, no duplicate keys), be an object, name only declared members, carry every
// required one, and pass the schema (RapidJSON's validator). Every refusal is the agent
// envelope with the route's body error code and {member: problem} details; no refusal echoes
// a submitted value. Thread-safe (validations against one schema are serialized: RapidJSON
// 1.1.0 keeps regex scratch state inside the compiled schema).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/adapters/http/http_types.h"
#include "pulse/core/errors/agent_error.h"
#include "rapidjson/document.h"
#include "rapidjson/schema.h"

namespace pulse::adapters::http {

class BodyValidator {
 public:
  // Compiles `schema_json`, which must be an object schema. InvalidArgument otherwise.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BodyValidator>> Compile(
      std::string_view schema_json);

  BodyValidator(const BodyValidator&) = delete;
  BodyValidator& operator=(const BodyValidator&) = delete;

  // nullopt when `body` (empty or blank reads as {}) is acceptable; otherwise the error with
  // `code`. A member named like a path parameter must equal that parameter's value.
  std::optional<core::AgentError> Validate(std::string_view body, core::AgentErrorCode code,
                                           const PathParams& path_params) const;

 private:
  BodyValidator() = default;

  rapidjson::Document schema_;
  // Validations against it are serialized (RapidJSON keeps regex scratch state in it).
  std::unique_ptr<rapidjson::SchemaDocument> compiled_ ABSL_PT_GUARDED_BY(validate_mu_);
  std::vector<std::string> declared_;  // root property names
  std::vector<std::string> required_;  // root required names
  bool closed_ = false;                // root additionalProperties: false
  mutable absl::Mutex validate_mu_;
};

// What a handler's body decoder expects of the path parameters a client may repeat in the
// body: set_operator_state's decoder wants resourceId in the body, decide/execute's refuse
// actionId there, while the MCP call projection never sends path arguments in a body.
enum class PathParamsInBody {
  kAdd,     // add each path parameter the body lacks
  kRemove,  // remove each path parameter the body has
};

// `body` (a JSON object that passed BodyValidator; empty or blank reads as {}) with the path
// parameters added or removed, re-serialized compactly with the other members in order.
// A body that does not parse as an object comes back unchanged (its decoder refuses it).
std::string BodyWithPathParams(std::string_view body, const PathParams& path_params,
                               PathParamsInBody mode);

}  // namespace pulse::adapters::http
