#include "pulse/adapters/http/metrics_registry.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "http_test_support.h"
#include "pulse/adapters/http/standard_handlers.h"

namespace pulse::adapters::http {
namespace {

TEST_CASE("counters and gauges render in the Prometheus text format", "[adapters][http][metrics]") {
  MetricsRegistry registry;
  CounterFamily* calls = registry
                             .AddCounter("pulse_tool_calls_total",
                                         "Tool calls by kind and outcome.", {"kind", "outcome"})
                             .value();
  GaugeFamily* actions =
      registry.AddGauge("pulse_actions", "Governed actions by state.", {"state"}).value();
  CounterFamily* plain = registry.AddCounter("pulse_fsm_blocks_total", "FSM blocks.", {}).value();
  calls->Increment({"read", "ok"});
  calls->Increment({"read", "ok"}, 2);
  calls->Increment({"write", "denied"});
  calls->Increment({"read", "ok"}, -5);  // ignored: counters only go up
  calls->Increment({"only-one-label"});  // ignored: wrong label count
  actions->Set({"pending_approval"}, 3);
  actions->Add({"pending_approval"}, -1);
  plain->Increment({});
  CHECK(calls->Value({"read", "ok"}) == 3);
  CHECK(registry.Render() ==
        "# HELP pulse_tool_calls_total Tool calls by kind and outcome.\n"
        "# TYPE pulse_tool_calls_total counter\n"
        "pulse_tool_calls_total{kind=\"read\",outcome=\"ok\"} 3\n"
        "pulse_tool_calls_total{kind=\"write\",outcome=\"denied\"} 1\n"
        "# HELP pulse_actions Governed actions by state.\n"
        "# TYPE pulse_actions gauge\n"
        "pulse_actions{state=\"pending_approval\"} 2\n"
        "# HELP pulse_fsm_blocks_total FSM blocks.\n"
        "# TYPE pulse_fsm_blocks_total counter\n"
        "pulse_fsm_blocks_total 1\n");
}

TEST_CASE("histograms render cumulative fixed buckets, sum and count",
          "[adapters][http][metrics]") {
  MetricsRegistry registry;
  HistogramFamily* latency =
      registry.AddHistogram("pulse_latency_seconds", "Latency.", {"route"}, {0.125, 1}).value();
  latency->Observe({"a"}, 0.0625);
  latency->Observe({"a"}, 0.125);  // a bound is inclusive
  latency->Observe({"a"}, 0.5);
  latency->Observe({"a"}, 7);
  latency->Observe({"a"}, std::numeric_limits<double>::quiet_NaN());
  CHECK(latency->Count({"a"}) == 4);
  CHECK(registry.Render() ==
        "# HELP pulse_latency_seconds Latency.\n"
        "# TYPE pulse_latency_seconds histogram\n"
        "pulse_latency_seconds_bucket{route=\"a\",le=\"0.125\"} 2\n"
        "pulse_latency_seconds_bucket{route=\"a\",le=\"1\"} 3\n"
        "pulse_latency_seconds_bucket{route=\"a\",le=\"+Inf\"} 4\n"
        "pulse_latency_seconds_sum{route=\"a\"} 7.6875\n"
        "pulse_latency_seconds_count{route=\"a\"} 4\n");
}

TEST_CASE("label values and help text are escaped", "[adapters][http][metrics]") {
  MetricsRegistry registry;
  CounterFamily* c =
      registry.AddCounter("pulse_escape_total", "Back\\slash\nnewline.", {"v"}).value();
  c->Increment({"a\"b\\c\nd"});
  c->Increment({std::string("\xff\x01z")});
  const std::string text = registry.Render();
  CHECK(text.find("# HELP pulse_escape_total Back\\\\slash\\nnewline.\n") != std::string::npos);
  CHECK(text.find("pulse_escape_total{v=\"a\\\"b\\\\c\\nd\"} 1\n") != std::string::npos);
  // Ill-formed UTF-8 and control bytes never reach the output.
  CHECK(text.find('\x01') == std::string::npos);
  CHECK(text.find('\xff') == std::string::npos);
}

TEST_CASE("bad names, labels and buckets are refused", "[adapters][http][metrics]") {
  MetricsRegistry registry;
  CHECK(registry.AddCounter("9bad", "", {}).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(registry.AddCounter("bad-name", "", {}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK_FALSE(registry.AddCounter("ok_total", "", {"__reserved"}).ok());
  CHECK_FALSE(registry.AddCounter("ok_total", "", {"a", "a"}).ok());
  CHECK_FALSE(registry.AddHistogram("h", "", {"le"}, {1}).ok());
  CHECK_FALSE(registry.AddHistogram("h", "", {}, {}).ok());
  CHECK_FALSE(registry.AddHistogram("h", "", {}, {2, 1}).ok());
  CHECK_FALSE(registry.AddHistogram("h", "", {}, {1, std::nan("")}).ok());
  REQUIRE(registry.AddCounter("ns:ok_total", "", {}).ok());
  CHECK(registry.AddGauge("ns:ok_total", "", {}).status().code() ==
        absl::StatusCode::kAlreadyExists);
}

TEST_CASE("a family keeps a bounded number of series", "[adapters][http][metrics]") {
  MetricsRegistry registry;
  CounterFamily* c = registry.AddCounter("pulse_many_total", "", {"id"}).value();
  for (std::size_t i = 0; i < kMaxSeriesPerFamily + 50; ++i) {
    c->Increment({std::to_string(i)});
  }
  const std::string text = registry.Render();
  std::size_t lines = 0;
  for (char ch : text) {
    lines += ch == '\n' ? 1 : 0;
  }
  CHECK(lines == kMaxSeriesPerFamily + 2);
  c->Increment({"0"});
  CHECK(c->Value({"0"}) == 2);
}

TEST_CASE("concurrent updates are all counted", "[adapters][http][metrics]") {
  MetricsRegistry registry;
  CounterFamily* c = registry.AddCounter("pulse_concurrent_total", "", {"t"}).value();
  HistogramFamily* h = registry.AddHistogram("pulse_concurrent_seconds", "", {}, {1}).value();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        c->Increment({"x"});
        h->Observe({}, 0.5);
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  CHECK(c->Value({"x"}) == 8000);
  CHECK(h->Count({}) == 8000);
}

TEST_CASE("the server records requests by route, never by raw path", "[adapters][http][metrics]") {
  MetricsRegistry registry;
  std::vector<RequestRecord> records;
  absl::Mutex mu;
  HttpServerOptions options = testing::TestOptions();
  options.on_request = [&](const RequestRecord& r) {
    absl::MutexLock lock(&mu);
    records.push_back(r);
  };
  testing::TestServer server(options, testing::FullRouter({{"metrics", MetricsHandler(registry)}}),
                             &registry);
  const std::string token = server.Token({"*"});
  CHECK(testing::Send(server, "GET", "/api/agent/resource-context/vm%3A101", "",
                      testing::TokenHeader(token))
            .status == 200);
  CHECK(testing::Send(server, "GET", "/api/agent/resource-context/secret-id").status == 401);
  CHECK(testing::Send(server, "GET", "/no/such/path").status == 404);
  const testing::Reply metrics =
      testing::Send(server, "GET", "/metrics", "", testing::TokenHeader(token));
  REQUIRE(metrics.status == 200);
  CHECK(metrics.headers.find("Content-Type")->second == kPrometheusContentType);
  CHECK(metrics.body.find("pulse_http_requests_total{method=\"GET\",route=\"get_resource_"
                          "context\",status=\"200\"} 1\n") != std::string::npos);
  CHECK(metrics.body.find("route=\"get_resource_context\",status=\"401\"} 1\n") !=
        std::string::npos);
  CHECK(metrics.body.find("route=\"unmatched\",status=\"404\"} 1\n") != std::string::npos);
  CHECK(metrics.body.find("pulse_http_request_duration_seconds_count{method=\"GET\",route=\"get_"
                          "resource_context\"} 2\n") != std::string::npos);
  CHECK(metrics.body.find("vm:101") == std::string::npos);
  CHECK(metrics.body.find("secret-id") == std::string::npos);
  CHECK(metrics.body.find(token) == std::string::npos);
  absl::MutexLock lock(&mu);
  REQUIRE(records.size() >= 3);
  CHECK(records[0].route == "get_resource_context");
  CHECK(records[0].status == 200);
  CHECK(records[2].route == "unmatched");
}

}  // namespace
}  // namespace pulse::adapters::http
