// Whether opening a key file may create it. Plain enum; see secret_box.h and
// sqlite_token_store.h for the key files themselves.
#pragma once

namespace pulse::adapters::storage {

enum class KeyFileMode {
  kCreateIfMissing,  // a missing key file is generated (first start of a new data dir)
  kMustExist,        // a missing key file is FailedPrecondition
};

}  // namespace pulse::adapters::storage
