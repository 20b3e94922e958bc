#include "pulse/core/json/wire_enum.h"

#include <catch2/catch.hpp>
#include <vector>

namespace pulse::core {
namespace {

enum class Kind { kText, kFlag, kNumber, kMissing };

// "bool" is an alias listed after the canonical "flag".
constexpr std::array<WireName<Kind>, 4> kKinds = {{
    {Kind::kText, "text"},
    {Kind::kFlag, "flag"},
    {Kind::kNumber, "number"},
    {Kind::kFlag, "bool"},
}};

TEST_CASE("wire tables read both ways and the first row is the canonical spelling",
          "[core][json]") {
  static_assert(WireNameOf(kKinds, Kind::kNumber) == "number");
  CHECK(WireNameOf(kKinds, Kind::kFlag) == "flag");
  CHECK(WireNameOf(kKinds, Kind::kMissing) == "unknown");
  CHECK(WireValueOf(kKinds, "bool") == Kind::kFlag);
  CHECK(WireValueOf(kKinds, "flag") == Kind::kFlag);
  CHECK_FALSE(WireValueOf(kKinds, "Flag").has_value());
  CHECK_FALSE(WireValueOf(kKinds, "").has_value());
  CHECK(WireValues(kKinds) ==
        std::vector<Kind>{Kind::kText, Kind::kFlag, Kind::kNumber, Kind::kFlag});
}

}  // namespace
}  // namespace pulse::core
