#include "message_mutator.h"

#include <algorithm>

#include "pulse/core/json/json.h"
#include "rapidjson/document.h"

namespace pulse::testing::e2e {
namespace {

// Fragments a mutation may splice in: JSON tokens of every type, structure, escapes and bytes
// that are not UTF-8.
const std::vector<std::string>& Fragments() {
  static const std::vector<std::string> fragments = {"null",
                                                     "true",
                                                     "false",
                                                     "0",
                                                     "-1",
                                                     "1e308",
                                                     "18446744073709551616",
                                                     "\"\"",
                                                     "\"x\"",
                                                     "{}",
                                                     "[]",
                                                     "[[[[",
                                                     "]]]]",
                                                     "{\"a\":",
                                                     ",",
                                                     ":",
                                                     "\"",
                                                     "\\",
                                                     "\\u",
                                                     "\\ud800",
                                                     "\\u0000",
                                                     "\"id\":",
                                                     "\"method\":",
                                                     "\"params\":",
                                                     "\"jsonrpc\":\"2.0\"",
                                                     "\"tools/call\"",
                                                     "\"subscribe_events\"",
                                                     "\xff",
                                                     "\xc3",
                                                     "\xe2\x82",
                                                     "\xf0\x9f\x98\x80",
                                                     "\r",
                                                     "\t",
                                                     " ",
                                                     std::string(1, '\0')};
  return fragments;
}

}  // namespace

const std::vector<std::string>& MutationCorpus() {
  static const std::vector<std::string> corpus = {
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}})",
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
      R"({"jsonrpc":"2.0","id":"p","method":"ping"})",
      R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})",
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_fleet_context","arguments":{"hasFindings":true,"severity":"critical"}}})",
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_findings","arguments":{"include_resolved":false,"limit":5}}})",
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_resource_context","arguments":{"resourceId":"vm:101"}}})",
      R"({"jsonrpc":"2.0","id":6,"method":"prompts/list"})",
      R"({"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"pulse_investigate_resource","arguments":{"resourceId":"vm:101"}}})",
      R"({"jsonrpc":"2.0","id":8,"method":"resources/list","params":{}})",
      R"({"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"pulse://resource/vm%3A101"}})",
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"x"}})",
      R"({"jsonrpc":"2.0","id":10,"result":{}})",
  };
  return corpus;
}

// Byte-level damage: flipped, inserted and deleted bytes, truncation, spliced tokens, repeated
// ranges, two messages joined.
std::string MessageMutator::Bytes(std::string message) {
  const auto pick = [this](std::size_t n) {
    return n == 0 ? std::size_t{0} : static_cast<std::size_t>(random_() % n);
  };
  const int rounds = 1 + static_cast<int>(random_() % 3);
  for (int r = 0; r < rounds; ++r) {
    const std::size_t at = pick(message.size() + 1);
    switch (random_() % 7) {
      case 0:  // flip one byte
        if (!message.empty()) {
          char& c = message[std::min(at, message.size() - 1)];
          c = static_cast<char>(c ^ static_cast<char>(1 + random_() % 255));
        }
        break;
      case 1:  // insert a random byte
        message.insert(at, 1, static_cast<char>(random_() % 256));
        break;
      case 2:  // delete a range
        message.erase(at, pick(16) + 1);
        break;
      case 3:  // truncate
        message.resize(at);
        break;
      case 4:  // splice in a token
        message.insert(at, Fragments()[pick(Fragments().size())]);
        break;
      case 5: {  // duplicate a range
        const std::string range = message.substr(at, pick(32) + 1);
        message.insert(pick(message.size() + 1), range);
        break;
      }
      default: {  // splice two messages
        const std::string& other = MutationCorpus()[pick(MutationCorpus().size())];
        message = message.substr(0, at) + other.substr(pick(other.size() + 1));
        break;
      }
    }
  }
  return message;
}

// Structural damage that keeps the JSON valid: a value anywhere (the envelope, params, tool
// arguments) replaced by one of another type, a member removed, or a member added.
std::string MessageMutator::Structure(const std::string& message) {
  auto parsed = core::ParseJson(message);
  if (!parsed.ok()) {
    return message;  // the corpus is valid JSON; a caller's message may not be
  }
  rapidjson::Document& doc = *parsed;
  auto& alloc = doc.GetAllocator();
  std::vector<rapidjson::Value*> values = {&doc};
  for (std::size_t i = 0; i < values.size(); ++i) {  // every value, breadth first, by index
    rapidjson::Value& v = *values[i];
    if (v.IsObject()) {
      for (rapidjson::SizeType m = 0; m < v.MemberCount(); ++m) {
        values.push_back(&(v.MemberBegin() + m)->value);
      }
    } else if (v.IsArray()) {
      for (rapidjson::SizeType e = 0; e < v.Size(); ++e) {
        values.push_back(&v[e]);
      }
    }
  }
  const auto replacement = [&]() {
    static const std::vector<std::string> kValues = {"null",
                                                     "true",
                                                     "false",
                                                     "0",
                                                     "-1",
                                                     "1.5",
                                                     "1e300",
                                                     "18446744073709551615",
                                                     "\"\"",
                                                     "\"x\"",
                                                     "\"2.0\"",
                                                     "\"get_fleet_context\"",
                                                     "\"pulse://resource/vm%3A101\"",
                                                     "{}",
                                                     "[]",
                                                     "[1,\"a\",null]",
                                                     "{\"resourceId\":5}",
                                                     "\"\\u0000\"",
                                                     "\"\\udc00\""};
    auto value = core::ParseJson(kValues[random_() % kValues.size()]);
    return value.ok() ? rapidjson::Value(*value, alloc) : rapidjson::Value();
  };
  rapidjson::Value& target = *values[random_() % values.size()];
  if (target.IsObject() && target.MemberCount() > 0 && random_() % 2 == 0) {
    if (random_() % 2 == 0) {  // remove a member
      target.RemoveMember(target.MemberBegin() + random_() % target.MemberCount());
    } else {  // add one (possibly a duplicate name)
      static const std::vector<const char*> kNames = {"id",        "method", "params", "name",
                                                      "arguments", "uri",    "x",      "jsonrpc"};
      rapidjson::Value name(kNames[random_() % kNames.size()], alloc);
      target.AddMember(name, replacement(), alloc);
    }
  } else if (&target != &doc || random_() % 4 == 0) {
    target = replacement();
  }
  return core::ToJsonString(doc);
}

std::string MessageMutator::Next() {
  const std::string& seed = MutationCorpus()[random_() % MutationCorpus().size()];
  std::string line = random_() % 2 == 0 ? Bytes(seed) : Structure(seed);
  if (random_() % 3 == 0) {  // and sometimes once more, damaging a damaged message
    line = Bytes(line);
  }
  std::replace(line.begin(), line.end(), '\n', ' ');  // one line per message
  return line;
}

}  // namespace pulse::testing::e2e
