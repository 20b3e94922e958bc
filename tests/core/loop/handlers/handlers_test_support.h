// Shared fixture of the built-in tool handler tests: a demo-like FakeFleet (a node with two VMs,
// a service and a storage pool, with logs, a config, metric series and scripted command
// outputs, some of them holding secrets), the findings and action services over the in-memory
// fakes, and a registry of the built-ins whose executor is wired by BindBuiltinToolHandlers.
// Calls go through ToolExecutor::Execute, so every argument a handler sees passed the schema.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../actions/action_test_support.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/builtins/builtin_catalog.h"
#include "pulse/core/builtins/finding_handlers.h"
#include "pulse/core/builtins/metrics_handler.h"
#include "pulse/core/builtins/tool_output.h"
#include "pulse/core/errors/tool_error.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/json/json.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/tools/classify.h"
#include "pulse/core/tools/tool_names.h"
#include "pulse/core/tools/tool_registry.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_finding_store.h"
#include "pulse/testing/in_memory_metrics_history.h"
#include "pulse/testing/in_memory_operator_state_store.h"
#include "pulse/testing/sequential_id_source.h"

namespace pulse::testing::handlers {

// A secret planted in logs, configs and command output; it must never reach a result.
inline constexpr std::string_view kSecret = "hunter2-s3cr3t";

inline core::FleetResource Resource(std::string id, std::string type, std::string name,
                                    std::string status, std::string parent = "") {
  core::FleetResource r;
  r.id = std::move(id);
  r.type = std::move(type);
  r.name = std::move(name);
  r.status = std::move(status);
  r.technology = "proxmox";
  r.parent_id = std::move(parent);
  return r;
}

inline core::ExecOutput Output(std::string text, int exit_code = 0) {
  core::ExecOutput out;
  out.output = std::move(text);
  out.exit_code = exit_code;
  return out;
}

// The fleet the handler tests read: node:pve1 hosting vm:101 (web-01, the action tests'
// catalogue), vm:102 (db-01), service:pve1/nginx and storage:pve1/local-zfs.
inline void SeedDemoLikeFleet(FakeFleet& fleet, absl::Time now) {
  core::FleetResource node = actions::Node();
  node.attributes = {{"os", "Proxmox VE 8.3"}, {"ip", "10.0.0.11"}, {"api_token", "tok-123"}};
  fleet.PutResource(node, {});
  fleet.PutResource(actions::Vm101(), actions::VmCatalogue());
  fleet.PutResource(Resource("vm:102", "vm", "db-01", "running", "node:pve1"), {});
  fleet.PutResource(actions::Nginx(), actions::NginxCatalogue());
  fleet.PutResource(
      Resource("storage:pve1/local-zfs", "storage", "local-zfs", "available", "node:pve1"), {});
  fleet.AddRelationship({"vm:101", "node:pve1", "runs_on"});
  fleet.AddRelationship({"vm:102", "node:pve1", "runs_on"});
  fleet.AddRelationship({"service:pve1/nginx", "node:pve1", "runs_on"});
  fleet.AddRelationship({"storage:pve1/local-zfs", "node:pve1", "member_of"});
  fleet.SetLogs("vm:101", {
                              "app[311]: started",
                              "app[311]: connecting with password=" + std::string(kSecret),
                              "kernel: EXT4-fs warning: /dev/sda1 is 96% full",
                              "app[311]: ERROR write failed: No space left on device",
                          });
  core::FleetConfig config;
  config.format = "ini";
  config.content = "[server]\nlisten = 443\ndb_password=" + std::string(kSecret) +
                   "\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAK\n"
                   "-----END RSA PRIVATE KEY-----\nworkers = 4\n";
  fleet.SetConfig("service:pve1/nginx", config);
  core::FleetStatus status;
  status.resource_id = "vm:101";
  status.status = "running";
  status.summary = "web-01 is running; / is 96% full";
  status.observed_at = now;
  status.facts = {{"disk_root_pct", "96"}, {"uptime", "3 days"}, {"db_password", "x"}};
  fleet.SetStatus(status);
  core::FleetMetricSeries cpu;
  cpu.resource_id = "vm:101";
  cpu.metric = "cpu";
  cpu.unit = "percent";
  for (int i = 0; i < 24; ++i) {  // hourly, 10 .. 33, the newest an hour ago
    cpu.points.push_back({now - absl::Hours(24 - i), 10.0 + i});
  }
  fleet.SetMetricSeries(cpu);
  core::FleetMetricSeries disk = cpu;
  disk.metric = "disk";
  disk.points = {
      {now - absl::Hours(3), 94.0}, {now - absl::Hours(2), 95.5}, {now - absl::Hours(1), 96.0}};
  fleet.SetMetricSeries(disk);
  fleet.SetExecOutput("vm:101", "df -h",
                      Output("Filesystem Size Used Avail Use% Mounted on\n"
                             "/dev/sda1 64G 61G 3G 96% /\n"));
  fleet.SetExecOutput("vm:101", "cat /etc/app/app.conf",
                      Output("port=8080\nDB_PASSWORD=" + std::string(kSecret) + "\n"));
  fleet.SetExecOutput("vm:101", "systemctl status app",
                      Output("app.service - App\n   Active: failed\n", 3));
}

inline core::InvocationPolicy PolicyFor(std::string_view tool) {
  core::PolicyInputs inputs;
  inputs.scopes = core::ScopeSet::All();
  inputs.configured_max = core::ControlLevel::kControlled;
  inputs.profile = core::ExecutionProfile::kInteractive;
  if (tool == core::kToolPatrolReportFinding || tool == core::kToolPatrolAssessFinding) {
    inputs.profile = core::ExecutionProfile::kPatrolDetection;
  } else if (tool == core::kToolPatrolActionCapabilities ||
             tool == core::kToolPatrolProposeAction) {
    inputs.profile = core::ExecutionProfile::kPatrolInvestigation;
  }
  return core::InvocationPolicy::Create(inputs);
}

inline core::ToolRegistry Builtins() {
  absl::StatusOr<core::ToolRegistry> registry = core::ToolRegistry::WithBuiltins();
  REQUIRE(registry.ok());
  return std::move(registry).value();
}

inline rapidjson::Document ParseText(std::string_view text) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(text);
  INFO("parsing " << std::string(text.substr(0, 400)));
  REQUIRE(doc.ok());
  return std::move(doc).value();
}

struct Fixture {
  Fixture() : executor(registry) {
    SeedDemoLikeFleet(fleet, clock.Now());
    REQUIRE(core::BindBuiltinToolHandlers(executor, Ports()).ok());
  }

  core::BuiltinToolPorts Ports() {
    return core::BuiltinToolPorts{.fleet = fleet,
                                  .findings = findings,
                                  .actions = actions,
                                  .clock = clock,
                                  .ids = ids,
                                  .requester = actions::Agent("patrol"),
                                  .metrics_history = &history};
  }

  // Runs `tool` with `args_json` through the executor under a policy that may call it.
  core::ToolCallOutcome Call(std::string_view tool, std::string_view args_json) {
    rapidjson::Document args = ParseText(args_json);
    if (tool == core::kToolPatrolResolveFinding) {
      // No profile may call it (the model's word closes nothing): the handler runs directly,
      // after checking that the executor refuses it even under patrol_detection.
      core::PolicyInputs inputs;
      inputs.scopes = core::ScopeSet::All();
      inputs.profile = core::ExecutionProfile::kPatrolDetection;
      const core::InvocationPolicy detection = core::InvocationPolicy::Create(inputs);
      REQUIRE_FALSE(executor.Execute(detection, tool, args).dispatched);
      core::ToolCallOutcome outcome;
      outcome.tool_name = std::string(tool);
      outcome.invocation_class = core::ClassifyRegistered(registry, tool, args);
      outcome.dispatched = true;
      core::PatrolResolveFindingHandler handler(findings);
      outcome.result =
          handler.Run(args, core::ToolContext{tool, outcome.invocation_class, detection});
      return outcome;
    }
    return executor.Execute(PolicyFor(tool), tool, args);
  }

  // The successful result of a call, parsed; the test fails on a tool error.
  rapidjson::Document Ok(std::string_view tool, std::string_view args_json) {
    core::ToolCallOutcome outcome = Call(tool, args_json);
    INFO(tool << " " << args_json << " -> " << outcome.result.content);
    REQUIRE(outcome.dispatched);
    REQUIRE(outcome.result.Ok());
    return ParseText(outcome.result.content);
  }

  // The error code of a call the handler refused (the executor let it through).
  std::string Refused(std::string_view tool, std::string_view args_json) {
    core::ToolCallOutcome outcome = Call(tool, args_json);
    INFO(tool << " " << args_json << " -> " << outcome.result.content);
    REQUIRE(outcome.dispatched);
    REQUIRE_FALSE(outcome.result.Ok());
    last_error = outcome.result.content;
    return core::ExtractToolErrorCode(outcome.result.content).value_or("");
  }

  FakeClock clock;
  FakeFleet fleet;
  InMemoryFindingStore finding_store;
  FakeFindingVerifier verifier;
  InMemoryMetricsHistory history;
  core::FindingsService findings{finding_store, clock, verifier, history};
  InMemoryActionStore action_store;
  InMemoryOperatorStateStore operator_state;
  InMemoryAuditLog audit;
  core::ActionService actions{action_store, fleet, operator_state, audit, clock};
  SequentialIdSource ids;
  core::ToolRegistry registry = Builtins();
  core::ToolExecutor executor;
  std::string last_error;  // the text of the last Refused call
};

inline std::string Str(const rapidjson::Value& object, std::string_view key) {
  return std::string(core::GetString(object, key).value_or(""));
}

inline const rapidjson::Value& Member(const rapidjson::Value& object, std::string_view key) {
  const rapidjson::Value* v = core::GetMember(object, key);
  INFO("member " << std::string(key));
  REQUIRE(v != nullptr);
  return *v;
}

inline std::vector<std::string> Strings(const rapidjson::Value& array) {
  std::vector<std::string> out;
  for (const auto& v : array.GetArray()) {
    out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

inline bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace pulse::testing::handlers
