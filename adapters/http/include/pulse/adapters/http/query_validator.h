// QueryValidator: the declared query parameters of one route and their check, run in request
// dispatch before any handler (the query counterpart of BodyValidator). The declaration is an
// object schema whose properties are the parameters, each of type string, integer or boolean
// (enum, minimum, maximum, minLength, maxLength and pattern apply as in JSON Schema). A query
// is refused when it names a parameter not declared, repeats one, or gives a value that does
// not convert to the declared type — integer: an optional "-" and at most 18 decimal digits
// (no "+", exponent, fraction or spaces); boolean: true, false, 1 or 0 in any case — or that
// then breaks the schema; a string holding a control character is refused too. Each refusal
// is the agent envelope with the route's code (or the parameter's own), details
// {parameter: problem}, and never echoes a value. Thread-safe (validations are serialized,
// as RapidJSON 1.1.0's compiled schemas keep regex scratch state).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/adapters/http/http_types.h"
#include "pulse/core/errors/agent_error.h"
#include "rapidjson/document.h"
#include "rapidjson/schema.h"

namespace pulse::adapters::http {

class QueryValidator {
 public:
  enum class Type { kString, kInteger, kBoolean };

  // Compiles `schema_json` (empty: no parameter is declared). InvalidArgument for a schema
  // that is not an object schema, or a parameter of another type.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<QueryValidator>> Compile(
      std::string_view schema_json);

  QueryValidator(const QueryValidator&) = delete;
  QueryValidator& operator=(const QueryValidator&) = delete;

  // nullopt when `query` is acceptable; otherwise the refusal with `code`, or with
  // `param_codes[name]` when the parameter at fault has a code of its own.
  std::optional<core::AgentError> Validate(
      const QueryParams& query, core::AgentErrorCode code,
      const std::map<std::string, core::AgentErrorCode>& param_codes = {}) const;

  // The declared parameters and their types.
  const std::map<std::string, Type>& parameters() const { return parameters_; }

 private:
  QueryValidator() = default;

  rapidjson::Document schema_;
  // Null when nothing is declared.
  std::unique_ptr<rapidjson::SchemaDocument> compiled_ ABSL_PT_GUARDED_BY(validate_mu_);
  std::map<std::string, Type> parameters_;
  mutable absl::Mutex validate_mu_;
};

}  // namespace pulse::adapters::http
