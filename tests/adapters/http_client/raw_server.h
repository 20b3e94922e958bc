// RawServer: a loopback TCP or unix-socket listener whose connections are handed, one after
// another, to a test's function on its own thread — the far side for behaviour a real HTTP
// server will not show (silence, a cut body, oversized headers, a proxy). Stop() (or the
// destructor) closes the listener and tells the handler to give up through stopping().
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

namespace pulse::testing {

class RawServer {
 public:
  using Handler = std::function<void(int fd, RawServer& server)>;

  // Loopback TCP on an ephemeral port.
  explicit RawServer(Handler handler) : handler_(std::move(handler)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listener_ >= 0);
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    socklen_t length = sizeof(address);
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
    Start();
  }

  // A unix socket at `path`.
  RawServer(const std::string& path, Handler handler) : handler_(std::move(handler)) {
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(listener_ >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof(address.sun_path));
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    ::unlink(path.c_str());
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    Start();
  }

  RawServer(const RawServer&) = delete;
  RawServer& operator=(const RawServer&) = delete;
  ~RawServer() { Stop(); }

  void Stop() {
    if (thread_.joinable()) {
      stopping_.store(true);
      ::shutdown(listener_, SHUT_RDWR);
      thread_.join();
      ::close(listener_);
    }
  }

  int port() const { return port_; }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool stopping() const { return stopping_.load(); }
  int connections() const { return connections_.load(); }

  // Reads until the end of the request head (or EOF) and returns it.
  static std::string ReadHead(int fd) {
    std::string head;
    char buffer[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        break;
      }
      head.append(buffer, static_cast<std::size_t>(n));
    }
    return head;
  }

  static void SendAll(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) {
        return;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // Holds the connection open without a word until the server stops.
  void Idle() const {
    while (!stopping()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  void Start() {
    REQUIRE(::listen(listener_, 8) == 0);
    thread_ = std::thread([this] {
      while (!stopping_.load()) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) {
          return;
        }
        connections_.fetch_add(1);
        handler_(fd, *this);
        ::close(fd);
      }
    });
  }

  Handler handler_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace pulse::testing
