// "Did you mean": the known words closest to a mistyped one, for pulse-cli's unknown-command
// message (cli_app.cc). Pure functions; no I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pulse::cli {

// Edit distance with adjacent transpositions counted as one edit (optimal string alignment),
// over bytes. Inputs over 64 bytes are compared only up to their first 64 bytes plus the
// difference in length, so the cost stays bounded for hostile input.
std::size_t EditDistance(std::string_view a, std::string_view b);

// The candidates a user most likely meant by `word`, closest first (ties in the candidates'
// order): those within max(1, size/3) edits (at most 2), or starting with `word` when it has at
// least 2 characters. Empty when nothing is close; at most 3.
std::vector<std::string> Closest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace pulse::cli
