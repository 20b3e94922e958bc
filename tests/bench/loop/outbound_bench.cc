// The cost of keeping local-only data and secrets out of what the model reads
// (docs/security.md "Local-only resources"), per tool result, against baselines measured in the
// same run:
//   BM_ParseAndWrite/N     — parse the N-byte tool result and write it back (the floor: any
//                            structural pass over the JSON costs at least this);
//   BM_SanitizeToolResult/N — OutboundContextPolicy::SanitizeToolResult on the same bytes, with
//                            200 local-only resources and a redactable secret in every element;
//   BM_SanitizeText/N      — SanitizeText on N bytes of prose full of near misses.
// bytes_per_second shows whether the cost stays linear as N grows (64 KiB .. 1 MiB): the
// regression this guards against is a pass that goes quadratic in the result size.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "pulse/core/json/json.h"
#include "pulse/core/loop/outbound_context.h"

namespace {

using pulse::core::InferenceRoute;
using pulse::core::LocalOnlyResource;
using pulse::core::OutboundContextPolicy;

OutboundContextPolicy Policy() {
  std::vector<LocalOnlyResource> local;
  for (int i = 0; i < 200; ++i) {
    local.push_back(
        LocalOnlyResource{"vm:" + std::to_string(1000 + i), {"secret-host-" + std::to_string(i)}});
  }
  return OutboundContextPolicy(InferenceRoute::kMeteredApi, local);
}

// A fleet listing of about `bytes` bytes: one element in ten names a local-only VM.
std::string ToolResult(std::size_t bytes) {
  std::string json = R"({"resources":[)";
  for (int i = 0; json.size() < bytes; ++i) {
    const bool hidden = i % 10 == 0;
    const int id = hidden ? 1000 + (i / 10) % 200 : 5000 + i;
    json += (i ? "," : "") + std::string(R"({"id":"vm:)") + std::to_string(id) +
            R"(","log":"password=hunter2 ok sk-proj-abcdefghijklmnopqrst"})";
  }
  return json + "]}";
}

std::string Prose(std::size_t bytes) {
  std::string prose;
  while (prose.size() < bytes) {
    prose += "vm:10001 secret-host-1x vm:1000 secret-host-7 ";
  }
  return prose;
}

void BM_ParseAndWrite(benchmark::State& state) {
  const std::string json = ToolResult(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    auto doc = pulse::core::ParseJson(json, pulse::core::JsonLimits{4 << 20, 64});
    std::string out = pulse::core::ToJsonString(*doc);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(json.size()));
}
BENCHMARK(BM_ParseAndWrite)->RangeMultiplier(4)->Range(64 << 10, 1 << 20);

void BM_SanitizeToolResult(benchmark::State& state) {
  const OutboundContextPolicy policy = Policy();
  const std::string json = ToolResult(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    std::string out = policy.SanitizeToolResult(json);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(json.size()));
}
BENCHMARK(BM_SanitizeToolResult)->RangeMultiplier(4)->Range(64 << 10, 1 << 20);

void BM_SanitizeText(benchmark::State& state) {
  const OutboundContextPolicy policy = Policy();
  const std::string prose = Prose(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    std::string out = policy.SanitizeText(prose);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(prose.size()));
}
BENCHMARK(BM_SanitizeText)->RangeMultiplier(4)->Range(64 << 10, 1 << 20);

}  // namespace

BENCHMARK_MAIN();
