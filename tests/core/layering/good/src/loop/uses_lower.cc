// Clean: a module including itself and modules below it.
#include "pulse/core/json/json.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/ports/fleet.h"
