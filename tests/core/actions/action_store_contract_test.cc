// Runs the reusable store contracts against the in-memory fakes; the SQLite adapters run the
// same suites.
#include "contracts/action_store_contract.h"

#include <catch2/catch.hpp>
#include <memory>

#include "contracts/operator_state_store_contract.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_operator_state_store.h"

namespace pulse::testing {
namespace {

TEST_CASE("InMemoryActionStore honours the ActionStore contract", "[core][actions][contract]") {
  RunActionStoreContract([] { return std::make_unique<InMemoryActionStore>(); });
}

TEST_CASE("InMemoryOperatorStateStore honours the OperatorStateStore contract",
          "[core][actions][contract]") {
  RunOperatorStateStoreContract([] { return std::make_unique<InMemoryOperatorStateStore>(); });
}

}  // namespace
}  // namespace pulse::testing
