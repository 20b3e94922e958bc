// Private to adapters/http_client: one HTTP/1.1 reply read from bytes as they arrive, for the
// kept transport (src/kept_http.h) and its fuzz target (tests/fuzz/http_reply_fuzz.cc). Boost.
// Beast's response parser (the server's own) driven through its callbacks: the final head and
// each body piece go to an ExchangeState (the caller's callbacks, the body cap); a 1xx reply is
// skipped for the one that follows; a status line without a reason phrase is read as libcurl
// reads it. No I/O: the caller reads into Space() and says how much arrived.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "src/exchange_state.h"

namespace pulse::http_client {

class ReplyReader {
 public:
  enum class Progress {
    kMore,    // the reply is not complete: read more
    kDone,    // the whole reply was read (reusable() tells whether the connection can go on)
    kFailed,  // failure() tells why
  };

  // `state` outlives the reader. `head_only`: the reply to a HEAD (no body).
  ReplyReader(ExchangeState& state, bool head_only);
  ~ReplyReader();
  ReplyReader(const ReplyReader&) = delete;
  ReplyReader& operator=(const ReplyReader&) = delete;

  // Where the next read writes (at least 64 KiB), then Added with the count read there.
  std::pair<char*, std::size_t> Space();
  Progress Added(std::size_t n);
  // The connection ended (`reset`: broke rather than closed): kDone for a reply whose body runs
  // to the close, else kFailed (the connection was lost).
  Progress End(bool reset);

  bool received() const;  // whether any byte arrived
  bool reusable() const;  // after kDone: the server keeps the connection, nothing came after
  // After kFailed: a ClientError (protocol, too large, cancelled, connection lost), or
  // absl::CancelledError without an ErrorKind when a callback stopped the exchange.
  absl::Status failure() const;

 private:
  class Impl;  // Beast stays out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace pulse::http_client
