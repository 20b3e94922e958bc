// Embeds the installed core and checks that a consumer can use it.
#include <cstdio>

#include "pulse/core/tools/tool_kind.h"

int main() {
  auto kind = pulse::core::ParseToolKind("write");
  if (!kind || pulse::core::ToString(*kind) != "write") {
    std::puts("FAIL: tool kind round trip");
    return 1;
  }
  std::puts("embedded pulse::core OK");
  return 0;
}
