// ChatView: one Assistant event stream (ask, sessions resume, answer) shown as it arrives.
// Human output: the answer text streams to stdout; tool activity and phase changes go to
// stderr only on a terminal (Console::traits().progress); an approval_needed event prints the
// approval card and a question its options; the session id is printed at the end so the user
// can continue. --json: every event is one NDJSON line on stdout, exactly as the server framed
// it ({"type":...,"data":...}); a failure the CLI detects (a cut stream, Ctrl-C) ends the output
// with one error envelope line. Event payloads follow core/loop/loop_event.h. Not thread-safe:
// frames are fed from one thread.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "console.h"
#include "failure.h"
#include "rapidjson/document.h"
#include "text_safety.h"

namespace pulse::cli {

class ChatView {
 public:
  explicit ChatView(const Console& console) : console_(console) {}
  explicit ChatView(const Console&& console) = delete;  // it keeps a reference

  // One `data:` payload of the stream.
  void OnFrame(std::string_view data);

  // The stream is over. `transport` is how the request ended (OK, or the client's error);
  // `interrupted` when the user pressed Ctrl-C; `overflow` when an event was over the size
  // limit. Prints the ending and returns the exit code: 0 for answered, awaiting approval or
  // input; 1 for a failed run (the error event's code); 3 for a stream that ended without its
  // `done` event; 130 when interrupted.
  int Finish(const absl::Status& transport, bool interrupted, bool overflow);

  const std::string& session_id() const { return session_id_; }
  bool saw_done() const { return saw_done_; }
  const std::string& outcome() const { return outcome_; }

 private:
  void OnEvent(std::string_view type, const rapidjson::Value& data);
  void Content(std::string_view text);
  void Progress(const std::string& line);
  void EndLine();  // a newline on stdout if the answer text stopped mid-line

  const Console& console_;
  Utf8Joiner joiner_;
  std::string session_id_;
  std::string outcome_;
  std::string error_code_;
  std::string error_message_;
  bool saw_done_ = false;
  bool mid_line_ = false;
  bool wrote_answer_ = false;
  bool warned_malformed_ = false;
};

}  // namespace pulse::cli
