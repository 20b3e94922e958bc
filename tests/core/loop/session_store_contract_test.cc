// The SessionStore contract suite against the in-memory fake (the SQLite adapter runs the
// same suite).
#include "contracts/session_store_contract.h"

#include <catch2/catch.hpp>
#include <memory>

#include "pulse/testing/in_memory_session_store.h"

namespace pulse::testing {
namespace {

TEST_CASE("InMemorySessionStore honours the SessionStore contract", "[core][loop]") {
  RunSessionStoreContract([] { return std::make_unique<InMemorySessionStore>(); });
}

}  // namespace
}  // namespace pulse::testing
