// What docker_fleet.cc and docker_watch.cc share (private to the adapter).
#pragma once

#include <string>
#include <string_view>

namespace pulse::docker {

// A local id part from free text: [A-Za-z0-9._-], anything else becomes '-'; "unnamed" when
// empty; at most 128 bytes.
std::string LocalPart(std::string_view text);

}  // namespace pulse::docker
