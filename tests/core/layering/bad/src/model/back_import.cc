// Planted: a value type reaching up into the loop that uses it.
#include "pulse/core/json/json.h"
#include "pulse/core/loop/agentic_loop.h"
