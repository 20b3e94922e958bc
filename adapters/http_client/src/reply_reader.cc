// ReplyReader (src/reply_reader.h): Beast's response parser over a read buffer.
#include "src/reply_reader.h"

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "pulse/core/string_view.h"
#include "src/errors.h"

namespace pulse::http_client {
namespace {

namespace http = boost::beast::http;
using core::ToAbsl;

constexpr std::size_t kReadChunk = std::size_t{64} << 10;
constexpr std::size_t kMaxReason = 512;

// Bytes read and not yet taken by the parser: [begin, end) of an uninitialized array (a
// std::string would zero every byte it grows by before recv overwrites them).
class ReadBuffer {
 public:
  std::string_view Unread() const { return {data_.get() + begin_, end_ - begin_}; }
  void Consume(std::size_t n) {
    begin_ += n;
    if (begin_ == end_) {
      begin_ = end_ = 0;
    }
  }
  // Room for at least `n` more bytes at the end; the unread bytes move to the front or to a
  // larger array first when they must.
  std::pair<char*, std::size_t> Space(std::size_t n) {
    if (capacity_ - end_ < n) {
      const std::size_t unread = end_ - begin_;
      if (capacity_ - unread < n) {
        const std::size_t grown = std::max(capacity_ * 2, unread + n);
        std::unique_ptr<char[]> bigger(new char[grown]);
        if (unread > 0) {
          std::memcpy(bigger.get(), data_.get() + begin_, unread);
        }
        data_ = std::move(bigger);
        capacity_ = grown;
      } else if (unread > 0) {
        std::memmove(data_.get(), data_.get() + begin_, unread);
      }
      begin_ = 0;
      end_ = unread;
    }
    return {data_.get() + end_, capacity_ - end_};
  }
  void Added(std::size_t n) { end_ += n; }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

// Whether a Transfer-Encoding value names no coding but chunked.
bool OnlyChunked(std::string_view value) {
  for (absl::string_view coding : absl::StrSplit(ToAbsl(value), ',')) {
    if (!absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(coding), "chunked")) {
      return false;
    }
  }
  return true;
}

// Beast's HTTP/1.1 response parser with callbacks that fill `head` and hand body pieces on.
// A 1xx reply is interim: the exchange parses the next message with a new parser.
class ReplyParser final : public http::basic_parser<false> {
 public:
  using Sink = absl::FunctionRef<Abort(std::string_view bytes)>;
  using HeadSink = absl::FunctionRef<Abort()>;

  ReplyParser(ResponseHead& head, HeadSink on_head, Sink on_body)
      : head_(head), on_head_(on_head), on_body_(on_body) {}

  bool interim() const { return interim_; }
  Abort abort() const { return abort_; }

 private:
  void on_request_impl(http::verb, std::string_view, std::string_view, int,
                       boost::beast::error_code& ec) override {
    ec = http::error::bad_method;  // never called for a response parser
  }
  void on_response_impl(int code, std::string_view reason, int,
                        boost::beast::error_code& ec) override {
    if (code < 100) {
      ec = http::error::bad_status;  // Beast reads any three digits
      return;
    }
    head_ = ResponseHead();
    head_.status = code;
    head_.reason = std::string(reason.substr(0, kMaxReason));
    interim_ = code < 200;
  }
  void on_field_impl(http::field field, std::string_view name, std::string_view value,
                     boost::beast::error_code& ec) override {
    if (field == http::field::transfer_encoding && !OnlyChunked(value)) {
      // A coding the client would have to undo (gzip, ...): the body would be handed on still
      // encoded. libcurl refuses these too.
      ec = http::error::bad_transfer_encoding;
      return;
    }
    if (!interim_) {
      head_.headers.emplace_back(std::string(name), std::string(value));
    }
  }
  void on_header_impl(boost::beast::error_code& ec) override {
    if (!interim_) {
      Stop(on_head_(), ec);
    }
  }
  void on_body_init_impl(const boost::optional<std::uint64_t>&,
                         boost::beast::error_code&) override {}
  std::size_t on_body_impl(std::string_view body, boost::beast::error_code& ec) override {
    Stop(on_body_(body), ec);
    return body.size();
  }
  void on_chunk_header_impl(std::uint64_t, std::string_view, boost::beast::error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, std::string_view body,
                                 boost::beast::error_code& ec) override {
    Stop(on_body_(body), ec);
    return body.size();
  }
  void on_finish_impl(boost::beast::error_code&) override {}

  void Stop(Abort why, boost::beast::error_code& ec) {
    if (why != Abort::kNone) {
      abort_ = why;
      ec = boost::system::errc::make_error_code(boost::system::errc::operation_canceled);
    }
  }

  ResponseHead& head_;
  HeadSink on_head_;
  Sink on_body_;
  bool interim_ = false;
  Abort abort_ = Abort::kNone;
};

// Whether `bytes` begin "HTTP/d.d ddd" (a version and a status code).
bool StartsWithStatusCode(std::string_view bytes) {
  const auto digit = [&bytes](std::size_t i) {
    return absl::ascii_isdigit(static_cast<unsigned char>(bytes[i]));
  };
  return bytes.size() >= 12 && bytes.substr(0, 5) == "HTTP/" && digit(5) && bytes[6] == '.' &&
         digit(7) && bytes[8] == ' ' && digit(9) && digit(10) && digit(11);
}

// A status line with no reason phrase and no space before it ("HTTP/1.1 204\r\n").
bool IsBareStatusLine(std::string_view bytes) {
  return bytes.size() >= 14 && StartsWithStatusCode(bytes) && bytes.substr(12, 2) == "\r\n";
}

// The start of one, cut after its CR: Beast would refuse the CR where it wants the space.
bool MayBeBareStatusLine(std::string_view bytes) {
  return bytes.size() == 13 && StartsWithStatusCode(bytes) && bytes[12] == '\r';
}

}  // namespace

class ReplyReader::Impl {
 public:
  Impl(ExchangeState& state, bool head_only)
      : state_(state), options_(state.options()), head_only_(head_only) {
    NewParser();
  }

  std::pair<char*, std::size_t> Space() { return buffer_.Space(kReadChunk); }

  Progress Added(std::size_t n) {
    buffer_.Added(n);
    received_ = received_ || n > 0;
    // Everything read so far goes to the parser.
    while (!buffer_.Unread().empty()) {
      boost::beast::error_code ec;
      const std::string_view unread = buffer_.Unread();
      std::size_t used = 0;
      if (!parser_->is_header_done() && MayBeBareStatusLine(unread)) {
        return Progress::kMore;  // the LF decides
      }
      if (!parser_->is_header_done() && IsBareStatusLine(unread)) {
        // "HTTP/1.1 204" without the space before an empty reason: libcurl reads it, and so
        // must this transport; Beast wants the space. Beast takes the start line whole or not
        // at all, so what it took of the spaced copy is one byte more than it took of ours.
        std::string spaced(unread.substr(0, 12));
        spaced += ' ';
        spaced.append(unread.substr(12));
        used = parser_->put(boost::asio::const_buffer(spaced.data(), spaced.size()), ec);
        used = used > 0 ? used - 1 : 0;
      } else {
        used = parser_->put(boost::asio::const_buffer(unread.data(), unread.size()), ec);
      }
      buffer_.Consume(used);
      if (ec == http::error::need_more) {
        return Progress::kMore;
      }
      if (ec) {
        return Fail(ParseFailure(ec, parser_->abort()));
      }
      if (parser_->is_done()) {
        if (parser_->interim()) {
          NewParser();  // the real reply follows a 1xx
          continue;
        }
        // Reusable when the server keeps it and sent nothing beyond this reply.
        reusable_ = parser_->keep_alive() && buffer_.Unread().empty();
        return Progress::kDone;
      }
      if (used == 0) {
        return Progress::kMore;
      }
    }
    return Progress::kMore;
  }

  Progress End(bool reset) {
    if (!reset && parser_->is_header_done() && parser_->need_eof()) {
      boost::beast::error_code ec;
      parser_->put_eof(ec);
      if (!ec && parser_->is_done()) {
        return Progress::kDone;
      }
    }
    if (!received_) {
      return Fail(ClientError(ErrorKind::kConnectionLost,
                              reset ? "the connection broke before a response arrived"
                                    : "the server closed the connection without a response"));
    }
    return Fail(ClientError(ErrorKind::kConnectionLost,
                            state_.head_done()
                                ? "the connection broke before the response was complete"
                                : "the connection broke before a response arrived"));
  }

  bool received() const { return received_; }
  bool reusable() const { return reusable_; }
  const absl::Status& failure() const { return failure_; }

 private:
  void NewParser() {
    parser_.emplace(head_, on_head_, on_body_);
    parser_->eager(true);
    parser_->skip(head_only_);
    parser_->header_limit(
        static_cast<std::uint32_t>(std::min<std::size_t>(options_.max_header_bytes, UINT32_MAX)));
    // The cap is counted in ExchangeState::Body, as the libcurl exchange does. Not boost::none:
    // Boost 1.74 compares a Content-Length with the optional limit itself, and any length is
    // more than none (body_limit exceeded for every sized body).
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  }

  Progress Fail(absl::Status why) {
    failure_ = std::move(why);
    return Progress::kFailed;
  }

  absl::Status ParseFailure(const boost::beast::error_code& ec, Abort abort) const {
    switch (abort) {
      case Abort::kCancelled:
        return ClientError(ErrorKind::kCancelled, "the request was cancelled");
      case Abort::kTooLarge:
        return ClientError(ErrorKind::kTooLarge, absl::StrCat("the response body is larger than ",
                                                              options_.max_body_bytes, " bytes"));
      case Abort::kStopped:
        return absl::CancelledError("stopped");  // Stream reads abort() before this
      case Abort::kNone:
        break;
    }
    if (ec == http::error::header_limit) {
      return ClientError(ErrorKind::kTooLarge, absl::StrCat("the response headers are larger than ",
                                                            options_.max_header_bytes, " bytes"));
    }
    return ClientError(ErrorKind::kProtocol, "the server's reply is not valid HTTP");
  }

  ExchangeState& state_;
  const ClientOptions& options_;  // state_'s
  const bool head_only_;
  ResponseHead head_;  // filled by the parser, handed on by state_.Head
  // The parser holds references to these two: they outlive it.
  const std::function<Abort()> on_head_ = [this] { return state_.Head(head_); };
  const std::function<Abort(std::string_view)> on_body_ = [this](std::string_view bytes) {
    return state_.Body(bytes);
  };
  ReadBuffer buffer_;
  std::optional<ReplyParser> parser_;
  bool received_ = false;
  bool reusable_ = false;
  absl::Status failure_;
};

ReplyReader::ReplyReader(ExchangeState& state, bool head_only)
    : impl_(std::make_unique<Impl>(state, head_only)) {}

ReplyReader::~ReplyReader() = default;

std::pair<char*, std::size_t> ReplyReader::Space() { return impl_->Space(); }

ReplyReader::Progress ReplyReader::Added(std::size_t n) { return impl_->Added(n); }

ReplyReader::Progress ReplyReader::End(bool reset) { return impl_->End(reset); }

bool ReplyReader::received() const { return impl_->received(); }

bool ReplyReader::reusable() const { return impl_->reusable(); }

absl::Status ReplyReader::failure() const { return impl_->failure(); }

}  // namespace pulse::http_client
