// ForwardingFleet: a Fleet that passes every required call to another one, for tests that
// watch or change a few of them (override those, call ForwardingFleet's for the rest). The
// optional calls (ListsFromMemory, ListingGeneration, RunReadOnlyCommand, SourceStatuses,
// ChangesSince) keep the port's defaults unless a subclass forwards them too.
// Lifetime: borrows `inner`. Thread-safety: that of `inner`.
#pragma once

#include <string_view>
#include <vector>

#include "pulse/core/ports/fleet.h"

namespace pulse::testing {

class ForwardingFleet : public core::Fleet {
 public:
  explicit ForwardingFleet(core::Fleet& inner) : inner_(inner) {}

  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& q) override {
    return inner_.ListResources(q);
  }
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override {
    return inner_.GetResource(id);
  }
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& q) override {
    return inner_.GetTopology(q);
  }
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override {
    return inner_.GetStatus(id);
  }
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& q) override {
    return inner_.ReadLogs(id, q);
  }
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override {
    return inner_.ReadConfig(id);
  }
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& q) override {
    return inner_.ReadMetricHistory(id, q);
  }
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override {
    return inner_.ListCapabilities(id);
  }
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override {
    return inner_.Dispatch(request);
  }
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& q) override {
    return inner_.ObservePostcondition(q);
  }

 private:
  core::Fleet& inner_;
};

}  // namespace pulse::testing
