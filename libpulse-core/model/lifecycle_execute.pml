/* The action lifecycle model, scenario 1: a decided plan (approval-free, or approved by a
 * quorum of one or two) executed by the loop's resume and an API client at once, while the TTL
 * may pass, the resource may drift and the engine may crash (then it reconciles and a client
 * retries). See lifecycle.pml. */
#define SCENARIO_EXECUTE
#include "lifecycle.pml"
