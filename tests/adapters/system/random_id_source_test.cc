#include "pulse/adapters/system/random_id_source.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

namespace pulse::adapters::system {
namespace {

TEST_CASE("random ids are 32 lowercase hex digits and do not repeat", "[adapters][system]") {
  auto ids = RandomIdSource::Open();
  REQUIRE(ids.ok());
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    const std::string id = (*ids)->NewId();
    REQUIRE(id.size() == 32);
    CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(id);
  }
  CHECK(seen.size() == 10000);
}

}  // namespace
}  // namespace pulse::adapters::system
