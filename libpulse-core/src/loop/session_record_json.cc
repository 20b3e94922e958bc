#include "pulse/core/loop/session_record_json.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

// Wire names, spelled once.
namespace w {
// record
constexpr std::string_view kId = "id";
constexpr std::string_view kRevision = "revision";
constexpr std::string_view kStatus = "status";
constexpr std::string_view kTranscript = "transcript";
constexpr std::string_view kFsm = "fsm";
constexpr std::string_view kFacts = "facts";
constexpr std::string_view kSuspended = "suspended";
constexpr std::string_view kUsage = "usage";
constexpr std::string_view kUsageTotals = "usage_totals";
constexpr std::string_view kCreatedAt = "created_at";
constexpr std::string_view kUpdatedAt = "updated_at";
constexpr std::string_view kKind = "kind";    // absent for chat (and in older records)
constexpr std::string_view kOwner = "owner";  // absent when owned by no one
constexpr std::string_view kTokenId = "token_id";
constexpr std::string_view kTokenName = "token_name";
// message
constexpr std::string_view kRole = "role";
constexpr std::string_view kContent = "content";
constexpr std::string_view kToolCalls = "tool_calls";
constexpr std::string_view kToolCallId = "tool_call_id";
constexpr std::string_view kToolName = "tool_name";
constexpr std::string_view kIsError = "is_error";
// tool call
constexpr std::string_view kName = "name";
constexpr std::string_view kArguments = "arguments";
constexpr std::string_view kProviderState = "provider_state";
// fsm snapshot
constexpr std::string_view kState = "state";
constexpr std::string_view kWroteThisEpisode = "wrote_this_episode";
constexpr std::string_view kReadAfterWrite = "read_after_write";
constexpr std::string_view kConsecutiveVerifyBlocks = "consecutive_verify_blocks";
constexpr std::string_view kLastWriteTool = "last_write_tool";
constexpr std::string_view kLastWriteAt = "last_write_at_unix_nanos";
constexpr std::string_view kLastReadTool = "last_read_tool";
constexpr std::string_view kLastReadAt = "last_read_at_unix_nanos";
// fact
constexpr std::string_view kKey = "key";
constexpr std::string_view kValue = "value";
constexpr std::string_view kTurn = "turn";
// suspended call
constexpr std::string_view kActionId = "action_id";
constexpr std::string_view kPlanHash = "plan_hash";
constexpr std::string_view kTranscriptIndex = "transcript_index";
constexpr std::string_view kSuspendedAt = "suspended_at";
constexpr std::string_view kCounters = "counters";
constexpr std::string_view kDeniedFingerprints = "denied_fingerprints";
// counters
constexpr std::string_view kTurns = "turns";
constexpr std::string_view kProviderCalls = "provider_calls";
constexpr std::string_view kInputTokens = "input_tokens";
constexpr std::string_view kOutputTokens = "output_tokens";
constexpr std::string_view kCounterToolCalls = "tool_calls";
constexpr std::string_view kToolErrors = "tool_errors";
constexpr std::string_view kEvidenceCalls = "evidence_calls";
constexpr std::string_view kConsecutiveErrorTurns = "consecutive_error_turns";
constexpr std::string_view kToolsRun = "tools_run";
constexpr std::string_view kCostUsd = "cost_usd";
constexpr std::string_view kCostUnknown = "cost_unknown";
// usage entry (turn, input_tokens, output_tokens and cost_usd as above)
constexpr std::string_view kRoute = "route";
constexpr std::string_view kBudgetApplicable = "budget_applicable";
// usage totals (provider_calls, input_tokens, output_tokens as above)
constexpr std::string_view kPricedCostUsd = "priced_cost_usd";
constexpr std::string_view kUnpricedCalls = "unpriced_calls";
}  // namespace w

// Any string is bounded by the document; names and ids by something far smaller.
constexpr std::size_t kText = kMaxSessionRecordJsonBytes;
constexpr std::size_t kName = 1024;
constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr std::int64_t kMaxCount = std::int64_t{1} << 53;  // exact in every JSON reader
constexpr std::int64_t kMinInt64 = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr JsonPresence kRequired = JsonPresence::kRequired;
constexpr JsonStringRule kRequiredEnum{64, kRequired};

// ---- encoding ---------------------------------------------------------------------------

void WriteMessage(JsonWriter& out, const Message& m) {
  out.StartObject();
  out.Member(w::kRole, ToString(m.role));
  out.MemberIfNotEmpty(w::kContent, m.content);
  if (!m.tool_calls.empty()) {
    out.Key(w::kToolCalls);
    out.StartArray();
    for (const ToolCall& call : m.tool_calls) {
      out.StartObject();
      out.MemberIfNotEmpty(w::kId, call.id);
      out.MemberIfNotEmpty(w::kName, call.name);
      out.MemberIfNotEmpty(w::kArguments, call.arguments_json);
      out.MemberIfNotEmpty(w::kProviderState, call.provider_state);
      out.EndObject();
    }
    out.EndArray();
  }
  out.MemberIfNotEmpty(w::kToolCallId, m.tool_call_id);
  out.MemberIfNotEmpty(w::kToolName, m.tool_name);
  out.Member(w::kIsError, m.is_error);
  out.EndObject();
}

void WriteSnapshot(JsonWriter& out, const SessionSnapshot& s) {
  out.StartObject();
  out.Member(w::kState, s.state);
  out.Member(w::kWroteThisEpisode, s.wrote_this_episode);
  out.Member(w::kReadAfterWrite, s.read_after_write);
  out.Member(w::kConsecutiveVerifyBlocks, s.consecutive_verify_blocks);
  out.MemberIfNotEmpty(w::kLastWriteTool, s.last_write_tool);
  if (s.last_write_at_unix_nanos.has_value()) {
    out.Member(w::kLastWriteAt, *s.last_write_at_unix_nanos);
  }
  out.MemberIfNotEmpty(w::kLastReadTool, s.last_read_tool);
  if (s.last_read_at_unix_nanos.has_value()) {
    out.Member(w::kLastReadAt, *s.last_read_at_unix_nanos);
  }
  out.EndObject();
}

void WriteFact(JsonWriter& out, const KnowledgeFact& f) {
  out.StartObject();
  out.MemberIfNotEmpty(w::kKey, f.key);
  out.MemberIfNotEmpty(w::kValue, f.value);
  out.MemberIfNotEmpty(w::kToolCallId, f.tool_call_id);
  out.Member(w::kTurn, f.turn);
  out.EndObject();
}

void WriteCounters(JsonWriter& out, const RunCounters& c) {
  out.StartObject();
  out.Member(w::kTurns, c.turns);
  out.Member(w::kProviderCalls, c.provider_calls);
  out.Member(w::kInputTokens, c.input_tokens);
  out.Member(w::kOutputTokens, c.output_tokens);
  out.Member(w::kCounterToolCalls, c.tool_calls);
  out.Member(w::kToolErrors, c.tool_errors);
  out.Member(w::kEvidenceCalls, c.evidence_calls);
  out.Member(w::kConsecutiveErrorTurns, c.consecutive_error_turns);
  out.Key(w::kToolsRun);
  out.StartObject();
  for (const auto& [tool, count] : c.tools_run) {
    out.Member(tool, count);
  }
  out.EndObject();
  out.Key(w::kCostUsd);
  out.Double(c.cost_usd);
  out.Member(w::kCostUnknown, c.cost_unknown);
  out.EndObject();
}

void WriteUsage(JsonWriter& out, const TurnUsage& u) {
  out.StartObject();
  out.Member(w::kTurn, u.turn);
  out.MemberIfNotEmpty(w::kRoute, u.route);
  out.Member(w::kInputTokens, u.input_tokens);
  out.Member(w::kOutputTokens, u.output_tokens);
  out.NumberMemberIfFinite(w::kCostUsd, u.cost_usd);
  out.Member(w::kBudgetApplicable, u.budget_applicable);
  out.EndObject();
}

void WriteUsageTotals(JsonWriter& out, const UsageTotals& t) {
  out.StartObject();
  out.Member(w::kProviderCalls, t.provider_calls);
  out.Member(w::kInputTokens, t.input_tokens);
  out.Member(w::kOutputTokens, t.output_tokens);
  out.Key(w::kPricedCostUsd);
  out.Double(t.priced_cost_usd);
  out.Member(w::kUnpricedCalls, t.unpriced_calls);
  out.EndObject();
}

void WriteSuspended(JsonWriter& out, const SuspendedCall& s) {
  out.StartObject();
  out.MemberIfNotEmpty(w::kToolCallId, s.tool_call_id);
  out.MemberIfNotEmpty(w::kToolName, s.tool_name);
  out.MemberIfNotEmpty(w::kArguments, s.arguments_json);
  out.MemberIfNotEmpty(w::kActionId, s.action_id);
  out.MemberIfNotEmpty(w::kPlanHash, s.plan_hash);
  out.Member(w::kTranscriptIndex, s.transcript_index);
  out.TimeMember(w::kSuspendedAt, s.suspended_at);
  out.Key(w::kCounters);
  WriteCounters(out, s.counters);
  out.Key(w::kDeniedFingerprints);
  out.StringArray(s.denied_fingerprints);
  out.EndObject();
}

// ---- decoding ---------------------------------------------------------------------------

// The array member `key` of `in` (nullptr when absent), at most `max_items` long.
const rapidjson::Value* ArrayMember(JsonObjectReader& in, std::string_view key,
                                    std::size_t max_items) {
  const rapidjson::Value* v = in.Member(key);
  if (v == nullptr) {
    return nullptr;
  }
  if (!v->IsArray()) {
    in.Fail(key, "must be an array");
    return nullptr;
  }
  if (v->Size() > max_items) {
    in.Fail(key, fmt::format("has more than {} items", max_items));
    return nullptr;
  }
  return v;
}

absl::StatusOr<ToolCall> ReadToolCall(const rapidjson::Value& value, std::string path) {
  JsonObjectReader in(value, std::move(path));
  // provider_state arrived with Gemini thought signatures: older records lack it.
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kId, w::kName, w::kArguments, w::kProviderState}));
  ToolCall call;
  call.id = in.String(w::kId, {kName}).value_or("");
  call.name = in.String(w::kName, {kName}).value_or("");
  call.arguments_json = in.String(w::kArguments, {kText}).value_or("");
  call.provider_state = in.String(w::kProviderState, {kMaxProviderStateBytes}).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  return call;
}

absl::StatusOr<Message> ReadMessage(const rapidjson::Value& value, std::size_t index) {
  const std::string path = fmt::format("transcript[{}]", index);
  JsonObjectReader in(value, path);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers(
      {w::kRole, w::kContent, w::kToolCalls, w::kToolCallId, w::kToolName, w::kIsError}));
  Message m;
  m.role = in.Enum(w::kRole, ParseMessageRole, kRequiredEnum).value_or(m.role);
  m.content = in.String(w::kContent, {kText}).value_or("");
  m.tool_call_id = in.String(w::kToolCallId, {kName}).value_or("");
  m.tool_name = in.String(w::kToolName, {kName}).value_or("");
  m.is_error = in.Bool(w::kIsError, kRequired).value_or(false);
  const rapidjson::Value* calls = ArrayMember(in, w::kToolCalls, kMaxSessionToolCallsPerMessage);
  PULSE_RETURN_IF_ERROR(in.status());
  if (calls != nullptr) {
    m.tool_calls.reserve(calls->Size());
    std::size_t i = 0;
    for (const auto& call : calls->GetArray()) {
      PULSE_ASSIGN_OR_RETURN(ToolCall c,
                             ReadToolCall(call, fmt::format("{}.tool_calls[{}]", path, i++)));
      m.tool_calls.push_back(std::move(c));
    }
  }
  if (absl::Status s = ValidateRefusedClaim(m); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
  }
  return m;
}

absl::StatusOr<SessionSnapshot> ReadSnapshot(const rapidjson::Value& value) {
  JsonObjectReader in(value, "fsm");
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kState, w::kWroteThisEpisode, w::kReadAfterWrite,
                                          w::kConsecutiveVerifyBlocks, w::kLastWriteTool,
                                          w::kLastWriteAt, w::kLastReadTool, w::kLastReadAt}));
  SessionSnapshot s;
  s.state = in.String(w::kState, {64, kRequired}).value_or(s.state);
  s.wrote_this_episode = in.Bool(w::kWroteThisEpisode, kRequired).value_or(false);
  s.read_after_write = in.Bool(w::kReadAfterWrite, kRequired).value_or(false);
  s.consecutive_verify_blocks =
      in.Int(w::kConsecutiveVerifyBlocks, 0, kMaxCount, kRequired).value_or(0);
  s.last_write_tool = in.String(w::kLastWriteTool, {kName}).value_or("");
  s.last_write_at_unix_nanos = in.Int(w::kLastWriteAt, kMinInt64, kMaxInt64);
  s.last_read_tool = in.String(w::kLastReadTool, {kName}).value_or("");
  s.last_read_at_unix_nanos = in.Int(w::kLastReadAt, kMinInt64, kMaxInt64);
  PULSE_RETURN_IF_ERROR(in.status());
  return s;
}

absl::StatusOr<KnowledgeFact> ReadFact(const rapidjson::Value& value, std::size_t index) {
  JsonObjectReader in(value, fmt::format("facts[{}]", index));
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kKey, w::kValue, w::kToolCallId, w::kTurn}));
  KnowledgeFact f;
  f.key = in.String(w::kKey, {kName}).value_or("");
  f.value = in.String(w::kValue, {kText}).value_or("");
  f.tool_call_id = in.String(w::kToolCallId, {kName}).value_or("");
  f.turn = static_cast<int>(in.Int(w::kTurn, 0, kMaxInt, kRequired).value_or(0));
  PULSE_RETURN_IF_ERROR(in.status());
  return f;
}

absl::Status ReadToolsRun(JsonObjectReader& in, std::map<std::string, int>& out) {
  const rapidjson::Value* v = in.Member(w::kToolsRun, kRequired);
  PULSE_RETURN_IF_ERROR(in.status());
  if (!v->IsObject()) {
    in.Fail(w::kToolsRun, "must be an object");
    return in.status();
  }
  if (v->MemberCount() > kMaxSessionToolsRun) {
    in.Fail(w::kToolsRun, fmt::format("has more than {} entries", kMaxSessionToolsRun));
    return in.status();
  }
  for (const auto& m : v->GetObject()) {
    const std::string_view tool = StringViewOf(m.name);
    if (tool.size() > kName || !IsValidUtf8(tool)) {
      in.Fail(w::kToolsRun, "has an invalid tool name");
      return in.status();
    }
    if (!m.value.IsInt64() || m.value.GetInt64() < 0 || m.value.GetInt64() > kMaxInt) {
      in.Fail(w::kToolsRun, fmt::format("values must be integers between 0 and {}", kMaxInt));
      return in.status();
    }
    if (!out.emplace(std::string(tool), static_cast<int>(m.value.GetInt64())).second) {
      in.Fail(w::kToolsRun, "has a duplicate tool name");
      return in.status();
    }
  }
  return absl::OkStatus();
}

// A money amount: a finite, non-negative number.
std::optional<double> ReadUsd(JsonObjectReader& in, std::string_view key,
                              JsonPresence presence = JsonPresence::kOptional) {
  std::optional<double> usd = in.Number(key, presence);
  if (usd.has_value() && *usd < 0) {
    in.Fail(key, "must not be negative");
    return std::nullopt;
  }
  return usd;
}

absl::StatusOr<RunCounters> ReadCounters(const rapidjson::Value& value) {
  JsonObjectReader in(value, "suspended.counters");
  // cost_usd and cost_unknown arrived with usage accounting: older records lack them.
  PULSE_RETURN_IF_ERROR(
      in.ExpectMembers({w::kTurns, w::kProviderCalls, w::kInputTokens, w::kOutputTokens,
                        w::kCounterToolCalls, w::kToolErrors, w::kEvidenceCalls,
                        w::kConsecutiveErrorTurns, w::kToolsRun, w::kCostUsd, w::kCostUnknown}));
  RunCounters c;
  const auto count = [&](std::string_view key) {
    return static_cast<int>(in.Int(key, 0, kMaxInt, kRequired).value_or(0));
  };
  c.turns = count(w::kTurns);
  c.provider_calls = count(w::kProviderCalls);
  c.input_tokens = in.Int(w::kInputTokens, 0, kMaxCount, kRequired).value_or(0);
  c.output_tokens = in.Int(w::kOutputTokens, 0, kMaxCount, kRequired).value_or(0);
  c.tool_calls = count(w::kCounterToolCalls);
  c.tool_errors = count(w::kToolErrors);
  c.evidence_calls = count(w::kEvidenceCalls);
  c.consecutive_error_turns = count(w::kConsecutiveErrorTurns);
  c.cost_usd = ReadUsd(in, w::kCostUsd).value_or(0);
  c.cost_unknown = in.Bool(w::kCostUnknown).value_or(false);
  PULSE_RETURN_IF_ERROR(in.status());
  PULSE_RETURN_IF_ERROR(ReadToolsRun(in, c.tools_run));
  return c;
}

absl::StatusOr<SuspendedCall> ReadSuspended(const rapidjson::Value& value) {
  JsonObjectReader in(value, "suspended");
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kToolCallId, w::kToolName, w::kArguments, w::kActionId,
                                          w::kPlanHash, w::kTranscriptIndex, w::kSuspendedAt,
                                          w::kCounters, w::kDeniedFingerprints}));
  SuspendedCall s;
  s.tool_call_id = in.String(w::kToolCallId, {kName}).value_or("");
  s.tool_name = in.String(w::kToolName, {kName}).value_or("");
  s.arguments_json = in.String(w::kArguments, {kText}).value_or("");
  s.action_id = in.String(w::kActionId, {kName}).value_or("");
  s.plan_hash = in.String(w::kPlanHash, {kName}).value_or("");
  s.transcript_index = static_cast<std::size_t>(
      in.Int(w::kTranscriptIndex, 0, static_cast<std::int64_t>(kMaxSessionTranscriptMessages),
             kRequired)
          .value_or(0));
  s.suspended_at = in.Time(w::kSuspendedAt, kRequired).value_or(s.suspended_at);
  s.denied_fingerprints =
      in.StringArray(w::kDeniedFingerprints, kMaxSessionDeniedFingerprints, kText, kRequired);
  const rapidjson::Value* counters = in.Member(w::kCounters, kRequired);
  PULSE_RETURN_IF_ERROR(in.status());
  PULSE_ASSIGN_OR_RETURN(s.counters, ReadCounters(*counters));
  return s;
}

absl::Status ReadTranscript(JsonObjectReader& in, SessionRecord& r) {
  const rapidjson::Value* v = ArrayMember(in, w::kTranscript, kMaxSessionTranscriptMessages);
  PULSE_RETURN_IF_ERROR(in.status());
  if (v == nullptr) {
    return absl::OkStatus();
  }
  r.transcript.reserve(v->Size());
  std::size_t i = 0;
  for (const auto& m : v->GetArray()) {
    PULSE_ASSIGN_OR_RETURN(Message message, ReadMessage(m, i++));
    r.transcript.push_back(std::move(message));
  }
  return absl::OkStatus();
}

absl::StatusOr<TurnUsage> ReadTurnUsage(const rapidjson::Value& value, std::size_t index) {
  JsonObjectReader in(value, fmt::format("usage[{}]", index));
  PULSE_RETURN_IF_ERROR(in.ExpectMembers(
      {w::kTurn, w::kRoute, w::kInputTokens, w::kOutputTokens, w::kCostUsd, w::kBudgetApplicable}));
  TurnUsage u;
  u.turn = static_cast<int>(in.Int(w::kTurn, 0, kMaxInt, kRequired).value_or(0));
  u.route = in.String(w::kRoute, {kName}).value_or("");
  u.input_tokens = in.Int(w::kInputTokens, 0, kMaxCount, kRequired).value_or(0);
  u.output_tokens = in.Int(w::kOutputTokens, 0, kMaxCount, kRequired).value_or(0);
  u.cost_usd = ReadUsd(in, w::kCostUsd);
  u.budget_applicable = in.Bool(w::kBudgetApplicable, kRequired).value_or(true);
  PULSE_RETURN_IF_ERROR(in.status());
  return u;
}

// Both members are optional: records written before usage accounting have neither.
absl::Status ReadUsage(JsonObjectReader& in, SessionRecord& r) {
  const rapidjson::Value* v = ArrayMember(in, w::kUsage, kMaxSessionUsageEntries);
  const rapidjson::Value* totals = in.Member(w::kUsageTotals);
  PULSE_RETURN_IF_ERROR(in.status());
  if (v != nullptr) {
    r.usage.reserve(v->Size());
    std::size_t i = 0;
    for (const auto& u : v->GetArray()) {
      PULSE_ASSIGN_OR_RETURN(TurnUsage entry, ReadTurnUsage(u, i++));
      r.usage.push_back(std::move(entry));
    }
  }
  if (totals != nullptr) {
    JsonObjectReader t(*totals, "usage_totals");
    PULSE_RETURN_IF_ERROR(t.ExpectMembers({w::kProviderCalls, w::kInputTokens, w::kOutputTokens,
                                           w::kPricedCostUsd, w::kUnpricedCalls}));
    r.usage_totals.provider_calls = t.Int(w::kProviderCalls, 0, kMaxCount, kRequired).value_or(0);
    r.usage_totals.input_tokens = t.Int(w::kInputTokens, 0, kMaxCount, kRequired).value_or(0);
    r.usage_totals.output_tokens = t.Int(w::kOutputTokens, 0, kMaxCount, kRequired).value_or(0);
    r.usage_totals.priced_cost_usd = ReadUsd(t, w::kPricedCostUsd, kRequired).value_or(0);
    r.usage_totals.unpriced_calls = t.Int(w::kUnpricedCalls, 0, kMaxCount, kRequired).value_or(0);
    PULSE_RETURN_IF_ERROR(t.status());
  }
  return absl::OkStatus();
}

absl::Status ReadFacts(JsonObjectReader& in, SessionRecord& r) {
  const rapidjson::Value* v = ArrayMember(in, w::kFacts, kMaxSessionFacts);
  PULSE_RETURN_IF_ERROR(in.status());
  if (v == nullptr) {
    return absl::OkStatus();
  }
  r.facts.reserve(v->Size());
  std::size_t i = 0;
  for (const auto& f : v->GetArray()) {
    PULSE_ASSIGN_OR_RETURN(KnowledgeFact fact, ReadFact(f, i++));
    r.facts.push_back(std::move(fact));
  }
  return absl::OkStatus();
}

}  // namespace

std::string SessionRecordToJson(const SessionRecord& record) {
  JsonWriter out;
  out.StartObject();
  out.Member(w::kId, record.id);
  out.Member(w::kRevision, record.revision);
  out.Member(w::kStatus, ToString(record.status));
  out.Key(w::kTranscript);
  out.StartArray();
  for (const Message& m : record.transcript) {
    WriteMessage(out, m);
  }
  out.EndArray();
  out.Key(w::kFsm);
  WriteSnapshot(out, record.fsm);
  out.Key(w::kFacts);
  out.StartArray();
  for (const KnowledgeFact& f : record.facts) {
    WriteFact(out, f);
  }
  out.EndArray();
  if (record.suspended.has_value()) {
    out.Key(w::kSuspended);
    WriteSuspended(out, *record.suspended);
  }
  if (!record.usage.empty()) {
    out.Key(w::kUsage);
    out.StartArray();
    for (const TurnUsage& u : record.usage) {
      WriteUsage(out, u);
    }
    out.EndArray();
  }
  if (record.usage_totals != UsageTotals{}) {
    out.Key(w::kUsageTotals);
    WriteUsageTotals(out, record.usage_totals);
  }
  out.TimeMember(w::kCreatedAt, record.created_at);
  out.TimeMember(w::kUpdatedAt, record.updated_at);
  if (record.kind != SessionKind::kChat) {
    out.Member(w::kKind, ToString(record.kind));
  }
  if (record.owner.owned() || !record.owner.token_name.empty()) {
    out.Key(w::kOwner);
    out.StartObject();
    out.Member(w::kTokenId, record.owner.token_id);
    out.Member(w::kTokenName, record.owner.token_name);
    out.EndObject();
  }
  out.EndObject();
  return out.Take();
}

absl::StatusOr<SessionRecord> SessionRecordFromJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(
      rapidjson::Document doc,
      ParseJson(json, JsonLimits{kMaxSessionRecordJsonBytes, kMaxSessionRecordJsonDepth}));
  JsonObjectReader in(doc, "session");
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kId, w::kRevision, w::kStatus, w::kTranscript, w::kFsm,
                                          w::kFacts, w::kSuspended, w::kUsage, w::kUsageTotals,
                                          w::kCreatedAt, w::kUpdatedAt, w::kKind, w::kOwner}));
  SessionRecord r;
  r.id = in.String(w::kId, {kMaxSessionIdBytes, kRequired}).value_or("");
  r.revision = in.Int(w::kRevision, 0, kMaxCount, kRequired).value_or(0);
  r.status = in.Enum(w::kStatus, ParseSessionStatus, kRequiredEnum).value_or(r.status);
  r.created_at = in.Time(w::kCreatedAt, kRequired).value_or(r.created_at);
  r.updated_at = in.Time(w::kUpdatedAt, kRequired).value_or(r.updated_at);
  const rapidjson::Value* fsm = in.Member(w::kFsm, kRequired);
  const rapidjson::Value* suspended = in.Member(w::kSuspended);
  r.kind = in.Enum(w::kKind, ParseSessionKind, JsonStringRule{64}).value_or(SessionKind::kChat);
  const rapidjson::Value* owner = in.Member(w::kOwner);
  PULSE_RETURN_IF_ERROR(in.status());
  if (owner != nullptr) {
    JsonObjectReader o(*owner, "owner");
    PULSE_RETURN_IF_ERROR(o.ExpectMembers({w::kTokenId, w::kTokenName}));
    r.owner.token_id = o.String(w::kTokenId, {kMaxSessionIdBytes, kRequired}).value_or("");
    r.owner.token_name = o.String(w::kTokenName, {kMaxSessionOwnerBytes}).value_or("");
    PULSE_RETURN_IF_ERROR(o.status());
  }
  PULSE_RETURN_IF_ERROR(ReadTranscript(in, r));
  PULSE_RETURN_IF_ERROR(ReadFacts(in, r));
  PULSE_RETURN_IF_ERROR(ReadUsage(in, r));
  PULSE_ASSIGN_OR_RETURN(r.fsm, ReadSnapshot(*fsm));
  if (suspended != nullptr) {
    PULSE_ASSIGN_OR_RETURN(SuspendedCall call, ReadSuspended(*suspended));
    r.suspended = std::move(call);
  }
  return r;
}

}  // namespace pulse::core
