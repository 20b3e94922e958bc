// ask, sessions resume and answer: the Assistant's event streams. The request runs on a worker
// thread while this one watches for Ctrl-C: on SIGINT the connection is closed (the server
// cancels a run whose client went away), the session's run is also aborted explicitly, and the
// command ends with exit code 130. A second Ctrl-C kills the process at once.
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "chat_view.h"
#include "commands.h"
#include "pulse/adapters/http_client/sse_parser.h"
#include "pulse/core/json/json_writer.h"

namespace pulse::cli {
namespace {

// Set by the SIGINT handler. A signal handler can reach nothing else, which is why this one
// piece of state is global; it is lock-free and only ever set to true.
std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int) {
  g_interrupted.store(true);
  signal(SIGINT, SIG_DFL);  // async-signal-safe: a second Ctrl-C ends the process
}

// Installs the handler for its lifetime.
class InterruptWatch {
 public:
  InterruptWatch() {
    g_interrupted.store(false);
    struct sigaction action {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    sigaction(SIGINT, &action, &previous_);
  }
  ~InterruptWatch() { sigaction(SIGINT, &previous_, nullptr); }
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;
  bool interrupted() const { return g_interrupted.load(); }

 private:
  struct sigaction previous_ {};
};

void ControlLevelMember(core::JsonWriter& w, const std::string& level) {
  if (!level.empty()) {
    w.Member("control_level", level);
  }
}

// Asks the server to stop the session's run (best effort: the dropped connection already does).
void AbortRun(CommandContext& ctx, const std::string& session_id) {
  if (session_id.empty()) {
    return;
  }
  absl::StatusOr<ApiCall> call = RouteCall("abort_session", {{"sessionId", session_id}}, {}, "{}");
  absl::StatusOr<std::unique_ptr<PulseClient>> client = ctx.NewClient(absl::Seconds(3));
  if (call.ok() && client.ok()) {
    // Ignored: the run also ends because its stream's client went away.
    static_cast<void>((*client)->Send(call->method, call->target, call->body));
  }
}

// Runs one chat stream; `session_out`, when given, receives the session id the stream named.
int RunChat(CommandContext& ctx, const absl::StatusOr<ApiCall>& call,
            std::string* session_out = nullptr) {
  if (!call.ok()) {
    return ctx.BadCall(call.status());
  }
  ChatView view(ctx.console());
  http_client::SseParser parser;
  bool overflow = false;
  bool received = false;
  std::atomic<bool> finished{false};
  absl::StatusOr<HttpResult> result = absl::UnknownError("not run");
  InterruptWatch watch;
  std::thread worker([&] {
    result =
        ctx.client().Stream(call->method, call->target, call->body, [&](std::string_view bytes) {
          received = true;
          if (!parser.Feed(bytes,
                           [&](const http_client::SseEvent& event) { view.OnFrame(event.data); })) {
            overflow = true;
            return false;
          }
          return !watch.interrupted();
        });
    finished.store(true);
  });
  bool interrupted = false;
  while (!finished.load()) {
    if (watch.interrupted() && !interrupted) {
      interrupted = true;
      ctx.client().Stop();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  worker.join();
  if (session_out != nullptr) {
    *session_out = view.session_id();
  }
  interrupted = interrupted || watch.interrupted();
  if (interrupted) {
    AbortRun(ctx, view.session_id());
    return view.Finish(absl::CancelledError("interrupted"), true, false);
  }
  if (!received) {
    if (!result.ok()) {
      return ctx.Fail(TransportFailure(result.status(), ctx.server()));
    }
    if (result->status != 200) {
      return ctx.Fail(ReplyFailure(result->status, result->body, ctx.client().has_token()));
    }
    if (result->content_type.rfind("text/event-stream", 0) != 0) {
      return ctx.Fail(InvalidResponse(
          "the server answered HTTP 200 with " +
          (result->content_type.empty() ? std::string("no type") : result->content_type) +
          " instead of an event stream"));
    }
  }
  return view.Finish(result.ok() ? absl::OkStatus() : result.status(), false, overflow);
}

int AskOnce(CommandContext& ctx, const std::string& question, const std::string& session_id,
            const std::string& control_level, std::string* session_out) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("message", question);
  if (!session_id.empty()) {
    w.Member("session_id", session_id);
  }
  ControlLevelMember(w, control_level);
  w.EndObject();
  return RunChat(ctx, RouteCall("chat", {}, {}, w.Take()), session_out);
}

std::string Trimmed(const std::string& line) {
  const std::size_t begin = line.find_first_not_of(" \t\r");
  if (begin == std::string::npos) {
    return "";
  }
  return line.substr(begin, line.find_last_not_of(" \t\r") - begin + 1);
}

}  // namespace

int CmdAsk(CommandContext& ctx, const AskArgs& args) {
  if (!args.interactive) {
    return AskOnce(ctx, args.question, args.session_id, args.control_level, nullptr);
  }
  // -i: one conversation. Every line is the next question in the same session (the first
  // turn's, or --session's); the first failing turn ends it with its exit code.
  std::string session = args.session_id;
  auto turn = [&](const std::string& question) {
    std::string named;
    const int code = AskOnce(ctx, question, session, args.control_level, &named);
    if (!named.empty()) {
      session = named;
    }
    return code;
  };
  if (!args.question.empty()) {
    if (const int code = turn(args.question); code != 0) {
      return code;
    }
  }
  const bool terminal = ctx.console().traits().interactive;
  if (terminal) {
    ctx.console().Err("One conversation: type a question and Enter; /exit or Ctrl-D ends it.\n");
  }
  while (true) {
    if (terminal) {
      ctx.console().Err("> ");
    }
    const std::optional<std::string> line = ctx.console().ReadLine();
    if (!line.has_value()) {
      break;
    }
    const std::string question = Trimmed(*line);
    if (question.empty()) {
      continue;
    }
    if (question == "/exit" || question == "/quit") {
      break;
    }
    if (const int code = turn(question); code != 0) {
      return code;
    }
  }
  return 0;
}

int CmdSessionResume(CommandContext& ctx, const SessionArgs& args) {
  core::JsonWriter w;
  w.StartObject();
  ControlLevelMember(w, args.control_level);
  w.EndObject();
  return RunChat(ctx, RouteCall("resume_session", {{"sessionId", args.session_id}}, {}, w.Take()));
}

int CmdAnswer(CommandContext& ctx, const AnswerArgs& args) {
  core::JsonWriter w;
  w.StartObject();
  w.Key("answers");
  w.StartArray();
  w.StartObject();
  w.Member("id", "answer");
  w.Member("value", args.answer);
  w.EndObject();
  w.EndArray();
  ControlLevelMember(w, args.control_level);
  w.EndObject();
  return RunChat(ctx,
                 RouteCall("answer_question", {{"questionId", args.question_id}}, {}, w.Take()));
}

}  // namespace pulse::cli
