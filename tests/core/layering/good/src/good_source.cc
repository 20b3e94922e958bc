// Fixture: a clean file. Comments may mention std::thread, getenv or throw freely,
// and identifiers that merely contain banned words (throwaway, operand) are fine.
#include <string>

#include "pulse/core/ports/clock.h"
int throwaway_count = 0;
int Operand(int x) { return x + throwaway_count; }
