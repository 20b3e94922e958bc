#include "chat_view.h"

#include "json_output.h"
#include "render.h"

namespace pulse::cli {
namespace {

// Phases worth a progress line (prepare and model_processing happen on every turn).
bool ShowPhase(std::string_view phase) {
  return phase == "plan" || phase == "execute" || phase == "verify" || phase == "approve" ||
         phase == "clarify" || phase == "provider_retry";
}

}  // namespace

void ChatView::OnFrame(std::string_view data) {
  absl::StatusOr<rapidjson::Document> doc = ParseReplyJson(data);
  const rapidjson::Value* payload = doc.ok() ? Member(*doc, "data") : nullptr;
  const std::string type = doc.ok() ? Str(*doc, "type") : std::string();
  if (type.empty() || payload == nullptr || !payload->IsObject()) {
    if (!warned_malformed_) {
      warned_malformed_ = true;
      EndLine();
      console_.Err("pulse-cli: skipped an event that is not {\"type\",\"data\"} JSON\n");
    }
    return;
  }
  if (console_.json()) {
    console_.Out(OutputJson(*doc) + "\n");
  }
  OnEvent(type, *payload);
}

void ChatView::OnEvent(std::string_view type, const rapidjson::Value& data) {
  const bool human = !console_.json();
  if (type == "session") {
    const std::string id = Str(data, "id");
    if (!id.empty()) {
      session_id_ = id;
    }
  } else if (type == "content") {
    if (human) {
      Content(Str(data, "text"));
    }
  } else if (type == "workflow_state") {
    if (human && ShowPhase(Str(data, "phase"))) {
      Progress(console_.PaintErr(Style::kDim, "· " + SafeCell(Str(data, "message"), 160)));
    }
  } else if (type == "tool_start") {
    if (human) {
      Progress(console_.PaintErr(Style::kCyan, "→ " + SafeCell(Str(data, "name"), 48)) + " " +
               console_.PaintErr(Style::kDim, SafeCell(Str(data, "input"), 100)));
    }
  } else if (type == "tool_progress") {
    if (human) {
      Progress(console_.PaintErr(Style::kDim, "  … " + SafeCell(Str(data, "message"), 160)));
    }
  } else if (type == "tool_end") {
    if (human) {
      const bool ok = Bool(data, "success").value_or(false);
      std::string line =
          ok ? console_.PaintErr(Style::kGreen, "✓ ") : console_.PaintErr(Style::kRed, "✗ ");
      line += SafeCell(Str(data, "name"), 48);
      if (!ok) {
        line += " " + console_.PaintErr(Style::kDim, SafeCell(Str(data, "output"), 120));
      }
      Progress(line);
    }
  } else if (type == "approval_needed") {
    if (human) {
      EndLine();
      console_.Out(wrote_answer_ ? "\n" : "");
      RenderApprovalCard(console_, CardFromApprovalEvent(data), session_id_);
      wrote_answer_ = true;
    }
  } else if (type == "question") {
    if (human) {
      EndLine();
      const rapidjson::Value* q = Member(data, "question");
      const rapidjson::Value empty;
      const rapidjson::Value& question = q != nullptr ? *q : empty;
      console_.Out(console_.PaintOut(Style::kBold, "Question: ") +
                   SafeText(Str(question, "question"), true) + "\n");
      const rapidjson::Value* options = Member(question, "options");
      if (options != nullptr && options->IsArray()) {
        for (const rapidjson::Value& o : options->GetArray()) {
          const std::string label =
              o.IsObject() ? (Str(o, "label").empty() ? Str(o, "value") : Str(o, "label"))
                           : ScalarText(o);
          console_.Out("  - " + SafeCell(label, 160) + "\n");
        }
      }
      console_.Out("  answer:   pulse-cli answer " + SafeCell(Str(data, "question_id"), 128) +
                   " \"...\"\n");
      wrote_answer_ = true;
    }
  } else if (type == "error") {
    error_code_ = Str(data, "code");
    error_message_ = Str(data, "message");
    const std::string reason = Str(data, "reason");
    if (!reason.empty()) {
      error_message_ += " (" + reason + ")";
    }
  } else if (type == "done") {
    saw_done_ = true;
    outcome_ = Str(data, "outcome");
    const std::string id = Str(data, "session_id");
    if (!id.empty()) {
      session_id_ = id;
    }
  }
}

void ChatView::Content(std::string_view text) {
  const std::string ready = joiner_.Take(text);
  if (ready.empty()) {
    return;
  }
  const std::string safe = SafeText(ready, true);
  console_.Out(safe);
  mid_line_ = safe.back() != '\n';
  wrote_answer_ = true;
}

void ChatView::Progress(const std::string& line) {
  if (!console_.traits().progress) {
    return;
  }
  // On one terminal the answer (stdout) and the activity (stderr) share the screen.
  if (mid_line_ && console_.traits().out_tty) {
    console_.Out("\n");
    mid_line_ = false;
  }
  console_.Err(line + "\n");
}

void ChatView::EndLine() {
  const std::string rest = joiner_.Flush();
  if (!rest.empty()) {
    const std::string safe = SafeText(rest, true);
    console_.Out(safe);
    mid_line_ = safe.back() != '\n';
  }
  if (mid_line_) {
    console_.Out("\n");
    mid_line_ = false;
  }
}

int ChatView::Finish(const absl::Status& transport, bool interrupted, bool overflow) {
  if (!console_.json()) {
    EndLine();
  }
  const std::string continue_hint = session_id_.empty()
                                        ? std::string()
                                        : "session " + SafeCell(session_id_, 128) +
                                              " — continue with: pulse-cli ask --session " +
                                              SafeCell(session_id_, 128) + " \"...\"";
  if (interrupted) {
    Failure f = LocalFailure(ExitCode::kInterrupted, kCodeInterrupted,
                             "interrupted; the run was asked to stop");
    f.hint = continue_hint;
    return Report(console_, f);
  }
  if (!saw_done_) {
    std::string why = overflow ? "an event was larger than the client accepts"
                               : "the stream ended before the run finished";
    if (!transport.ok() && !overflow) {
      why += " (" + std::string(transport.message()) + ")";
    }
    Failure f = LocalFailure(ExitCode::kUnreachable, kCodeStreamIncomplete, why);
    f.hint = continue_hint;
    return Report(console_, f);
  }
  if (outcome_ == "failed" || !error_code_.empty()) {
    Failure f = LocalFailure(ExitCode::kRefused, error_code_.empty() ? "run_failed" : error_code_,
                             error_message_.empty() ? "the run failed" : error_message_);
    f.hint = continue_hint;
    // --json: the error and done events already said it; stdout stays pure NDJSON events.
    if (console_.json()) {
      console_.Err("pulse-cli: " + SafeCell(f.code, 80) + ": " + SafeCell(f.message, 500) + "\n");
      return static_cast<int>(f.exit);
    }
    return Report(console_, f);
  }
  if (!console_.json()) {
    if (outcome_ == "unverified") {
      console_.Err(
          console_.PaintErr(Style::kYellow, "note: the Assistant could not verify this answer") +
          "\n");
    }
    if (!continue_hint.empty()) {
      console_.Err(console_.PaintErr(Style::kDim, continue_hint) + "\n");
    }
  }
  return 0;
}

}  // namespace pulse::cli
