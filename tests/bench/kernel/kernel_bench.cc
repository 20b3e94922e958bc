// The safety kernel's per-call and per-request costs, each against a baseline measured in the
// same run:
//   BM_PreCheckTurn/<mix>   — what the agentic loop does before any tool of a provider turn of
//                             4 calls runs (LoopRun::PreCheck and AdmitBatch): parse each call's
//                             arguments JSON (with the loop's limits), fingerprint it
//                             (CanonicalJson), Decide() it against the registry and the
//                             policy (name checks, classification, scope/profile/control
//                             level), then admit the turn through the session FSM's BatchGate.
//                             mix 0: 4 reads; mix 1: 3 reads and one pulse_control write.
//   BM_Baseline_ParseArgs/<mix> — the same 4 ParseJson calls alone (the floor any pre-check
//                             pays to look at the arguments);
//   BM_Baseline_MapLookup   — 4 std::unordered_map<std::string, int> lookups by tool name (the
//                             floor of a bare allow-list);
//   BM_Classify, BM_Decide, BM_BatchGateAdmit — the parts of the pre-check, per call or turn.
//   BM_ProjectProviderTools — the tool offer for one provider request: ProjectTools over every
//                             registered tool (a Decide per tool and per discriminator value,
//                             the schema's enum rewritten) into LlmRequest::tools;
//   BM_ProjectMcpTools      — pulse-mcp's tools/list body, ProjectCapabilityToolsJson() over
//                             the manifest;
//   BM_Baseline_CopyProviderTools / BM_Baseline_CopyManifest — copying the finished result (a
//                             vector of ToolDefinition, the manifest's cached bytes): what a
//                             cache of the projection would still cost.
// Items are tool calls (pre-check) or tools offered (projection). The summary prints the ratios.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pulse/core/fsm/batch_gate.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/capability_projection.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/core/policy/decision.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/policy/projection.h"
#include "pulse/core/tools/classify.h"
#include "pulse/core/tools/tool_registry.h"
#include "pulse/testing/fake_clock.h"
#include "time_reporter.h"

namespace {

namespace core = pulse::core;

// The loop's argument limits (loop_tools.cc kArgumentLimits).
constexpr core::JsonLimits kArgumentLimits{256 * 1024, 64};

struct Call {
  std::string tool;
  std::string args;
};

// mix 0: four reads, as the load benchmark's turns; mix 1: three reads and a write.
std::vector<Call> TurnCalls(std::int64_t mix) {
  std::vector<Call> calls = {
      {"pulse_query", R"({"action":"get","resource_id":"vm:105"})"},
      {"pulse_read", R"({"action":"status","resource_id":"vm:105"})"},
      {"pulse_metrics", R"({"resource_id":"vm:105","metric":"memory","range":"1h"})"},
      {"pulse_read", R"({"action":"status","resource_id":"vm:101"})"},
  };
  if (mix == 1) {
    calls[3] = {"pulse_control",
                R"({"type":"resource","resource_id":"vm:105","capability":"restart",)"
                R"("params":{"mode":"reboot"},"reason":"db-01 is at 96% memory"})"};
  }
  return calls;
}

core::InvocationPolicy BenchPolicy() {
  core::PolicyInputs inputs;
  inputs.scopes = core::ScopeSet::All();
  inputs.configured_max = core::ControlLevel::kControlled;
  inputs.profile = core::ExecutionProfile::kInteractive;
  return core::InvocationPolicy::Create(inputs);
}

const core::ToolRegistry& Registry() {
  static const core::ToolRegistry registry = std::move(core::ToolRegistry::WithBuiltins()).value();
  return registry;
}

rapidjson::Document ParseOrDie(const std::string& text) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(text, kArgumentLimits);
  if (!doc.ok()) {
    std::fprintf(stderr, "kernel_bench: bad arguments %s\n", text.c_str());
    std::abort();
  }
  return std::move(doc).value();
}

void BM_PreCheckTurn(benchmark::State& state) {
  const std::vector<Call> calls = TurnCalls(state.range(0));
  const core::InvocationPolicy policy = BenchPolicy();
  const core::ToolRegistry& registry = Registry();
  pulse::testing::FakeClock clock;
  std::int64_t admitted = 0;
  for (auto _ : state) {
    core::SessionFsm fsm(clock);
    fsm.OnTargetEstablished();  // a resolved target, so a write can be admitted
    std::vector<core::BatchCall> batch;
    batch.reserve(calls.size());
    for (const Call& call : calls) {
      absl::StatusOr<rapidjson::Document> args = core::ParseJson(call.args, kArgumentLimits);
      if (!args.ok() || !args->IsObject()) {
        state.SkipWithError("arguments did not parse");
        return;
      }
      std::string fingerprint = call.tool + std::string(1, '\0') + core::CanonicalJson(*args);
      benchmark::DoNotOptimize(fingerprint.data());
      const core::Decision decision = core::Decide(policy, registry, call.tool, *args);
      if (!decision.allowed) {
        state.SkipWithError(("refused: " + decision.reason).c_str());
        return;
      }
      batch.push_back(core::BatchCall{call.tool, decision.invocation_class});
    }
    core::BatchGate gate = core::BatchGate::Admit(fsm, std::move(batch));
    for (std::size_t i = 0; i < calls.size(); ++i) {
      admitted += gate.Allowed(i) ? 1 : 0;
    }
  }
  if (admitted != state.iterations() * static_cast<std::int64_t>(calls.size())) {
    state.SkipWithError("a call was blocked by the FSM");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(calls.size()));
}
BENCHMARK(BM_PreCheckTurn)->ArgName("mix")->Arg(0)->Arg(1);

void BM_Baseline_ParseArgs(benchmark::State& state) {
  const std::vector<Call> calls = TurnCalls(state.range(0));
  for (auto _ : state) {
    for (const Call& call : calls) {
      absl::StatusOr<rapidjson::Document> args = core::ParseJson(call.args, kArgumentLimits);
      benchmark::DoNotOptimize(args.ok());
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(calls.size()));
}
BENCHMARK(BM_Baseline_ParseArgs)->ArgName("mix")->Arg(0)->Arg(1);

void BM_Baseline_MapLookup(benchmark::State& state) {
  const std::vector<Call> calls = TurnCalls(0);
  std::unordered_map<std::string, int> allowed;
  int n = 0;
  for (const std::string& name : Registry().Names()) {
    allowed.emplace(name, n++);
  }
  for (auto _ : state) {
    for (const Call& call : calls) {
      auto it = allowed.find(call.tool);
      benchmark::DoNotOptimize(it);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(calls.size()));
}
BENCHMARK(BM_Baseline_MapLookup);

void BM_Classify(benchmark::State& state) {
  const std::vector<Call> calls = TurnCalls(1);
  std::vector<rapidjson::Document> args;
  for (const Call& call : calls) {
    args.push_back(ParseOrDie(call.args));
  }
  const core::ToolRegistry& registry = Registry();
  for (auto _ : state) {
    for (std::size_t i = 0; i < calls.size(); ++i) {
      core::InvocationClass c = core::ClassifyRegistered(registry, calls[i].tool, args[i]);
      benchmark::DoNotOptimize(c);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(calls.size()));
}
BENCHMARK(BM_Classify);

void BM_Decide(benchmark::State& state) {
  const std::vector<Call> calls = TurnCalls(1);
  std::vector<rapidjson::Document> args;
  for (const Call& call : calls) {
    args.push_back(ParseOrDie(call.args));
  }
  const core::InvocationPolicy policy = BenchPolicy();
  const core::ToolRegistry& registry = Registry();
  for (auto _ : state) {
    for (std::size_t i = 0; i < calls.size(); ++i) {
      core::Decision d = core::Decide(policy, registry, calls[i].tool, args[i]);
      benchmark::DoNotOptimize(d.allowed);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(calls.size()));
}
BENCHMARK(BM_Decide);

void BM_BatchGateAdmit(benchmark::State& state) {
  const std::vector<Call> calls = TurnCalls(1);
  const core::InvocationPolicy policy = BenchPolicy();
  std::vector<core::BatchCall> batch;
  for (const Call& call : calls) {
    const rapidjson::Document args = ParseOrDie(call.args);
    batch.push_back(core::BatchCall{
        call.tool, core::Decide(policy, Registry(), call.tool, args).invocation_class});
  }
  pulse::testing::FakeClock clock;
  for (auto _ : state) {
    core::SessionFsm fsm(clock);
    fsm.OnTargetEstablished();
    core::BatchGate gate = core::BatchGate::Admit(fsm, batch);
    benchmark::DoNotOptimize(gate.AdmittedWrite());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(calls.size()));
}
BENCHMARK(BM_BatchGateAdmit);

// The provider offer as the loop builds it: ProjectTools, then one ToolDefinition per tool.
std::vector<core::ToolDefinition> ProviderTools(const core::InvocationPolicy& policy) {
  std::vector<core::ToolDefinition> out;
  for (core::ProjectedTool& tool : core::ProjectTools(policy, Registry())) {
    out.push_back(core::ToolDefinition{std::move(tool.name), std::move(tool.description),
                                       std::move(tool.input_schema_json)});
  }
  return out;
}

void BM_ProjectProviderTools(benchmark::State& state) {
  const core::InvocationPolicy policy = BenchPolicy();
  std::size_t tools = 0;
  for (auto _ : state) {
    std::vector<core::ToolDefinition> offered = ProviderTools(policy);
    tools = offered.size();
    benchmark::DoNotOptimize(offered.data());
  }
  state.counters["tools"] = static_cast<double>(tools);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tools));
}
BENCHMARK(BM_ProjectProviderTools)->Unit(benchmark::kMicrosecond);

void BM_Baseline_CopyProviderTools(benchmark::State& state) {
  const std::vector<core::ToolDefinition> cached = ProviderTools(BenchPolicy());
  for (auto _ : state) {
    std::vector<core::ToolDefinition> copy = cached;
    benchmark::DoNotOptimize(copy.data());
  }
  state.counters["tools"] = static_cast<double>(cached.size());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(cached.size()));
}
BENCHMARK(BM_Baseline_CopyProviderTools)->Unit(benchmark::kMicrosecond);

void BM_ProjectMcpTools(benchmark::State& state) {
  const std::size_t tools = core::ProjectCapabilityTools().size();
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string json = core::ProjectCapabilityToolsJson();
    bytes = json.size();
    benchmark::DoNotOptimize(json.data());
  }
  state.counters["tools"] = static_cast<double>(tools);
  state.counters["bytes"] = static_cast<double>(bytes);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tools));
}
BENCHMARK(BM_ProjectMcpTools)->Unit(benchmark::kMicrosecond);

void BM_Baseline_CopyManifest(benchmark::State& state) {
  const std::string& manifest = core::ManifestJson();
  for (auto _ : state) {
    std::string copy = manifest;
    benchmark::DoNotOptimize(copy.data());
  }
  state.counters["bytes"] = static_cast<double>(manifest.size());
}
BENCHMARK(BM_Baseline_CopyManifest)->Unit(benchmark::kMicrosecond);

using pulse::bench::TimeReporter;

void PrintSummary(const TimeReporter& r) {
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  std::printf("\nkernel summary (same run):\n");
  for (int mix = 0; mix < 2; ++mix) {
    const std::string arg = "/mix:" + std::to_string(mix);
    const double turn = r.Ns("BM_PreCheckTurn" + arg);
    const double parse = r.Ns("BM_Baseline_ParseArgs" + arg);
    std::printf(
        "  pre-check, %s: %.0f ns per call | x%.1f parsing the arguments alone | x%.0f a bare "
        "map lookup\n",
        mix == 0 ? "4 reads         " : "3 reads + 1 write", turn / 4, ratio(turn, parse),
        ratio(turn, r.Ns("BM_Baseline_MapLookup")));
  }
  const double provider = r.Ns("BM_ProjectProviderTools");
  const double mcp = r.Ns("BM_ProjectMcpTools");
  std::printf("  provider tool offer: %.1f us | x%.1f copying the finished offer\n", provider / 1e3,
              ratio(provider, r.Ns("BM_Baseline_CopyProviderTools")));
  std::printf("  MCP tools/list body: %.1f us | x%.1f copying the cached manifest bytes\n",
              mcp / 1e3, ratio(mcp, r.Ns("BM_Baseline_CopyManifest")));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  TimeReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(reporter);
  benchmark::Shutdown();
  return 0;
}
