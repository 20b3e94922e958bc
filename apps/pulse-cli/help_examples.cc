#include "help_examples.h"

#include <utility>

namespace pulse::cli {
namespace {

// One entry per command; the lines are shown under "Examples:" as they are.
constexpr std::pair<std::string_view, std::string_view> kExamples[] = {
    {"",
     "  pulse-cli status\n"
     "  pulse-cli findings\n"
     "  pulse-cli help findings snooze"},
    {"ask",
     "  pulse-cli ask \"which VM is closest to running out of memory?\"\n"
     "  pulse-cli ask --session 3f2a \"and what about its disk?\"\n"
     "  pulse-cli ask -i\n"
     "  printf 'how is db-01?\\nand db-02?\\n' | pulse-cli ask -i"},
    {"findings",
     "  pulse-cli findings\n"
     "  pulse-cli findings --all --resource vm:105"},
    {"findings list",
     "  pulse-cli findings list --limit 20\n"
     "  pulse-cli findings list --all --json"},
    {"findings ack", "  pulse-cli findings ack 7c1e"},
    {"findings snooze", "  pulse-cli findings snooze 7c1e --hours 24"},
    {"findings dismiss",
     "  pulse-cli findings dismiss 7c1e --reason expected_behavior --note \"nightly backup\""},
    {"findings resolve", "  pulse-cli findings resolve 7c1e --note \"raised the memory limit\""},
    {"findings unsnooze", "  pulse-cli findings unsnooze 7c1e"},
    {"findings reopen", "  pulse-cli findings reopen 7c1e"},
    {"actions",
     "  pulse-cli actions\n"
     "  pulse-cli actions --settled --limit 10"},
    {"actions list", "  pulse-cli actions list --settled"},
    {"actions plan",
     "  pulse-cli actions plan app-container:grafana restart --reason \"stuck\"\n"
     "  pulse-cli actions plan vm:105 restart --reason \"hung\" --request-id change-42\n"
     "  (then: pulse-cli actions approve ID; pulse-cli actions execute ID)"},
    {"actions show", "  pulse-cli actions show 9d04"},
    {"actions approve",
     "  pulse-cli actions approve 9d04\n"
     "  pulse-cli actions approve 9d04 --yes --reason \"change window\""},
    {"actions reject", "  pulse-cli actions reject 9d04 --reason \"not during business hours\""},
    {"actions execute", "  pulse-cli actions execute 9d04"},
    {"capabilities",
     "  pulse-cli capabilities\n"
     "  pulse-cli capabilities --json"},
    {"fleet",
     "  pulse-cli fleet\n"
     "  pulse-cli fleet --has-findings --severity critical"},
    {"fleet list", "  pulse-cli fleet list --type vm --json"},
    {"fleet show", "  pulse-cli fleet show vm:105"},
    {"agents",
     "  pulse-cli agents\n"
     "  pulse-cli agents --json"},
    {"patrol",
     "  pulse-cli patrol run\n"
     "  pulse-cli patrol status"},
    {"patrol run",
     "  pulse-cli patrol run\n"
     "  pulse-cli patrol run --resource vm:105 --type node"},
    {"patrol runs", "  pulse-cli patrol runs --json"},
    {"notify", "  pulse-cli notify test ops"},
    {"notify test",
     "  pulse-cli notify test ops\n"
     "  pulse-cli notify test slack --json"},
    {"patrol status", "  pulse-cli patrol status"},
    {"patrol autonomy",
     "  pulse-cli patrol autonomy\n"
     "  pulse-cli patrol autonomy set approval"},
    {"patrol autonomy get", "  pulse-cli patrol autonomy get --json"},
    {"patrol autonomy set",
     "  pulse-cli patrol autonomy set approval\n"
     "  pulse-cli patrol autonomy set assisted --budget 10 --timeout-sec 600"},
    {"patrol autonomy acknowledge", "  pulse-cli patrol autonomy acknowledge ops-2026-11-30"},
    {"patrol autonomy revoke",
     "  pulse-cli patrol autonomy revoke ops-2026-11-30 --reason \"end of the trial\""},
    {"sessions",
     "  pulse-cli sessions\n"
     "  pulse-cli sessions show 3f2a"},
    {"sessions list", "  pulse-cli sessions list --json"},
    {"sessions show", "  pulse-cli sessions show 3f2a"},
    {"sessions resume",
     "  pulse-cli sessions resume 3f2a\n"
     "  pulse-cli sessions resume 3f2a --control-level read_only"},
    {"answer", "  pulse-cli answer q-1 \"yes, the staging one\""},
    {"status",
     "  pulse-cli status\n"
     "  pulse-cli status --json"},
    {"context",
     "  pulse-cli context add prod --server https://pulse.example:7655 --token-file "
     "~/.pulse-prod-token\n"
     "  pulse-cli context use prod\n"
     "  pulse-cli --context lab findings"},
    {"context add",
     "  pulse-cli context add prod --server https://pulse.example:7655 --token-file "
     "~/.pulse-prod-token\n"
     "  pulse-cli context add lab --server http://127.0.0.1:7655 --token-env PULSE_LAB_TOKEN "
     "--use"},
    {"context use", "  pulse-cli context use prod"},
    {"context list", "  pulse-cli context list"},
    {"context show",
     "  pulse-cli context show\n"
     "  pulse-cli --context prod context show"},
    {"context remove", "  pulse-cli context remove lab"},
    {"completion",
     "  pulse-cli completion bash > /etc/bash_completion.d/pulse-cli\n"
     "  pulse-cli completion zsh > \"${fpath[1]}/_pulse-cli\"\n"
     "  pulse-cli completion fish > ~/.config/fish/completions/pulse-cli.fish"},
};

}  // namespace

std::string_view ExamplesFor(std::string_view path) {
  for (const auto& [command, lines] : kExamples) {
    if (command == path) {
      return lines;
    }
  }
  return {};
}

}  // namespace pulse::cli
