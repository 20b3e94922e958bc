// Clean: a port including only model/ and other ports.
#pragma once
#include "pulse/core/model/finding.h"
#include "pulse/core/ports/clock.h"
