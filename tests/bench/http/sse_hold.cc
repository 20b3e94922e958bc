// sse_hold: opens N agent event streams (GET /api/agent/events) on 127.0.0.1:PORT and keeps
// them open, so cmake/bench-http.sh can time short requests while the server holds them.
// Usage: sse_hold --port P --token T --streams N [--max-seconds S]
// Prints "holding N" on stdout once every stream has answered 200 and delivered its first
// frame (stream.connected), then reads and discards what the server sends until SIGTERM or
// SIGINT arrives or S seconds (default 300, a safety net) have passed, and prints
// "open K of N" — the streams the server had not closed by then. Exit status 0 when all N
// stayed open, 1 otherwise (a failed start is described on stderr).
// Plain sockets and poll() on one thread: the holder must cost the 2-core machine nothing
// while the load generator runs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

struct Options {
  int port = 0;
  std::string token;
  int streams = 0;
  int max_seconds = 300;
};

struct Stream {
  int fd = -1;
  std::string head;  // what arrived before the first frame (status line, headers, frame)
  bool ready = false;
  bool open = true;
};

bool ParseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    bool ok = true;
    if (flag == "--port") {
      ok = absl::SimpleAtoi(value, &options.port);
    } else if (flag == "--token") {
      options.token = value;
    } else if (flag == "--streams") {
      ok = absl::SimpleAtoi(value, &options.streams);
    } else if (flag == "--max-seconds") {
      ok = absl::SimpleAtoi(value, &options.max_seconds);
    } else {
      ok = false;
    }
    if (!ok) {
      return false;
    }
  }
  return argc % 2 == 1 && options.port > 0 && !options.token.empty() && options.streams > 0 &&
         options.max_seconds > 0;
}

// A connected socket with the request written, or -1.
int OpenStream(const Options& options) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return -1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(options.port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  const std::string request = absl::StrCat(
      "GET /api/agent/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Token: ", options.token,
      "\r\nAccept: text/event-stream\r\n\r\n");
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    sent += static_cast<std::size_t>(n);
  }
  return fd;
}

// One poll() round over the open streams (at most `timeout_ms`); returns how many are ready.
int PumpOnce(std::vector<Stream>& streams, int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<Stream*> owners;
  for (Stream& s : streams) {
    if (s.open) {
      fds.push_back({s.fd, POLLIN, 0});
      owners.push_back(&s);
    }
  }
  if (::poll(fds.data(), fds.size(), timeout_ms) > 0) {
    char buf[8192];
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) {
        continue;
      }
      Stream& s = *owners[i];
      const ssize_t n = ::recv(s.fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        s.open = false;
        continue;
      }
      if (!s.ready) {
        s.head.append(buf, static_cast<std::size_t>(n));
        s.ready = s.head.rfind("HTTP/1.1 200", 0) == 0 &&
                  s.head.find("stream.connected") != std::string::npos;
      }
    }
  }
  int ready = 0;
  for (const Stream& s : streams) {
    ready += s.open && s.ready ? 1 : 0;
  }
  return ready;
}

int CountOpen(const std::vector<Stream>& streams) {
  int open = 0;
  for (const Stream& s : streams) {
    open += s.open ? 1 : 0;
  }
  return open;
}

// Why the first stream that is not ready is not: its first bytes, or that it closed.
std::string FirstFailure(const std::vector<Stream>& streams) {
  for (const Stream& s : streams) {
    if (!s.ready) {
      const std::string head = s.head.substr(0, s.head.find("\r\n"));
      return absl::StrCat(s.open ? "still waiting" : "closed", ", first line: '", head, "'");
    }
  }
  return "none";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::fprintf(stderr, "usage: sse_hold --port P --token T --streams N [--max-seconds S]\n");
    return 2;
  }
  struct sigaction action {};
  action.sa_handler = OnSignal;  // no SA_RESTART: poll() returns on the signal
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);

  std::vector<Stream> streams(static_cast<std::size_t>(options.streams));
  for (Stream& s : streams) {
    s.fd = OpenStream(options);
    s.open = s.fd >= 0;
  }
  const auto ready_deadline = Clock::now() + std::chrono::seconds(30);
  int ready = 0;
  while (!g_stop && ready < options.streams && Clock::now() < ready_deadline &&
         CountOpen(streams) == options.streams) {
    ready = PumpOnce(streams, 200);
  }
  if (ready < options.streams) {
    std::fprintf(stderr, "sse_hold: %d of %d streams ready; first failure: %s\n", ready,
                 options.streams, FirstFailure(streams).c_str());
    return 1;
  }
  std::printf("holding %d\n", options.streams);
  std::fflush(stdout);

  const auto hold_deadline = Clock::now() + std::chrono::seconds(options.max_seconds);
  while (!g_stop && Clock::now() < hold_deadline) {
    PumpOnce(streams, 500);
  }
  const int open = CountOpen(streams);
  std::printf("open %d of %d\n", open, options.streams);
  for (const Stream& s : streams) {
    if (s.fd >= 0) {
      ::close(s.fd);
    }
  }
  return open == options.streams ? 0 : 1;
}
