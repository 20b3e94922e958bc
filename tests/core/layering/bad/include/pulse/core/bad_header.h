// Fixture for layering_rejects_violations: every line below breaks the dependency rule.
#pragma once
#include <SQLiteCpp/SQLiteCpp.h>

#include <fstream>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "httplib.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
