// Planted: a value type reaching up into the loop that uses it.
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/json/json.h"
