/* The action lifecycle model, scenario 2: a pending plan (quorum one or two) decided by two
 * humans at once while the TTL may pass and the resource may drift, and the loop's resume
 * executing whatever was decided. See lifecycle.pml. */
#define SCENARIO_DECIDE
#include "lifecycle.pml"
