// Shared helpers for the tool-vocabulary tests: JSON parsing that never recurses (so tests
// can build hostile, deeply nested inputs), readable class printing, and class constants.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "pulse/core/tools/tool_kind.h"
#include "rapidjson/document.h"

namespace pulse::testing {

inline constexpr core::InvocationClass kResolveNone{core::ToolKind::kResolve,
                                                    core::MutationTarget::kNone};
inline constexpr core::InvocationClass kReadNone{core::ToolKind::kRead,
                                                 core::MutationTarget::kNone};
inline constexpr core::InvocationClass kUserInputNone{core::ToolKind::kUserInput,
                                                      core::MutationTarget::kNone};
inline constexpr core::InvocationClass kWritePulseState{core::ToolKind::kWrite,
                                                        core::MutationTarget::kPulseState};
inline constexpr core::InvocationClass kWriteInfrastructure{core::ToolKind::kWrite,
                                                            core::MutationTarget::kInfrastructure};

// Parses `text` iteratively (constant native stack); the test fails on malformed text.
inline rapidjson::Document Json(std::string_view text) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  INFO("parsing " << std::string(text.substr(0, 200)));
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

// `depth` nested arrays around 1: [[[...1...]]].
inline std::string NestedArrays(int depth) {
  return std::string(depth, '[') + "1" + std::string(depth, ']');
}

}  // namespace pulse::testing

namespace Catch {
template <>
struct StringMaker<pulse::core::InvocationClass> {
  static std::string convert(const pulse::core::InvocationClass& c) {
    return std::string(pulse::core::ToString(c.kind)) + "/" +
           std::string(pulse::core::ToString(c.mutation));
  }
};
}  // namespace Catch
