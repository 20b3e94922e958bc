// tools/call round trip through pulse-mcp against the same HTTP call made directly, in one run.
// Starts the real pulse-server (fresh data dir under $PULSE_BENCH_DIR, default /tmp, loopback,
// the built-in demo fleet) and the real pulse-mcp with pipes on its stdin and stdout. Then
// BM_ToolsCallRoundTrip/<tool>, for each read tool, makes three calls per iteration, in rotating
// order so that a shared machine's load falls on all of them alike:
//   direct HTTP (the baseline) — the request pulse-mcp makes for the call: same route, same
//       headers, cpp-httplib, a new connection per request (pulse-mcp reuses one for reads
//       since issue 21; docs/performance.md); timed from sending it to having the whole body;
//   through pulse-mcp — one tools/call line written to pulse-mcp's stdin, timed until its reply
//       line is read from stdout (JSON-RPC decode, projection, the same HTTP request, the
//       CallToolResult encode, two pipe hops);
//   direct HTTP, keep-alive — for reference: what reusing the connection saves.
// The benchmark's time is the mean pulse-mcp round trip; its counters and the summary give the
// p50/p99 of each series and the pulse-mcp / baseline ratios. Every reply is checked (a result,
// not isError); the figures never fail the run.
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pipe_process.h"
#include "pulse/core/json/json.h"

namespace {

using Clock = std::chrono::steady_clock;
using pulse::bench::PipeProcess;
using pulse::bench::ReadFile;

constexpr int kWarmupCalls = 200;
constexpr int kMeasuredCalls = 3000;

// The read tools measured, with the route pulse-mcp projects each onto (no arguments).
struct ReadTool {
  std::string name;
  std::string target;
};
const std::vector<ReadTool>& ReadTools() {
  static const std::vector<ReadTool> tools = {
      {"get_patrol_control_status", "/api/agent/patrol-control/status"},
      {"get_fleet_context", "/api/agent/fleet-context"},
  };
  return tools;
}

// Called by Die, which exits without unwinding: stops the processes the rig started (set while
// a rig is up), so a failed run leaves no pulse-server behind.
void (*stop_rig)() = nullptr;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "bench_mcp: %s\n", why.c_str());
  if (stop_rig != nullptr) {
    stop_rig();
  }
  std::exit(1);
}

struct Percentiles {
  double p50_us = 0;
  double p99_us = 0;
  double mean_us = 0;
  std::size_t calls = 0;
};

Percentiles Summarize(std::vector<double> samples_us) {
  Percentiles p;
  if (samples_us.empty()) {
    return p;
  }
  std::sort(samples_us.begin(), samples_us.end());
  const auto at = [&samples_us](double q) {
    const auto rank =
        static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples_us.size())));
    return samples_us[std::min(samples_us.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  p.p50_us = at(0.50);
  p.p99_us = at(0.99);
  double sum = 0;
  for (double s : samples_us) {
    sum += s;
  }
  p.mean_us = sum / static_cast<double>(samples_us.size());
  p.calls = samples_us.size();
  return p;
}

// pulse-server and pulse-mcp, up for the whole run.
class Rig {
 public:
  Rig() {
    const char* base = std::getenv("PULSE_BENCH_DIR");
    std::string templ = std::string(base != nullptr ? base : "/tmp") + "/pulse-bench-mcp-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      Die("mkdtemp failed");
    }
    dir_ = templ;
    live_ = this;
    stop_rig = [] { live_->Stop(); };
    token_ = MintToken();
    StartServer();
    StartMcp();
  }
  ~Rig() { Stop(); }

  // Stops pulse-mcp and pulse-server and removes the data dir.
  void Stop() {
    stop_rig = nullptr;
    mcp_.reset();
    server_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  int port() const { return port_; }
  const std::string& token() const { return token_; }
  PipeProcess& mcp() { return *mcp_; }

 private:
  std::string MintToken() {
    std::string error;
    std::optional<std::string> token = pulse::bench::MintServerToken(
        PULSE_SERVER_BINARY, dir_, "monitoring:read", &error, "agent");
    if (!token.has_value()) {
      Die(error);
    }
    return *token;
  }

  void StartServer() {
    const std::string log = dir_ + "/server.log";
    server_ =
        PipeProcess::Start({PULSE_SERVER_BINARY, "--data-dir", dir_, "--listen", "127.0.0.1:0"}, {},
                           log, /*stdout_to_log=*/true);
    if (server_ == nullptr) {
      Die("cannot start pulse-server");
    }
    port_ = pulse::bench::WaitForListeningPort(log, std::chrono::seconds(20));
    if (port_ == 0) {
      Die("pulse-server did not report its port: " + ReadFile(log));
    }
  }

  void StartMcp() {
    mcp_ = PipeProcess::Start(
        {PULSE_MCP_BINARY, "--server", "http://127.0.0.1:" + std::to_string(port_)},
        {"PULSE_API_TOKEN=" + token_}, dir_ + "/mcp.log");
    if (mcp_ == nullptr || !mcp_->Write(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":)"
                                        R"({"protocolVersion":"2025-11-25","capabilities":{},)"
                                        R"("clientInfo":{"name":"bench_mcp","version":"1"}}})"
                                        "\n"
                                        R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                                        "\n")) {
      Die("cannot start pulse-mcp");
    }
    std::optional<std::string> reply = mcp_->ReadLine(std::chrono::seconds(20));
    if (!reply.has_value() ||
        reply->find("\"protocolVersion\":\"2025-11-25\"") == std::string::npos) {
      Die("pulse-mcp did not initialize: " + reply.value_or("<no reply>") + "\n" +
          ReadFile(dir_ + "/mcp.log"));
    }
  }

  static inline Rig* live_ = nullptr;  // the rig stop_rig stops
  std::string dir_;
  std::string token_;
  std::unique_ptr<PipeProcess> server_;
  std::unique_ptr<PipeProcess> mcp_;
  int port_ = 0;
};

// One direct call; false (with the reason in `why`) unless it is a 200 with a JSON body.
bool DirectCall(httplib::Client& client, const httplib::Headers& headers, const std::string& target,
                std::string& why) {
  httplib::Result result = client.Get(target, headers);
  if (!result) {
    why = "no reply: " + httplib::to_string(result.error());
    return false;
  }
  if (result->status != 200 || result->body.empty() || result->body.front() != '{') {
    why = "HTTP " + std::to_string(result->status) + ": " + result->body.substr(0, 200);
    return false;
  }
  return true;
}

// One tools/call through pulse-mcp; false unless the reply line is the result for `id` and not
// an isError result.
bool McpCall(PipeProcess& mcp, const std::string& tool, std::int64_t id, std::string& why) {
  const std::string id_text = std::to_string(id);
  if (!mcp.Write(R"({"jsonrpc":"2.0","id":)" + id_text +
                 R"(,"method":"tools/call","params":{"name":")" + tool +
                 R"(","arguments":{}}})"
                 "\n")) {
    why = "pulse-mcp's stdin is closed";
    return false;
  }
  std::optional<std::string> line = mcp.ReadLine(std::chrono::seconds(30));
  if (!line.has_value()) {
    why = "no reply line";
    return false;
  }
  // A cheap check on the hot path; the whole reply is parsed once per run below. memmem, not
  // std::string::find: libstdc++'s find stops at every '"' of the 33 KB fleet-context line
  // (4,156 of them) to compare the rest, 22 us per call against glibc memmem's 2.5 us, charged to
  // pulse-mcp alone (the direct call's check reads one byte).
  const std::string prefix = R"({"jsonrpc":"2.0","id":)" + id_text + ",";
  const auto contains = [&line](std::string_view needle) {
    return ::memmem(line->data(), line->size(), needle.data(), needle.size()) != nullptr;
  };
  if (line->compare(0, prefix.size(), prefix) != 0 || contains(R"("isError":true)") ||
      !contains(R"(,"result":{)")) {
    why = "unexpected reply: " + line->substr(0, 300);
    return false;
  }
  return true;
}

// Parses one full reply of `tool` and checks that it is a CallToolResult with structuredContent.
bool CheckFullReply(PipeProcess& mcp, const std::string& tool, std::string& why) {
  if (!mcp.Write(R"({"jsonrpc":"2.0","id":"check","method":"tools/call","params":{"name":")" +
                 tool +
                 R"("}})"
                 "\n")) {
    why = "pulse-mcp's stdin is closed";
    return false;
  }
  std::optional<std::string> line = mcp.ReadLine(std::chrono::seconds(30));
  auto doc =
      pulse::core::ParseJson(line.value_or(""), pulse::core::JsonLimits{.max_bytes = 64 << 20});
  if (!doc.ok() || !doc->IsObject() || !doc->HasMember("result") || !(*doc)["result"].IsObject() ||
      !(*doc)["result"].HasMember("structuredContent") || (*doc)["result"].HasMember("isError")) {
    why = "not a structured result: " + line.value_or("<none>").substr(0, 300);
    return false;
  }
  return true;
}

// The round trips of one read tool, interleaved call by call so that the load of a shared
// machine falls on every series alike.
struct Series {
  std::vector<double> direct_us;      // the baseline: a new connection per call
  std::vector<double> mcp_us;         // tools/call through pulse-mcp
  std::vector<double> keep_alive_us;  // for reference: the direct call on a reused connection
};

struct Figures {
  Percentiles direct;
  Percentiles mcp;
  Percentiles keep_alive;
};

double Ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

// Sets the benchmark's counters and keeps the figures under `name` for the summary (the last
// run of a benchmark is the one reported).
void Report(benchmark::State& state, const std::string& name, const Series& series,
            std::map<std::string, Figures>& results) {
  Figures f{Summarize(series.direct_us), Summarize(series.mcp_us), Summarize(series.keep_alive_us)};
  state.counters["direct_p50_us"] = f.direct.p50_us;
  state.counters["direct_p99_us"] = f.direct.p99_us;
  state.counters["mcp_p50_us"] = f.mcp.p50_us;
  state.counters["mcp_p99_us"] = f.mcp.p99_us;
  state.counters["p50_ratio"] = Ratio(f.mcp.p50_us, f.direct.p50_us);
  state.counters["p99_ratio"] = Ratio(f.mcp.p99_us, f.direct.p99_us);
  results[name] = f;
}

void PrintSummary(const std::map<std::string, Figures>& results) {
  std::printf(
      "\ntools/call round trip of a read tool, %d calls of each kind, interleaved, after "
      "%d warm-up rounds (microseconds):\n",
      kMeasuredCalls, kWarmupCalls);
  std::printf("  %-27s %-30s %10s %10s %10s\n", "read tool", "path", "p50", "p99", "mean");
  for (const ReadTool& tool : ReadTools()) {
    const auto it = results.find(tool.name);
    if (it == results.end()) {
      continue;  // filtered out
    }
    const Figures& f = it->second;
    const auto row = [&tool](const char* path, const Percentiles& p) {
      std::printf("  %-27s %-30s %10.1f %10.1f %10.1f\n", tool.name.c_str(), path, p.p50_us,
                  p.p99_us, p.mean_us);
    };
    row("direct HTTP (baseline)", f.direct);
    row("through pulse-mcp", f.mcp);
    row("direct HTTP, keep-alive", f.keep_alive);
    std::printf("  %-27s %-30s %10.2f %10.2f %10.2f\n", tool.name.c_str(),
                "ratio pulse-mcp / baseline", Ratio(f.mcp.p50_us, f.direct.p50_us),
                Ratio(f.mcp.p99_us, f.direct.p99_us), Ratio(f.mcp.mean_us, f.direct.mean_us));
  }
}

// Times one call in microseconds; nullopt (with the reason in `why`) when it failed.
template <typename Call>
std::optional<double> Timed(Call&& call, std::string& why) {
  const Clock::time_point start = Clock::now();
  const bool ok = call(why);
  const std::chrono::duration<double, std::micro> took = Clock::now() - start;
  if (!ok) {
    return std::nullopt;
  }
  return took.count();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  Rig rig;
  std::map<std::string, Figures> results;
  std::int64_t next_id = 1;
  for (const ReadTool& tool : ReadTools()) {
    std::string problem;
    if (!CheckFullReply(rig.mcp(), tool.name, problem)) {
      Die(tool.name + ": " + problem);
    }
    benchmark::RegisterBenchmark(
        ("BM_ToolsCallRoundTrip/" + tool.name).c_str(),
        [&rig, &results, &next_id, tool](benchmark::State& state) {
          const httplib::Headers headers = {{"X-API-Token", rig.token()},
                                            {"X-Pulse-Agent-Surface", "pulse_mcp"}};
          httplib::Client direct("127.0.0.1", rig.port());  // keep-alive off: the baseline
          httplib::Client reused("127.0.0.1", rig.port());
          reused.set_keep_alive(true);
          const auto call_direct = [&](std::string& why) {
            return DirectCall(direct, headers, tool.target, why);
          };
          const auto call_reused = [&](std::string& why) {
            return DirectCall(reused, headers, tool.target, why);
          };
          const auto call_mcp = [&](std::string& why) {
            return McpCall(rig.mcp(), tool.name, next_id++, why);
          };
          Series series;
          std::string why;
          for (int i = 0; i < kWarmupCalls; ++i) {
            if (!call_direct(why) || !call_mcp(why) || !call_reused(why)) {
              state.SkipWithError(why.c_str());
              return;
            }
          }
          int round = 0;
          for (auto _ : state) {
            // The order rotates, so no series always runs right after another.
            std::optional<double> direct_us;
            std::optional<double> mcp_us;
            std::optional<double> reused_us;
            for (int k = 0; k < 3; ++k) {
              switch ((round + k) % 3) {
                case 0:
                  direct_us = Timed(call_direct, why);
                  break;
                case 1:
                  mcp_us = Timed(call_mcp, why);
                  break;
                default:
                  reused_us = Timed(call_reused, why);
                  break;
              }
            }
            ++round;
            if (!direct_us || !mcp_us || !reused_us) {
              state.SkipWithError(why.c_str());
              break;
            }
            state.SetIterationTime(*mcp_us / 1e6);
            series.direct_us.push_back(*direct_us);
            series.mcp_us.push_back(*mcp_us);
            series.keep_alive_us.push_back(*reused_us);
          }
          Report(state, tool.name, series, results);
        })
        ->Iterations(kMeasuredCalls)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  PrintSummary(results);
  benchmark::Shutdown();
  return 0;
}
