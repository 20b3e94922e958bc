// The per-request part of the cpp-httplib transport: the request into a RawRequest, the body
// read on demand through a BodySource, the pipeline's outcome into the httplib response (or
// the event stream) and the request record.
#include <utility>

#include "absl/strings/str_cat.h"
#include "server_impl.h"

namespace pulse::adapters::http::internal {
namespace {

using core::AgentErrorCode;

RawRequest ToRaw(const httplib::Request& req) {
  RawRequest raw;
  raw.method = req.method;
  raw.target = req.target;
  raw.headers.reserve(req.headers.size());
  for (const auto& [name, value] : req.headers) {
    raw.headers.emplace_back(name, value);
  }
  return raw;
}

// cpp-httplib's lazy reader: the body is read only when the pipeline asks for it, after
// routing and authentication.
class HttplibBody final : public BodySource {
 public:
  explicit HttplibBody(const httplib::ContentReader& reader) : reader_(reader) {}

  bool Read(const BodyFraming& framing, std::size_t limit, std::string& body,
            HttpReply& error) override {
    if (framing.kind == BodyFraming::Kind::kNone) {
      return true;  // no Content-Length and not chunked: no body (never read to EOF)
    }
    const HttpReply too_large =
        HttpReply::Error(AgentErrorCode::kRequestTooLarge,
                         absl::StrCat("the request body is larger than ", limit, " bytes"));
    if (framing.kind == BodyFraming::Kind::kLength && framing.length > limit) {
      error = too_large;
      return false;
    }
    bool over = false;
    const bool ok = reader_([&](const char* data, std::size_t length) {
      if (body.size() + length > limit) {
        over = true;
        return false;
      }
      body.append(data, length);
      return true;
    });
    if (over || !ok) {
      error = over ? too_large
                   : HttpReply::Error(AgentErrorCode::kInvalidRequest,
                                      "the request body could not be read");
      return false;
    }
    return true;
  }

 private:
  const httplib::ContentReader& reader_;
};

}  // namespace

void HttplibTransport::Dispatch(const httplib::Request& req, httplib::Response& res,
                                const httplib::ContentReader* reader) {
  const auto start = std::chrono::steady_clock::now();
  const RawRequest raw = ToRaw(req);
  const BodyFraming framing = ExamineFraming(raw);
  bool body_consumed = false;
  std::optional<HttplibBody> body;
  if (reader != nullptr) {
    body.emplace(*reader);
  }
  Outcome outcome =
      pipeline_.Decide(raw, body.has_value() ? &*body : nullptr, framing, body_consumed);
  if (!body_consumed) {
    SettleUnreadBody(raw, reader, framing, outcome);
  }
  const bool stream = outcome.reply.stream != nullptr;
  Apply(outcome, res);
  Record(req.method, outcome.route, res.status, std::chrono::steady_clock::now() - start,
         stream && res.status == 200);
}

void HttplibTransport::SettleUnreadBody(const RawRequest& raw, const httplib::ContentReader* reader,
                                        const BodyFraming& framing, Outcome& outcome) const {
  if (framing.kind == BodyFraming::Kind::kNone) {
    return;
  }
  if (outcome.close_connection || !IsJsonContentType(raw)) {
    // Never drained: cpp-httplib's reader parses a multipart body itself (and fails on it).
    outcome.close_connection = true;
    return;
  }
  const bool small_enough =
      framing.kind == BodyFraming::Kind::kChunked ||
      (framing.kind == BodyFraming::Kind::kLength && framing.length <= options_.max_body_bytes);
  if (reader == nullptr || !small_enough) {
    outcome.close_connection = true;
    return;
  }
  std::size_t seen = 0;
  const std::size_t limit = options_.max_body_bytes;
  const bool drained = (*reader)([&](const char*, std::size_t length) {
    seen += length;
    return seen <= limit;
  });
  if (!drained) {
    outcome.close_connection = true;
  }
}

void HttplibTransport::Apply(Outcome& outcome, httplib::Response& res) {
  HttpReply& reply = outcome.reply;
  if (reply.stream != nullptr && pipeline_.AdmitStream(outcome)) {
    AttachStream(reply.stream, reply, res, std::move(outcome.slot));
    return;
  }
  res.status = reply.status;
  for (const auto& [name, value] : reply.headers) {
    if (IsSafeHeader(name, value)) {
      res.set_header(name, value);
    }
  }
  res.set_header("X-Content-Type-Options", "nosniff");
  if (outcome.close_connection) {
    res.set_header("Connection", "close");
    if (!reply.body.empty()) {
      // cpp-httplib 0.11 keeps reading the connection whatever the response's Connection header
      // says. A body provider that reports failure once the whole body is written ends that
      // keep-alive loop, so the unread request body is never parsed as the next request.
      auto body = std::make_shared<const std::string>(std::move(reply.body));
      res.set_content_provider(
          body->size(), reply.content_type,
          [body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
            sink.write(body->data() + offset, length);
            return false;
          });
    }
    return;
  }
  if (!reply.body.empty()) {
    res.set_content(reply.body, reply.content_type);
  }
}

void HttplibTransport::AttachStream(const std::shared_ptr<SseStream>& stream,
                                    const HttpReply& reply, httplib::Response& res,
                                    StreamSlot slot) {
  res.status = 200;
  for (const auto& [name, value] : reply.headers) {
    if (IsSafeHeader(name, value)) {
      res.set_header(name, value);
    }
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_chunked_content_provider(
      "text/event-stream",
      [stream](std::size_t, httplib::DataSink& sink) {
        std::string chunk;
        switch (stream->Next(chunk)) {
          case SseStream::Pull::kWrite:
            if (!sink.write(chunk.data(), chunk.size())) {
              stream->Abort();  // the client went away
              return false;
            }
            return true;
          case SseStream::Pull::kEnd:
            sink.done();
            return true;
          case SseStream::Pull::kAbort:
            return false;
        }
        return false;
      },
      [this, stream, held = std::make_shared<StreamSlot>(std::move(slot))](bool success) {
        stream->MarkFinished(success);
        pipeline_.UnregisterStream(stream.get());
        held->Release();
      });
}

}  // namespace pulse::adapters::http::internal
