// The HTTP transport (issue 22, docs/server.md "The HTTP transport"):
// Boost.Beast's HTTP/1.1 parser and serializer on Asio event loops, one io_context per core,
// no thread per connection or stream. Every bound is a timer or a count on the connection:
//
//   head larger than max_head_bytes, a header line over max_line_bytes, too many fields ... 431
//   request line over max_line_bytes ...................................................... 414
//   head not complete within head_deadline (+0-10 %, spread) of its first byte ........... 408
//   body over max_body_bytes (declared or chunked) ......................................... 413
//   body not complete within body_deadline ................................................. 408
//   over max_connections, or max_connections_per_peer from one address .................... 503
//
// Each refusal is the agent envelope, then a lingering close (stop sending, discard what the
// client still sends for a moment) so the reply is not destroyed by a reset. An idle
// keep-alive connection holds no parser or buffer, only a readiness wait and its idle timer.
// Requests to inline_routes are answered on the event loop, and so are those to loop_routes
// unless a call in them refuses to wait (core::NoBlockingScope); the rest run the pipeline
// (request_pipeline.h) on a fixed handler pool, one request per connection at a time. Event
// streams are written from SseStream's wake-up (SetWakeup/TryNext) and a heartbeat timer
// whose first beat is jittered. This is the only file that includes Boost (its compile is
// slow; docs/server.md).

// clang-format off
// Before Asio: Boost 1.74's asio/awaitable.hpp uses std::exchange without <utility> (GCC 12,
// C++20).
#include <utility>
// clang-format on

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/core/ports/no_blocking.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "request_pipeline.h"
#include "server_impl.h"

namespace pulse::adapters::http::internal {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using ErrorCode = boost::system::error_code;

std::chrono::milliseconds Millis(absl::Duration d) {
  return std::chrono::milliseconds(std::max<std::int64_t>(1, absl::ToInt64Milliseconds(d)));
}

// Posts wake-ups of event streams to their connection's loop while the loops exist; Stop
// closes it before the loops are destroyed (a producer may be calling a wake-up then).
class WakeGate {
 public:
  template <typename F>
  void Post(const net::any_io_executor& executor, F&& f) {
    absl::ReaderMutexLock lock(&mu_);
    if (open_) {
      net::post(executor, std::forward<F>(f));
    }
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    open_ = false;
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
};

// Which bound refused a request or a connection (metrics labels).
enum class Bound { kHead, kLine, kFields, kTarget, kBody };
const char* BoundLabel(Bound b) {
  switch (b) {
    case Bound::kHead:
      return "head";
    case Bound::kLine:
      return "line";
    case Bound::kFields:
      return "fields";
    case Bound::kTarget:
      return "target";
    case Bound::kBody:
      return "body";
  }
  return "head";
}

// A transport refusal's bytes (the agent envelope, Connection: close), built once per status and
// message on each loop: a flood of refusals (a slowloris wave reaching its head deadline)
// costs a write each, not a response object and a serialisation each.
const std::string& RefusalBytes(int status, const std::string& message) {
  thread_local std::map<std::pair<int, std::string>, std::string> cache;
  auto [it, inserted] = cache.try_emplace({status, message});
  if (inserted) {
    HttpReply reply = TransportRefusal(status, message);
    if (status == 503) {
      reply.headers.emplace_back("Retry-After", "1");
    }
    const beast::string_view reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
    std::string& bytes = it->second;
    absl::StrAppend(&bytes, "HTTP/1.1 ", status, " ",
                    core::ToAbsl(std::string_view(reason.data(), reason.size())), "\r\n");
    for (const auto& [name, value] : reply.headers) {
      if (IsSafeHeader(name, value)) {
        absl::StrAppend(&bytes, name, ": ", value, "\r\n");
      }
    }
    absl::StrAppend(&bytes, "X-Content-Type-Options: nosniff\r\nContent-Type: ", reply.content_type,
                    "\r\nConnection: close\r\nContent-Length: ", reply.body.size(), "\r\n\r\n",
                    reply.body);
  }
  return it->second;
}

// Where lingering closes read what a refused client still sends: the bytes are dropped, so one
// buffer per loop serves every connection on it (reads complete on the loop's thread).
std::array<char, 4096>& DiscardBuffer() {
  thread_local std::array<char, 4096> buffer;
  return buffer;
}

// The bytes of a constant route's reply (HttpServerOptions::constant_routes), kept per loop and
// path (at most kMaxConstantReplies paths), for a kept-alive and a closing connection.
struct ConstantReply {
  std::string route;
  std::string keep_alive;
  std::string close;
};
constexpr std::size_t kMaxConstantReplies = 16;
std::map<std::string, ConstantReply, std::less<>>& LoopConstantReplies() {
  thread_local std::map<std::string, ConstantReply, std::less<>> replies;
  return replies;
}
const ConstantReply* FindConstantReply(std::string_view path) {
  auto& replies = LoopConstantReplies();
  auto it = replies.find(path);
  return it == replies.end() ? nullptr : &it->second;
}
void LearnConstantReply(const std::string& path, const std::string& route, const HttpReply& reply) {
  auto& replies = LoopConstantReplies();
  if (replies.size() >= kMaxConstantReplies || replies.count(path) > 0) {
    return;
  }
  // The same head Connection::Write gives (Beast's order: the reply's headers, then ours).
  std::string head = "HTTP/1.1 200 OK\r\n";
  for (const auto& [name, value] : reply.headers) {
    if (IsSafeHeader(name, value)) {
      absl::StrAppend(&head, name, ": ", value, "\r\n");
    }
  }
  head += "X-Content-Type-Options: nosniff\r\n";
  if (!reply.body.empty()) {
    absl::StrAppend(&head, "Content-Type: ", reply.content_type, "\r\n");
  }
  ConstantReply constant;
  constant.route = route;
  constant.keep_alive =
      absl::StrCat(head, "Content-Length: ", reply.body.size(), "\r\n\r\n", reply.body);
  constant.close = absl::StrCat(head, "Connection: close\r\nContent-Length: ", reply.body.size(),
                                "\r\n\r\n", reply.body);
  replies.emplace(path, std::move(constant));
}

class BeastTransport;

class Connection final : public std::enable_shared_from_this<Connection> {
 public:
  enum class Admission { kAdmitted, kGlobal, kPeer };
  Connection(tcp::socket socket, BeastTransport& server, net::ip::address peer,
             Admission admission);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  void Start();
  net::any_io_executor executor() { return socket_.get_executor(); }

 private:
  void WaitForRequest();
  void ReadHead();
  void OnHead(ErrorCode ec);
  void OnBody(ErrorCode ec);
  void Serve();
  std::optional<Outcome> DecideOnLoop(const RawRequest& request);
  void Respond(Outcome& outcome);
  void Write(HttpReply& reply, bool keep_alive, bool linger);
  void WriteConstant(const ConstantReply& constant);
  // Writes bytes that outlive the write (RefusalBytes), closes with a lingering close.
  void WriteRefusal(const std::string& bytes);
  // A refusal by the transport itself (no route known yet).
  void Refuse(int status, std::optional<Bound> bound, const std::string& message = "");
  void Linger();
  void StartStream(Outcome& outcome);
  void OnWake();
  void Pump();
  void WriteChunk(std::string_view data, bool last);
  void ArmHeartbeat(bool first);
  void EndStream(bool clean);
  void Close();
  void Arm(std::chrono::milliseconds after);
  void Wait();
  // Cancels the next batch of this loop's expired operations (LoopExpiries).
  static void CancelExpired();
  bool Disarm();  // true when the deadline had expired

  tcp::socket socket_;
  net::steady_timer deadline_;
  net::steady_timer heartbeat_;
  BeastTransport& server_;
  const net::ip::address peer_;
  const Admission admission_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::unique_ptr<bhttp::response<bhttp::string_body>> response_;
  RawRequest raw_;
  std::string constant_path_;  // the target, while the request may have a constant reply
  BodyFraming framing_;
  bool body_read_ = false;
  Clock::time_point started_;
  std::size_t served_ = 0;
  std::uint64_t generation_ = 0;
  bool expired_ = false;
  // The deadline (Arm, Wait): when it falls due, whether one is armed, the wait in progress.
  Clock::time_point deadline_at_;
  bool armed_ = false;
  bool waiting_ = false;
  Clock::time_point wait_until_;
  std::uint64_t wait_id_ = 0;
  bool closed_ = false;
  // Lingering close.
  std::size_t discarded_ = 0;
  bool lingering_ = false;
  // The event stream, once the reply is one.
  std::shared_ptr<SseStream> stream_;
  StreamSlot slot_;
  std::string chunk_;
  bool writing_ = false;
  bool ending_ = false;
  const std::shared_ptr<std::atomic<bool>> wake_pending_ =
      std::make_shared<std::atomic<bool>>(false);
};

class BeastTransport final : public HttpServer::Impl {
 public:
  BeastTransport(HttpServerOptions options, Router router, TokenAuthenticator& authenticator)
      : options_(std::move(options)), pipeline_(options_, std::move(router), authenticator) {}
  ~BeastTransport() override { BeastTransport::Stop(); }
  BeastTransport(const BeastTransport&) = delete;
  BeastTransport& operator=(const BeastTransport&) = delete;

  absl::Status Open(MetricsRegistry* metrics);
  absl::Status Start() override;
  void Stop() override;
  int port() const override { return port_; }
  HttpServerStats Stats() const override;

  const HttpServerOptions& options() const { return options_; }
  RequestPipeline& pipeline() { return pipeline_; }
  std::shared_ptr<WakeGate> gate_ptr() const { return gate_; }
  net::thread_pool& handlers() { return *handlers_; }
  std::atomic<int>& in_flight() { return in_flight_; }

  // Where a request runs: on its event loop (inline_routes, and a request refused before any
  // handler), on its loop first (loop_routes: on the pool after all when a call in it refused
  // to wait), or on the handler pool.
  enum class Placement { kLoop, kLoopFirst, kPool };
  Placement Place(const RawRequest& req) const;
  // Counts a loop_routes request the loop answered, or one it sent on to the pool.
  void CountLoopRun(bool answered) { (answered ? loop_answered_ : loop_refused_).fetch_add(1); }
  bool IsConstant(const std::string& route) const {
    return std::find(options_.constant_routes.begin(), options_.constant_routes.end(), route) !=
           options_.constant_routes.end();
  }
  void Release(const net::ip::address& peer);
  void ConnectionOpened(int delta);
  void Refused(Bound bound);
  void ConnectionRefused(const char* reason);
  void Expired(const char* phase);
  void Record(const std::string& method, const std::string& route, int status,
              Clock::duration elapsed, bool stream);

 private:
  void Accept();
  Connection::Admission Admit(const net::ip::address& peer);

  const HttpServerOptions options_;
  RequestPipeline pipeline_;
  std::vector<std::unique_ptr<net::io_context>> loops_;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> guards_;
  std::vector<std::thread> threads_;
  // One acceptor, on the first loop: only that loop's epoll watches the listening socket, so a
  // new connection wakes one thread. Each accepted connection goes to the loops in turn and is
  // set up there. (With every loop's epoll on the socket, every connection woke every loop,
  // and on the 2-core VM connect() then took ~3 ms for tens of seconds at a time, idle or
  // not: tests/fault/TRANSPORT.md, "One waiter on the listening socket".)
  struct Listener {
    std::unique_ptr<tcp::acceptor> acceptor;
    std::unique_ptr<net::steady_timer> retry;
    tcp::endpoint peer;  // filled by the accept itself (no getpeername per connection)
  };
  std::optional<Listener> listener_;
  std::size_t next_loop_ = 0;  // the loop the next connection goes to (the first loop's thread)
  std::unique_ptr<net::thread_pool> handlers_;
  const std::shared_ptr<WakeGate> gate_ = std::make_shared<WakeGate>();
  int port_ = -1;
  std::atomic<int> in_flight_{0};
  std::atomic<std::uint64_t> loop_answered_{0};
  std::atomic<std::uint64_t> loop_refused_{0};
  std::atomic<int> open_connections_{0};

  absl::Mutex admission_mu_;
  std::size_t total_ ABSL_GUARDED_BY(admission_mu_) = 0;
  std::map<net::ip::address, std::size_t> per_peer_ ABSL_GUARDED_BY(admission_mu_);

  absl::Mutex state_mu_;
  enum class State { kBound, kRunning, kStopped } state_ ABSL_GUARDED_BY(state_mu_) = State::kBound;

  GaugeFamily* workers_ = nullptr;
  GaugeFamily* connections_ = nullptr;
  CounterFamily* connections_refused_ = nullptr;
  CounterFamily* requests_refused_ = nullptr;
  CounterFamily* expiries_ = nullptr;
};

// ---------------------------------------------------------------- Connection

Connection::Connection(tcp::socket socket, BeastTransport& server, net::ip::address peer,
                       Admission admission)
    : socket_(std::move(socket)),
      deadline_(socket_.get_executor()),
      heartbeat_(socket_.get_executor()),
      server_(server),
      peer_(std::move(peer)),
      admission_(admission),
      buffer_(server.options().max_head_bytes + 4096) {
  if (admission_ == Admission::kAdmitted) {
    server_.ConnectionOpened(1);
  }
}

Connection::~Connection() {
  if (stream_ != nullptr) {
    EndStream(false);
  }
  if (admission_ == Admission::kAdmitted) {
    server_.Release(peer_);
    server_.ConnectionOpened(-1);
  }
}

void Connection::Start() {
  if (admission_ == Admission::kGlobal || admission_ == Admission::kPeer) {
    server_.ConnectionRefused(admission_ == Admission::kGlobal ? "global" : "per_peer");
    return WriteRefusal(RefusalBytes(503, ""));
  }
  WaitForRequest();
}

// Deadlines that expired on this loop and whose operation is not cancelled yet. Connections
// opened together expire together (a slowloris wave: a thousand heads at once); Asio runs every
// expired timer's handler in one go, so each handler only queues its connection, and the
// queue is worked off kExpiriesPerTurn at a time, each batch posted behind what became ready
// meanwhile: a request arriving during the wave waits for one batch, not for the wave.
constexpr std::size_t kExpiriesPerTurn = 16;
struct Expiries {
  std::deque<std::pair<std::shared_ptr<Connection>, std::uint64_t>> pending;
  bool scheduled = false;
};
Expiries& LoopExpiries() {
  thread_local Expiries expiries;
  return expiries;
}

// A connection's deadline is one timer wait that is not cancelled when the operation completes
// in time: Disarm only clears armed_, and a later Arm moves deadline_at_. When the wait ends
// it expires the deadline if one is armed and due, waits again if it was moved later, and
// otherwise stops. A keep-alive request (idle wait, head, write) thus costs no timer
// cancellation and re-arms the wait about once per keep-alive timeout, not three times.
void Connection::Arm(std::chrono::milliseconds after) {
  expired_ = false;
  ++generation_;
  armed_ = true;
  deadline_at_ = Clock::now() + after;
  if (!waiting_ || deadline_at_ < wait_until_) {
    Wait();
  }
}

void Connection::Wait() {
  waiting_ = true;
  wait_until_ = deadline_at_;
  const std::uint64_t wait = ++wait_id_;
  deadline_.expires_at(wait_until_);  // aborts an earlier wait (its wait id is stale)
  deadline_.async_wait([self = shared_from_this(), wait](ErrorCode ec) {
    if (wait != self->wait_id_) {
      return;
    }
    self->waiting_ = false;
    if (ec || !self->armed_ || self->closed_) {
      return;
    }
    if (Clock::now() < self->deadline_at_) {
      return self->Wait();  // moved later meanwhile
    }
    self->armed_ = false;
    self->expired_ = true;
    Expiries& expiries = LoopExpiries();
    expiries.pending.emplace_back(self, self->generation_);
    if (!expiries.scheduled) {
      expiries.scheduled = true;
      net::post(self->socket_.get_executor(), &Connection::CancelExpired);
    }
  });
}

void Connection::CancelExpired() {
  Expiries& expiries = LoopExpiries();
  for (std::size_t n = 0; n < kExpiriesPerTurn && !expiries.pending.empty(); ++n) {
    auto [connection, generation] = std::move(expiries.pending.front());
    expiries.pending.pop_front();
    if (generation == connection->generation_ && !connection->closed_) {
      ErrorCode ignored;
      connection->socket_.cancel(ignored);  // its operation completes, sees expired_
    }
  }
  if (expiries.pending.empty()) {
    expiries.scheduled = false;
    return;
  }
  net::post(expiries.pending.front().first->socket_.get_executor(), &Connection::CancelExpired);
}

// `base` plus a random 0-10 % of it. Heads that began together (a slowloris wave: a thousand
// connections opened in one instant) must not expire together: a thousand 408s, closes and the
// attacker's thousand reconnects in one instant stall every other request on the machine for
// tens of milliseconds; spread over a tenth of the deadline they cost a request nothing.
std::chrono::milliseconds Spread(std::chrono::milliseconds base) {
  thread_local std::minstd_rand random(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> extra(0, base.count() / 10);
  return base + std::chrono::milliseconds(extra(random));
}

bool Connection::Disarm() {
  ++generation_;
  armed_ = false;
  return std::exchange(expired_, false);
}

void Connection::WaitForRequest() {
  if (buffer_.size() > 0) {
    return ReadHead();  // the next request was already read (pipelining)
  }
  // Idle: no parser, no buffer; a readiness wait under the keep-alive timer.
  buffer_.shrink_to_fit();
  Arm(Millis(server_.options().keep_alive_timeout));
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](ErrorCode ec) {
    self->Disarm();
    if (ec) {
      return self->Close();  // idle timeout, or the client went away
    }
    self->ReadHead();
  });
}

void Connection::ReadHead() {
  const HttpServerOptions& options = server_.options();
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(options.max_head_bytes));
  parser_->body_limit(options.max_body_bytes);
  body_read_ = false;
  // One deadline for the whole head, from its first byte (spread, so waves do not stay waves).
  Arm(Spread(Millis(options.head_deadline)));
  bhttp::async_read_header(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](ErrorCode ec, std::size_t) { self->OnHead(ec); });
}

void Connection::OnHead(ErrorCode ec) {
  started_ = Clock::now();
  if (Disarm()) {
    server_.Expired("head");
    return Refuse(408, std::nullopt, "the request head did not arrive in time");
  }
  if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
      ec == bhttp::error::partial_message || ec == net::error::connection_reset) {
    return Close();
  }
  if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
    return Refuse(431, Bound::kHead, "the request head is too large");
  }
  if (ec == bhttp::error::body_limit) {
    return Refuse(413, Bound::kBody);
  }
  if (ec) {
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category()) {
      return Refuse(400, std::nullopt);  // Beast refused the head: malformed
    }
    return Close();
  }
  const HttpServerOptions& options = server_.options();
  const auto& req = parser_->get();
  const std::string_view method(req.method_string().data(), req.method_string().size());
  const std::string_view target(req.target().data(), req.target().size());
  if (method.size() + target.size() + 11 > options.max_line_bytes) {
    return Refuse(414, Bound::kLine);
  }
  std::size_t fields = 0;
  for (const auto& field : req) {
    if (++fields > options.max_header_fields) {
      return Refuse(431, Bound::kFields, "the request has too many header fields");
    }
    if (field.name_string().size() + field.value().size() + 4 > options.max_line_bytes) {
      return Refuse(431, Bound::kLine, "a request header line is too long");
    }
  }
  // A plain GET (no body, query, Range or credentials) may be answered from a constant reply.
  constant_path_.clear();
  if (req.method() == bhttp::verb::get && req.version() == 11 &&
      target.find('?') == std::string_view::npos && target.size() <= options.max_target_bytes &&
      req.find(bhttp::field::content_length) == req.end() &&
      req.find(bhttp::field::transfer_encoding) == req.end() &&
      req.find(bhttp::field::range) == req.end() &&
      req.find(bhttp::field::authorization) == req.end() && req.find("X-API-Token") == req.end()) {
    if (const ConstantReply* constant = FindConstantReply(target)) {
      return WriteConstant(*constant);
    }
    constant_path_ = std::string(target);
  }
  raw_ = RawRequest{};
  raw_.method = std::string(method);
  raw_.target = std::string(target);
  raw_.headers.reserve(fields);
  for (const auto& field : req) {
    raw_.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  framing_ = ExamineFraming(raw_);
  const bool has_body =
      framing_.kind == BodyFraming::Kind::kLength || framing_.kind == BodyFraming::Kind::kChunked;
  if (parser_->is_done() || !has_body || !ExpectsContent(raw_.method) || !IsJsonContentType(raw_)) {
    return Serve();  // no body, or one the pipeline refuses unread (the connection closes)
  }
  if (absl::EqualsIgnoreCase(
          absl::StripAsciiWhitespace(core::ToAbsl(std::string_view(req[bhttp::field::expect]))),
          "100-continue")) {
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    ErrorCode ignored;
    net::write(socket_, net::buffer(kContinue), ignored);
  }
  Arm(Millis(options.body_deadline));
  bhttp::async_read(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](ErrorCode body_ec, std::size_t) { self->OnBody(body_ec); });
}

void Connection::OnBody(ErrorCode ec) {
  if (Disarm()) {
    server_.Expired("body");
    return Refuse(408, std::nullopt, "the request body did not arrive in time");
  }
  if (ec == bhttp::error::body_limit) {
    return Refuse(413, Bound::kBody);
  }
  if (ec) {
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_chunk).category()) {
      return Refuse(400, std::nullopt);
    }
    return Close();
  }
  body_read_ = true;
  Serve();
}

// The body, already read under the transport's limit and deadline.
class ReadBody final : public BodySource {
 public:
  ReadBody(std::string body, bool read) : body_(std::move(body)), read_(read) {}
  bool Read(const BodyFraming& framing, std::size_t limit, std::string& body,
            HttpReply& error) override {
    if (framing.kind == BodyFraming::Kind::kNone) {
      return true;
    }
    if (!read_ || body_.size() > limit) {
      error = TransportRefusal(413);
      return false;
    }
    body = std::move(body_);
    return true;
  }

 private:
  std::string body_;
  const bool read_;
};

void Connection::Serve() {
  server_.in_flight().fetch_add(1);
  const bool unread_body = !parser_->is_done() && !body_read_;
  const bool keep_alive = parser_->get().keep_alive() && !unread_body;
  auto body = std::make_shared<ReadBody>(
      body_read_ ? std::move(parser_->get().body()) : std::string(), body_read_);
  auto request = std::make_shared<RawRequest>(std::move(raw_));
  auto work = [self = shared_from_this(), request, body, framing = framing_, keep_alive,
               unread_body] {
    bool consumed = false;
    auto outcome = std::make_shared<Outcome>(self->server_.pipeline().Decide(
        *request, ExpectsContent(request->method) ? body.get() : nullptr, framing, consumed));
    outcome->close_connection = outcome->close_connection || unread_body || !keep_alive;
    net::dispatch(self->socket_.get_executor(), [self, outcome, method = request->method] {
      self->raw_.method = method;
      self->Respond(*outcome);
      self->server_.in_flight().fetch_sub(1);
    });
  };
  switch (server_.Place(*request)) {
    case BeastTransport::Placement::kLoop:
      return work();
    case BeastTransport::Placement::kLoopFirst:
      // A GET: no body to read, so running it again on the pool repeats exactly this request.
      if (std::optional<Outcome> outcome = DecideOnLoop(*request)) {
        outcome->close_connection = outcome->close_connection || unread_body || !keep_alive;
        server_.CountLoopRun(true);
        raw_.method = request->method;
        Respond(*outcome);
        server_.in_flight().fetch_sub(1);
        return;
      }
      server_.CountLoopRun(false);
      break;
    case BeastTransport::Placement::kPool:
      break;
  }
  net::post(server_.handlers(), std::move(work));
}

// The outcome of `request` decided on this loop inside a NoBlockingScope, or nullopt when a
// call in it refused to wait: whatever that run built is dropped (no_blocking.h).
std::optional<Outcome> Connection::DecideOnLoop(const RawRequest& request) {
  core::NoBlockingScope scope;
  bool consumed = false;
  Outcome outcome = server_.pipeline().Decide(request, nullptr, framing_, consumed);
  if (scope.refused()) {
    return std::nullopt;
  }
  return outcome;
}

void Connection::Respond(Outcome& outcome) {
  const bool stream = outcome.reply.stream != nullptr;
  if (stream && server_.pipeline().AdmitStream(outcome)) {
    server_.Record(raw_.method, outcome.route, 200, Clock::now() - started_, true);
    return StartStream(outcome);
  }
  if (outcome.reply.status == 414) {
    server_.Refused(Bound::kTarget);  // within the line bound, over max_target_bytes
  }
  server_.Record(raw_.method, outcome.route, outcome.reply.status, Clock::now() - started_, false);
  if (!constant_path_.empty() && outcome.reply.status == 200 && server_.IsConstant(outcome.route)) {
    LearnConstantReply(constant_path_, outcome.route, outcome.reply);
  }
  const std::size_t max_requests = server_.options().keep_alive_max_requests;
  const bool keep_alive = !outcome.close_connection && served_ + 1 < max_requests;
  // A body left unread makes the close a lingering one, so the reply is not lost to a reset.
  Write(outcome.reply, keep_alive, outcome.close_connection);
}

void Connection::Write(HttpReply& reply, bool keep_alive, bool linger) {
  auto response = std::make_unique<bhttp::response<bhttp::string_body>>(
      static_cast<bhttp::status>(reply.status), 11);
  for (const auto& [name, value] : reply.headers) {
    if (IsSafeHeader(name, value)) {
      response->insert(name, value);
    }
  }
  response->set("X-Content-Type-Options", "nosniff");
  if (!reply.body.empty()) {
    response->set(bhttp::field::content_type, reply.content_type);
    response->body() = std::move(reply.body);
  }
  response->keep_alive(keep_alive);
  response->prepare_payload();
  response_ = std::move(response);
  lingering_ = linger;
  ++served_;
  Arm(Millis(server_.options().write_timeout));
  bhttp::async_write(socket_, *response_,
                     [self = shared_from_this(), keep_alive](ErrorCode ec, std::size_t) {
                       if (self->Disarm()) {
                         self->server_.Expired("write");
                       }
                       self->response_.reset();
                       if (!ec && self->lingering_) {
                         return self->Linger();
                       }
                       if (ec || !keep_alive) {
                         return self->Close();
                       }
                       self->parser_.reset();
                       self->WaitForRequest();
                     });
}

void Connection::WriteConstant(const ConstantReply& constant) {
  static const std::string kGet = "GET";
  server_.Record(kGet, constant.route, 200, Clock::now() - started_, false);
  const bool keep_alive =
      parser_->get().keep_alive() && served_ + 1 < server_.options().keep_alive_max_requests;
  ++served_;
  Arm(Millis(server_.options().write_timeout));
  net::async_write(socket_, net::buffer(keep_alive ? constant.keep_alive : constant.close),
                   [self = shared_from_this(), keep_alive](ErrorCode ec, std::size_t) {
                     if (self->Disarm()) {
                       self->server_.Expired("write");
                     }
                     if (ec || !keep_alive) {
                       return self->Close();
                     }
                     self->parser_.reset();
                     self->WaitForRequest();
                   });
}

void Connection::Refuse(int status, std::optional<Bound> bound, const std::string& message) {
  if (bound.has_value()) {
    server_.Refused(*bound);
  }
  server_.Record(raw_.method.empty() ? "-" : raw_.method, std::string(kUnmatched), status,
                 Clock::duration::zero(), false);
  WriteRefusal(RefusalBytes(status, message));
}

void Connection::WriteRefusal(const std::string& bytes) {
  lingering_ = true;
  ++served_;
  Arm(Millis(server_.options().write_timeout));
  net::async_write(socket_, net::buffer(bytes),
                   [self = shared_from_this()](ErrorCode ec, std::size_t) {
                     if (self->Disarm()) {
                       self->server_.Expired("write");
                     }
                     if (ec) {
                       return self->Close();
                     }
                     self->Linger();
                   });
}

void Connection::Linger() {
  if (discarded_ == 0) {
    ErrorCode ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    Arm(std::chrono::milliseconds(1000));
  }
  socket_.async_read_some(net::buffer(DiscardBuffer()),
                          [self = shared_from_this()](ErrorCode ec, std::size_t n) {
                            self->discarded_ += std::max<std::size_t>(n, 1);
                            if (ec || self->discarded_ > 64 * 1024) {
                              self->Disarm();
                              return self->Close();
                            }
                            self->Linger();
                          });
}

void Connection::StartStream(Outcome& outcome) {
  stream_ = outcome.reply.stream;
  slot_ = std::move(outcome.slot);
  std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
      "X-Accel-Buffering: no\r\nX-Content-Type-Options: nosniff\r\n"
      "Transfer-Encoding: chunked\r\n";
  for (const auto& [name, value] : outcome.reply.headers) {
    const std::string lower = absl::AsciiStrToLower(name);
    if (IsSafeHeader(name, value) && lower != "content-type" && lower != "content-length" &&
        lower != "transfer-encoding" && lower != "connection" && lower != "cache-control") {
      absl::StrAppend(&head, name, ": ", value, "\r\n");
    }
  }
  head += "\r\n";
  // Anything the client sends on a stream (or its leaving) ends it.
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](ErrorCode) {
    if (self->stream_ != nullptr) {
      self->stream_->Abort();
    }
    self->Close();
  });
  ArmHeartbeat(true);
  chunk_ = std::move(head);
  writing_ = true;
  Arm(Millis(server_.options().write_timeout));
  net::async_write(socket_, net::buffer(chunk_),
                   [self = shared_from_this()](ErrorCode ec, std::size_t) {
                     if (self->Disarm()) {
                       self->server_.Expired("write");
                     }
                     self->writing_ = false;
                     if (ec) {
                       self->stream_->Abort();
                       return self->Close();
                     }
                     self->Pump();
                   });
  // Called on the producer's thread: touches only what it owns (never the connection, which
  // belongs to its loop), and posts through the gate so no post outlives the loops.
  stream_->SetWakeup([weak = weak_from_this(), executor = socket_.get_executor(),
                      gate = server_.gate_ptr(), pending = wake_pending_] {
    if (pending->exchange(true)) {
      return;  // a wake-up is already on its way
    }
    gate->Post(executor, [weak] {
      if (std::shared_ptr<Connection> live = weak.lock()) {
        live->OnWake();
      }
    });
  });
}

void Connection::OnWake() {
  wake_pending_->store(false);
  Pump();
}

void Connection::Pump() {
  if (closed_ || stream_ == nullptr || ending_) {
    return;
  }
  if (writing_) {
    return;  // the write's completion pumps
  }
  std::string frames;
  const std::optional<SseStream::Pull> pulled = stream_->TryNext(frames);
  if (!pulled.has_value()) {
    return;  // nothing yet: the wake-up or the heartbeat comes
  }
  switch (*pulled) {
    case SseStream::Pull::kWrite:
      return WriteChunk(frames, false);
    case SseStream::Pull::kEnd:
      ending_ = true;
      return WriteChunk(std::string_view(), true);
    case SseStream::Pull::kAbort:
      return Close();
  }
}

void Connection::WriteChunk(std::string_view data, bool last) {
  chunk_.clear();
  if (!data.empty()) {
    absl::StrAppend(&chunk_, absl::Hex(data.size()), "\r\n", core::ToAbsl(data), "\r\n");
  }
  if (last) {
    chunk_ += "0\r\n\r\n";
  }
  writing_ = true;
  Arm(Millis(server_.options().write_timeout));
  net::async_write(socket_, net::buffer(chunk_),
                   [self = shared_from_this(), last](ErrorCode ec, std::size_t) {
                     if (self->Disarm()) {
                       self->server_.Expired("write");
                     }
                     self->writing_ = false;
                     if (ec || last) {
                       if (self->stream_ != nullptr) {
                         self->EndStream(!ec && last);
                       }
                       return self->Close();
                     }
                     self->ArmHeartbeat(false);  // a heartbeat is due this long after a write
                     // Always look again: TryNext hands over the frames first and reports the
                     // end only on the next call, and one wake-up may have announced both.
                     self->Pump();
                   });
}

void Connection::ArmHeartbeat(bool first) {
  std::chrono::milliseconds interval = Millis(stream_->heartbeat_interval());
  if (first) {
    // Streams opened together must not beat together: the first beat comes after a random
    // 50-100 % of the interval.
    thread_local std::minstd_rand random(std::random_device{}());
    std::uniform_int_distribution<std::int64_t> spread(interval.count() / 2, interval.count());
    interval = std::chrono::milliseconds(spread(random));
  }
  heartbeat_.expires_after(interval);
  heartbeat_.async_wait([self = shared_from_this()](ErrorCode ec) {
    if (ec || self->closed_ || self->stream_ == nullptr || self->ending_) {
      return;
    }
    if (self->writing_) {
      return;  // that write re-arms the heartbeat when it completes
    }
    self->WriteChunk(self->stream_->HeartbeatFrame(), false);
  });
}

void Connection::EndStream(bool clean) {
  std::shared_ptr<SseStream> stream = std::move(stream_);
  stream->SetWakeup(nullptr);
  stream->MarkFinished(clean);
  server_.pipeline().UnregisterStream(stream.get());
  slot_.Release();
}

void Connection::Close() {
  if (closed_) {
    return;
  }
  closed_ = true;
  if (stream_ != nullptr) {
    EndStream(false);
  }
  ErrorCode ignored;
  deadline_.cancel();
  heartbeat_.cancel();
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

// ---------------------------------------------------------------- BeastTransport

absl::Status BeastTransport::Open(MetricsRegistry* metrics) {
  PULSE_RETURN_IF_ERROR(pipeline_.ConfigureMetrics(metrics));
  if (metrics != nullptr) {
    PULSE_ASSIGN_OR_RETURN(workers_, metrics->AddGauge("pulse_http_workers",
                                                       "HTTP worker threads by state.", {"state"}));
    PULSE_ASSIGN_OR_RETURN(connections_, metrics->AddGauge("pulse_http_connections",
                                                           "HTTP connections open now.", {}));
    PULSE_ASSIGN_OR_RETURN(
        connections_refused_,
        metrics->AddCounter("pulse_http_connections_refused_total",
                            "Connections answered 503 and closed, by the cap they exceeded.",
                            {"reason"}));
    PULSE_ASSIGN_OR_RETURN(
        requests_refused_,
        metrics->AddCounter("pulse_http_requests_refused_total",
                            "Requests refused by a transport bound (head, line, fields, target, "
                            "body), then closed.",
                            {"bound"}));
    PULSE_ASSIGN_OR_RETURN(
        expiries_, metrics->AddCounter("pulse_http_deadline_expiries_total",
                                       "Head, body and write deadlines that expired.", {"phase"}));
  }
  const std::size_t loops = options_.io_threads > 0
                                ? options_.io_threads
                                : std::max<std::size_t>(1, std::thread::hardware_concurrency());
  for (std::size_t i = 0; i < loops; ++i) {
    loops_.push_back(std::make_unique<net::io_context>(1));
  }
  handlers_ =
      std::make_unique<net::thread_pool>(std::max<std::size_t>(1, options_.handler_threads));
  ErrorCode ec;
  std::string host = options_.host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  tcp::resolver resolver(*loops_[0]);
  const auto endpoints =
      resolver.resolve(host, std::to_string(options_.port),
                       tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options_.host, ":", options_.port, ": ", ec.message()));
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  auto acceptor = std::make_unique<tcp::acceptor>(*loops_[0]);
  // SO_REUSEADDR only (no SO_REUSEPORT: a second server must not bind the same port).
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) {
    acceptor->set_option(net::socket_base::reuse_address(true), ec);
  }
  if (!ec) {
    acceptor->bind(endpoint, ec);
  }
  if (!ec) {
    acceptor->listen(options_.listen_backlog, ec);
  }
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options_.host, ":", options_.port, ": ", ec.message()));
  }
  port_ = acceptor->local_endpoint(ec).port();
  listener_.emplace(
      Listener{std::move(acceptor), std::make_unique<net::steady_timer>(*loops_[0]), {}});
  if (workers_ != nullptr) {
    workers_->Set({"live"}, static_cast<double>(loops + options_.handler_threads));
    workers_->Set({"busy"}, 0);
  }
  return absl::OkStatus();
}

absl::Status BeastTransport::Start() {
  absl::MutexLock lock(&state_mu_);
  if (state_ != State::kBound) {
    return absl::FailedPreconditionError("the server was started or stopped already");
  }
  state_ = State::kRunning;
  Accept();
  for (const std::unique_ptr<net::io_context>& loop : loops_) {
    guards_.push_back(net::make_work_guard(*loop));
    threads_.emplace_back([&loop = *loop] { loop.run(); });
  }
  return absl::OkStatus();
}

void BeastTransport::Accept() {
  Listener& listener = *listener_;
  // The accepted socket belongs to the loop whose turn it is (runs on the first loop's thread).
  const net::any_io_executor loop = loops_[next_loop_ % loops_.size()]->get_executor();
  listener.acceptor->async_accept(
      loop, listener.peer, [this, &listener](ErrorCode ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted || !listener.acceptor->is_open()) {
          return;  // stopping
        }
        if (ec) {
          // Out of descriptors and the like: back off instead of spinning on the listener.
          listener.retry->expires_after(std::chrono::milliseconds(50));
          listener.retry->async_wait([this](ErrorCode wait_ec) {
            if (!wait_ec) {
              Accept();
            }
          });
          return;
        }
        ++next_loop_;
        ErrorCode ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        net::ip::address peer = listener.peer.address();
        const Connection::Admission admission = Admit(peer);
        auto connection =
            std::make_shared<Connection>(std::move(socket), *this, std::move(peer), admission);
        // Set up on its own loop: its reads, timers and per-loop buffers are that loop's.
        net::post(connection->executor(), [connection] { connection->Start(); });
        Accept();
      });
}

Connection::Admission BeastTransport::Admit(const net::ip::address& peer) {
  absl::MutexLock lock(&admission_mu_);
  if (total_ >= options_.max_connections) {
    return Connection::Admission::kGlobal;
  }
  std::size_t& from_peer = per_peer_[peer];
  if (from_peer >= options_.max_connections_per_peer) {
    return Connection::Admission::kPeer;
  }
  ++from_peer;
  ++total_;
  return Connection::Admission::kAdmitted;
}

void BeastTransport::Release(const net::ip::address& peer) {
  absl::MutexLock lock(&admission_mu_);
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && --it->second == 0) {
    per_peer_.erase(it);
  }
  --total_;
}

BeastTransport::Placement BeastTransport::Place(const RawRequest& req) const {
  const RouteLookup lookup = pipeline_.router().Lookup(req.method, SplitTarget(req.target).first);
  if (lookup.kind != RouteLookup::Kind::kFound) {
    return Placement::kLoop;  // refused without a handler: cheap
  }
  const RouteSpec& spec = lookup.route->spec;
  if (spec.streaming) {
    return Placement::kPool;
  }
  const auto listed = [&spec](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), spec.name) != names.end();
  };
  if (!spec.scope.has_value() && listed(options_.inline_routes)) {
    return Placement::kLoop;
  }
  if ((req.method == "GET" || req.method == "HEAD") && listed(options_.loop_routes)) {
    return Placement::kLoopFirst;
  }
  return Placement::kPool;
}

void BeastTransport::ConnectionOpened(int delta) {
  const int open = open_connections_.fetch_add(delta) + delta;
  if (connections_ != nullptr) {
    connections_->Set({}, static_cast<double>(open));
  }
}

void BeastTransport::Refused(Bound bound) {
  if (requests_refused_ != nullptr) {
    requests_refused_->Increment({BoundLabel(bound)});
  }
}

void BeastTransport::ConnectionRefused(const char* reason) {
  if (connections_refused_ != nullptr) {
    connections_refused_->Increment({reason});
  }
}

void BeastTransport::Expired(const char* phase) {
  if (expiries_ != nullptr) {
    expiries_->Increment({phase});
  }
}

void BeastTransport::Record(const std::string& method, const std::string& route, int status,
                            Clock::duration elapsed, bool stream) {
  pipeline_.Record(method, route, status, elapsed, stream);
}

void BeastTransport::Stop() {
  {
    absl::MutexLock lock(&state_mu_);
    const State was = state_;
    state_ = State::kStopped;
    if (was != State::kRunning) {
      return;  // never started (the loops never ran), or stopped already
    }
  }
  // Streams first, while everything runs: each drains and ends its response cleanly.
  pipeline_.ShutdownStreams();
  // No new connections.
  if (listener_.has_value()) {
    std::promise<void> closed;
    net::post(*loops_[0], [&listener = *listener_, &closed] {
      ErrorCode ignored;
      listener.acceptor->close(ignored);
      listener.retry->cancel();
      closed.set_value();
    });
    closed.get_future().wait();
  }
  // Requests in flight finish: their handlers, then their replies' writes.
  handlers_->join();
  const absl::Time deadline = absl::Now() + options_.stop_grace;
  while (in_flight_.load() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  gate_->Close();
  for (const std::unique_ptr<net::io_context>& loop : loops_) {
    loop->stop();
  }
  for (std::thread& thread : threads_) {
    thread.join();
  }
  guards_.clear();
  // Destroying the loops destroys the connections still open (idle keep-alive ones).
  listener_.reset();
  loops_.clear();
}

HttpServerStats BeastTransport::Stats() const {
  HttpServerStats stats;
  stats.threads = loops_.size() + options_.handler_threads;
  stats.peak_threads = stats.threads;
  stats.busy_threads = static_cast<std::size_t>(std::max(0, in_flight_.load()));
  stats.open_streams = pipeline_.open_streams();
  stats.loop_answered = loop_answered_.load();
  stats.loop_refused = loop_refused_.load();
  return stats;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer::Impl>> OpenBeastTransport(
    HttpServerOptions options, Router router, TokenAuthenticator& authenticator,
    MetricsRegistry* metrics) {
  if (options.max_line_bytes < 64 || options.max_header_fields == 0 ||
      options.max_head_bytes < options.max_line_bytes || options.max_connections == 0 ||
      options.max_connections_per_peer == 0 || options.head_deadline <= absl::ZeroDuration() ||
      options.body_deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "inconsistent Beast transport options: need max_line_bytes >= 64 and <= "
        "max_head_bytes, positive field and connection caps and deadlines");
  }
  auto transport =
      std::make_unique<BeastTransport>(std::move(options), std::move(router), authenticator);
  PULSE_RETURN_IF_ERROR(transport->Open(metrics));
  return std::unique_ptr<HttpServer::Impl>(std::move(transport));
}

}  // namespace pulse::adapters::http::internal
