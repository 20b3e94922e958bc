#include "pulse/core/status_macros.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

namespace pulse::core {
namespace {

absl::Status FailIf(bool fail, int* calls) {
  ++*calls;
  return fail ? absl::NotFoundError("gone") : absl::OkStatus();
}

absl::Status UseReturnIfError(bool fail, int* calls, bool* reached_end) {
  PULSE_RETURN_IF_ERROR(FailIf(fail, calls));
  *reached_end = true;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<std::string>> MakeValue(bool fail) {
  if (fail) {
    return absl::InvalidArgumentError("bad");
  }
  return std::make_unique<std::string>("value");
}

absl::StatusOr<std::size_t> UseAssignOrReturn(bool fail) {
  PULSE_ASSIGN_OR_RETURN(auto owned, MakeValue(fail));  // move-only value
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<std::string> second, MakeValue(false));
  return owned->size() + second->size();
}

absl::Status ReturnIfErrorOnStatusOr(bool fail) {
  PULSE_RETURN_IF_ERROR(MakeValue(fail));
  return absl::OkStatus();
}

TEST_CASE("PULSE_RETURN_IF_ERROR returns the first error and evaluates once", "[core][status]") {
  int calls = 0;
  bool reached = false;
  absl::Status st = UseReturnIfError(true, &calls, &reached);
  CHECK(st.code() == absl::StatusCode::kNotFound);
  CHECK(std::string(st.message()) == "gone");
  CHECK(calls == 1);
  CHECK_FALSE(reached);

  calls = 0;
  CHECK(UseReturnIfError(false, &calls, &reached).ok());
  CHECK(calls == 1);
  CHECK(reached);
  CHECK(ReturnIfErrorOnStatusOr(true).code() == absl::StatusCode::kInvalidArgument);
  CHECK(ReturnIfErrorOnStatusOr(false).ok());
}

TEST_CASE("PULSE_ASSIGN_OR_RETURN moves values and propagates errors", "[core][status]") {
  auto ok = UseAssignOrReturn(false);
  REQUIRE(ok.ok());
  CHECK(*ok == 10);
  auto bad = UseAssignOrReturn(true);
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pulse::core
