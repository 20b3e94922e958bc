// The Assistant's control level: how far model-requested infrastructure changes may go.
// The server's configured level is the maximum; a request may only lower it. Every unknown
// spelling normalizes to read_only, so a typo or hostile value can only take authority away.
// Pure functions over plain values; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "rapidjson/document.h"

namespace pulse::core {

// Ordered by authority: read_only < controlled < autonomous.
//  * read_only (default): no infrastructure change can be requested by the model;
//  * controlled: changes go through the action lifecycle and need an approval decision;
//  * autonomous: changes go through the action lifecycle, whose policy may approve them.
enum class ControlLevel { kReadOnly, kControlled, kAutonomous };

// The request-body member a chat request may use to lower the level.
inline constexpr std::string_view kControlLevelField = "control_level";

// Wire string ("read_only", "controlled", "autonomous"); a value outside the enum renders
// as "read_only", the level it is treated as.
std::string_view ToString(ControlLevel level);

// Exact-match normalization: the three wire strings map to their level; anything else
// (blank, "suggest", "AUTONOMOUS", "autonomous ", ...) is read_only.
ControlLevel NormalizeControlLevel(std::string_view text);

// A value outside the enum (e.g. from a cast) becomes read_only; others are unchanged.
ControlLevel NormalizeControlLevel(ControlLevel level);

// Exact-match parse for strict surfaces (a command-line flag should reject a typo rather
// than silently run read_only): nullopt for anything but the three wire strings.
std::optional<ControlLevel> ParseControlLevel(std::string_view text);

// True only for the three exact wire strings.
bool IsValidControlLevel(std::string_view text);

// True when the level lets the model request infrastructure changes: controlled or
// autonomous (after normalization).
bool AllowsControlTools(ControlLevel level);

// The effective level of a request: the lower of the two (both normalized first). A request
// can lower the configured level but never raise it.
ControlLevel Lower(ControlLevel configured, ControlLevel requested);

// What a request body asks for. nullopt when `body` is not an object, or has no
// "control_level" member, or the member is null (no narrowing requested). A string is
// normalized (unknown spellings are read_only); any other JSON type (number, bool, array,
// object) and a repeated member are read_only. Feed the result to Lower(); it can never raise the
// level.
std::optional<ControlLevel> RequestedControlLevel(const rapidjson::Value& body);

// Operator guidance for a refused infrastructure change at `level`: says the change is off
// by configuration (not an error to retry) and names the setting that enables it.
std::string ControlToolsDisabledMessage(ControlLevel level);

}  // namespace pulse::core
