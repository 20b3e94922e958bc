// pulse-cli: one-shot queries and operations against a pulse-server. Everything lives in the
// pulse::cli_app library (cli_app.h) so tests can drive its parts.
#include "cli_app.h"

int main(int argc, char** argv) { return pulse::cli::Main(argc, argv); }
