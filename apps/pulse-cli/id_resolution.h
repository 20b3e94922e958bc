// Unique-prefix ids, git-style (docs/cli.md "Ids"): a command that takes a finding, action or
// session id also takes the start of one. The exact id wins; otherwise the one id that starts
// with what was typed (at least 4 characters); several are an ambiguity listed for the user.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"

namespace pulse::cli {

enum class IdKind { kFinding, kAction, kSession };

struct IdMatch {
  enum class Outcome { kExact, kUnique, kNone, kAmbiguous, kTooShort };
  Outcome outcome = Outcome::kNone;
  std::string id;                       // kExact, kUnique
  std::vector<std::string> candidates;  // kAmbiguous: the matching ids, at most 10
};

inline constexpr std::size_t kMinIdPrefix = 4;

// Matches `given` against `ids`. Pure.
IdMatch MatchId(std::string_view given, const std::vector<std::string>& ids);

// The ids of `kind` the server lists (findings with the resolved, snoozed and dismissed ones,
// pending and settled actions, sessions) appended to `ids`: each list's first `max_pages` pages
// of 500, through their cursors. `complete` (when given) says whether every list was read to its
// end. False when a list cannot be read.
bool ListIds(CommandContext& ctx, IdKind kind, std::vector<std::string>& ids, int max_pages = 1,
             bool* complete = nullptr);

// How many pages of 500 ResolveId reads of each list before it stops: a prefix is resolved
// against at most 20,000 findings (and as many pending and settled actions, or sessions).
inline constexpr int kMaxIdPages = 40;

// Replaces `id` by the full id it names, listing the server's ids of `kind` unless `id` already
// has the shape of a full one. nullopt to go on (resolved, or left as typed when the list cannot
// be read, or when no listed id matches a finding or action: the server answers for it);
// otherwise the exit code after reporting: 1 (session_not_found: no such session, also by an
// exact lookup), 2 (an ambiguous or too short prefix, or one that matches a single listed id
// while the lists were too long to read whole: another id beyond them may share it).
std::optional<int> ResolveId(CommandContext& ctx, IdKind kind, std::string& id);

}  // namespace pulse::cli
