// Shared fixture of the findings service tests: a service over the in-memory fakes, plus
// report builders and small readers of the stored state.
#pragma once

#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/findings/finding_errors.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/in_memory_finding_store.h"
#include "pulse/testing/in_memory_metrics_history.h"

namespace pulse::core::findings_test {

struct Fixture {
  testing::FakeClock clock;
  testing::InMemoryFindingStore store;
  testing::FakeFindingVerifier verifier;
  testing::InMemoryMetricsHistory metrics;
  FindingsService service{store, clock, verifier, metrics};

  // A complete, valid report.
  static FindingReport MakeReport(std::string resource_id = "vm:100",
                                  Category category = Category::kPerformance,
                                  std::string key = "cpu-high",
                                  std::string title = "High CPU usage on web-1") {
    FindingReport r;
    r.resource_id = std::move(resource_id);
    r.resource_name = r.resource_id;  // distinct resources never share a name by accident
    r.resource_type = "vm";
    r.category = category;
    r.severity = Severity::kWarning;
    r.key = std::move(key);
    r.title = std::move(title);
    r.description = "CPU has been above 95% for 40 minutes.";
    r.recommendation = "Check the top processes and scale the VM if the load is legitimate.";
    r.evidence = "pulse_metrics: cpu 97% avg over 40m";
    return r;
  }

  // Reports and requires success; returns the finding id.
  std::string ReportOk(const FindingReport& r) {
    auto outcome = service.Report(r);
    REQUIRE(outcome.ok());
    return outcome->finding_id;
  }

  Finding Stored(const std::string& id) {
    auto got = store.Get(id);
    REQUIRE(got.ok());
    return got->finding;
  }
};

inline std::vector<LifecycleEventType> EventTypes(const Finding& f) {
  std::vector<LifecycleEventType> out;
  for (const LifecycleEvent& e : f.lifecycle) {
    out.push_back(e.type);
  }
  return out;
}

// The surface code a failed status maps to.
inline AgentErrorCode CodeOf(const absl::Status& status) {
  auto error = ToFindingAgentError(status);
  REQUIRE(error.has_value());
  return error->code;
}

}  // namespace pulse::core::findings_test
