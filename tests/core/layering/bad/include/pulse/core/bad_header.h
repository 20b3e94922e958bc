// Fixture for layering_rejects_violations: every line below breaks the dependency rule.
#pragma once
#include <iostream>
#include <thread>
#include "httplib.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include <SQLiteCpp/SQLiteCpp.h>
#include "CLI/CLI.hpp"
#include <fstream>
