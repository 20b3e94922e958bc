// Planted: a port including something other than model/ (ports are narrowed to model).
#pragma once
#include "pulse/core/json/json.h"
#include "pulse/core/model/finding.h"
