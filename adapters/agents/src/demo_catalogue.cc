// The demo fleet's capability table: what each kind of resource offers in each state, with
// its parameter schema, approval floor, automatic-execution class and risk. Nothing here is
// destructive (no delete, destroy, rollback or prune): the worst a capability does is stop a
// workload, and that needs an admin approval.
#include <string>
#include <utility>

#include "demo_model.h"

namespace pulse::adapters::agents::internal {
namespace {

using core::ActionRisk;
using core::ApprovalLevel;
using core::AutoAuthorization;
using core::Capability;
using core::CapabilityParam;
using core::ParamType;

Capability Make(std::string name, std::string description, ApprovalLevel floor,
                AutoAuthorization auto_class, ActionRisk risk,
                std::vector<CapabilityParam> params = {}) {
  Capability c;
  c.name = std::move(name);
  c.description = std::move(description);
  c.minimum_approval = floor;
  c.auto_authorization = auto_class;
  c.risk = risk;
  c.supports_rollback = false;
  c.params = std::move(params);
  return c;
}

CapabilityParam EnumParam(std::string name, std::vector<std::string> values,
                          std::string description) {
  CapabilityParam p;
  p.name = std::move(name);
  p.type = ParamType::kString;
  p.required = false;
  p.enum_values = std::move(values);
  p.description = std::move(description);
  return p;
}

CapabilityParam TimeoutParam() {
  CapabilityParam p;
  p.name = "timeout_seconds";
  p.type = ParamType::kInteger;
  p.required = false;
  p.description = "Seconds to wait for a graceful stop before killing (0..600, default 10).";
  return p;
}

std::vector<Capability> VmCatalogue(const std::string& status) {
  if (status == "running") {
    return {
        Make("restart", "Reboot the VM (guest reboot, or a hard reset with mode=reset).",
             ApprovalLevel::kAdmin, AutoAuthorization::kElevated, ActionRisk::kMedium,
             {EnumParam("mode", {"reboot", "reset"}, "reboot (default) or reset")}),
        Make("stop", "Stop the VM (guest shutdown, or an immediate stop with mode=stop).",
             ApprovalLevel::kAdmin, AutoAuthorization::kElevated, ActionRisk::kHigh,
             {EnumParam("mode", {"shutdown", "stop"}, "shutdown (default) or stop")}),
    };
  }
  if (status == "stopped") {
    return {Make("start", "Start the VM.", ApprovalLevel::kAdmin, AutoAuthorization::kElevated,
                 ActionRisk::kMedium)};
  }
  return {};
}

std::vector<Capability> ContainerCatalogue(const std::string& status) {
  if (status == "running") {
    return {
        Make("restart", "Restart the container.", ApprovalLevel::kNone, AutoAuthorization::kLowRisk,
             ActionRisk::kLow, {TimeoutParam()}),
        Make("stop", "Stop the container.", ApprovalLevel::kAdmin, AutoAuthorization::kElevated,
             ActionRisk::kMedium, {TimeoutParam()}),
    };
  }
  if (status == "exited") {
    return {Make("start", "Start the container.", ApprovalLevel::kNone, AutoAuthorization::kLowRisk,
                 ActionRisk::kLow)};
  }
  return {};
}

std::vector<Capability> ServiceCatalogue(const std::string& status) {
  Capability restart = Make("restart", "Restart the systemd unit.", ApprovalLevel::kNone,
                            AutoAuthorization::kLowRisk, ActionRisk::kLow);
  Capability start = Make("start", "Start the systemd unit.", ApprovalLevel::kNone,
                          AutoAuthorization::kLowRisk, ActionRisk::kLow);
  if (status == "active") {
    return {
        Make("reload", "Reload the unit's configuration without a restart.", ApprovalLevel::kNone,
             AutoAuthorization::kLowRisk, ActionRisk::kLow),
        restart,
        Make("stop", "Stop the systemd unit.", ApprovalLevel::kAdmin, AutoAuthorization::kElevated,
             ActionRisk::kMedium),
    };
  }
  if (status == "failed") {
    return {restart, start};  // a crash-looping unit is failed: restart is the usual remedy
  }
  if (status == "inactive") {
    return {start};
  }
  return {};
}

std::vector<Capability> BackupCatalogue(const std::string& status) {
  if (status == "ok" || status == "failed") {
    return {Make("run-now", "Run the backup job now instead of waiting for its schedule.",
                 ApprovalLevel::kNone, AutoAuthorization::kLowRisk, ActionRisk::kLow,
                 {EnumParam("mode", {"snapshot", "suspend", "stop"},
                            "vzdump mode (default: the job's own)")})};
  }
  return {};
}

}  // namespace

std::vector<Capability> CatalogueFor(const DemoResource& r) {
  if (r.pending.has_value()) {
    return {};
  }
  const std::string status = EffectiveStatus(r);
  switch (r.kind) {
    case Kind::kVm:
      return VmCatalogue(status);
    case Kind::kContainer:
      return ContainerCatalogue(status);
    case Kind::kService:
      return ServiceCatalogue(status);
    case Kind::kBackupJob:
      return BackupCatalogue(status);
    case Kind::kNode:
    case Kind::kStorage:
      return {};
  }
  return {};
}

}  // namespace pulse::adapters::agents::internal
