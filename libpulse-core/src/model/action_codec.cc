#include "pulse/core/model/action_codec.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "pulse/core/string_view.h"

namespace pulse::core {

namespace action_internal {
namespace {

// A member name fit for an error message: at most 64 bytes of printable ASCII.
std::string PrintableName(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7F ? c : '?');
  }
  return out;
}

absl::Status MemberError(const JsonReadError& e, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(e.path, ".", e.member, " ", ToAbsl(problem)));
}

}  // namespace

absl::Status RenderActionJsonError(const JsonReadError& e) {
  switch (e.problem) {
    case JsonReadProblem::kUnknownMember:
      return absl::InvalidArgumentError(
          absl::StrCat(e.path, ": unknown member '", PrintableName(e.member), "'"));
    case JsonReadProblem::kDuplicateMember:
      return absl::InvalidArgumentError(
          absl::StrCat(e.path, ": member '", PrintableName(e.member), "' appears more than once"));
    case JsonReadProblem::kBadText:
      return MemberError(e, "must be valid UTF-8 without control characters");
    case JsonReadProblem::kNotTimeString:
      return MemberError(e, "must be an RFC 3339 time string");
    case JsonReadProblem::kBadTime:
      return MemberError(e, "must be an RFC 3339 time between 1970 and 9999");
    default:
      return RenderJsonReadError(e);
  }
}

}  // namespace action_internal

}  // namespace pulse::core
