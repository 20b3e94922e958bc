// Alert intake (core/alerts/alert_intake.h, docs/alerts.md): both body shapes and their
// refusals, the label rules that map an alert to one resource or none, the finding an alert
// reports, a resolved alert that only the verifier can turn into a resolution, and the
// per-resource cooldown of the Patrol runs alerts start.
#include "pulse/core/alerts/alert_intake.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_finding_store.h"
#include "pulse/testing/in_memory_metrics_history.h"

namespace pulse::core {
namespace {

FleetResource Res(const std::string& id, const std::string& name, const std::string& parent = "",
                  std::map<std::string, std::string> attributes = {}) {
  FleetResource r;
  r.id = id;
  r.type = id.substr(0, id.find(':'));
  r.name = name;
  r.status = "running";
  r.parent_id = parent;
  r.attributes = std::move(attributes);
  return r;
}

std::vector<FleetResource> TestFleet() {
  return {Res("node:pve1", "pve1", "", {{"ip", "10.0.0.11"}}),
          Res("node:pve2", "pve2", "", {{"ip", "10.0.0.12"}}),
          Res("vm:101", "web-vm", "node:pve1"),
          Res("vm:@lab2/101", "web-vm-2", "node:pve2"),
          Res("lxc:200", "dns", "node:pve1"),
          Res("app-container:web", "web", "host:docker1"),
          Res("app-container:@d2/web", "web", "host:docker2"),
          Res("app-container:api", "api", "host:docker1"),
          Res("host:docker1", "docker1", "", {{"hostname", "docker1.lab"}}),
          Res("host:docker2", "docker2")};
}

Alert WithLabels(std::map<std::string, std::string> labels) {
  Alert a;
  a.labels = std::move(labels);
  a.labels["alertname"] = "Test";
  return a;
}

std::string Mapped(std::map<std::string, std::string> labels) {
  const AlertMapping m = MapAlert(WithLabels(std::move(labels)), TestFleet());
  return m.kind == AlertMapping::Kind::kMapped ? m.resource_id
                                               : "<" + std::string(ToString(m.kind)) + ">";
}

constexpr char kAlertmanager[] = R"({
  "version": "4", "groupKey": "{}:{alertname=\"ContainerDown\"}", "truncatedAlerts": 0,
  "status": "firing", "receiver": "pulse", "groupLabels": {"alertname": "ContainerDown"},
  "commonLabels": {}, "commonAnnotations": {}, "externalURL": "http://am:9093",
  "alerts": [
    {"status": "firing", "labels": {"alertname": "ContainerDown", "container": "api",
       "severity": "critical"},
     "annotations": {"summary": "api is down", "description": "The api container exited.",
       "runbook_url": "https://runbooks.example/api"},
     "startsAt": "2026-12-03T10:00:00.123Z", "endsAt": "0001-01-01T00:00:00Z",
     "generatorURL": "http://prometheus:9090/graph", "fingerprint": "5c1f2a3b4c5d6e7f"},
    {"status": "resolved", "labels": {"alertname": "HighLoad", "instance": "10.0.0.12:9100"},
     "annotations": {}, "startsAt": "2026-12-03T09:00:00Z", "endsAt": "2026-12-03T09:30:00Z",
     "generatorURL": "", "fingerprint": "0a0b"}
  ]})";

TEST_CASE("Alertmanager's webhook payload and the native shape parse to the same alerts",
          "[core][alerts]") {
  absl::StatusOr<AlertBatch> am = ParseAlertIntake(kAlertmanager);
  REQUIRE(am.ok());
  CHECK(am->shape == "alertmanager");
  CHECK(am->receiver == "pulse");
  REQUIRE(am->alerts.size() == 2);
  const Alert& down = am->alerts[0];
  CHECK(down.firing);
  CHECK(down.Name() == "ContainerDown");
  CHECK(down.labels.at("container") == "api");
  CHECK(down.annotations.at("summary") == "api is down");
  CHECK(down.fingerprint == "5c1f2a3b4c5d6e7f");
  REQUIRE(down.starts_at.has_value());
  CHECK_FALSE(down.ends_at.has_value());  // Alertmanager's zero time
  CHECK(down.generator_url == "http://prometheus:9090/graph");
  CHECK_FALSE(am->alerts[1].firing);
  CHECK(am->alerts[1].ends_at.has_value());

  absl::StatusOr<AlertBatch> native = ParseAlertIntake(
      R"({"alerts": [{"name": "DiskFull", "resource_id": "vm:101", "severity": "warning",
          "summary": "disk 95 %", "labels": {"team": "ops"}}, {"name": "Gone",
          "status": "resolved"}]})");
  REQUIRE(native.ok());
  CHECK(native->shape == "native");
  REQUIRE(native->alerts.size() == 2);
  CHECK(native->alerts[0].labels.at("pulse_resource") == "vm:101");
  CHECK(native->alerts[0].labels.at("alertname") == "DiskFull");
  CHECK(native->alerts[0].labels.at("team") == "ops");
  CHECK(native->alerts[0].annotations.at("summary") == "disk 95 %");
  CHECK(native->alerts[0].fingerprint.size() == 16);
  CHECK(native->alerts[0].fingerprint != native->alerts[1].fingerprint);
  CHECK_FALSE(native->alerts[1].firing);
  // The same labels, the same fingerprint: repeats of one native alert are one alert.
  CHECK(ParseAlertIntake(R"({"alerts":[{"name":"Gone","status":"resolved"}]})")
            ->alerts[0]
            .fingerprint == native->alerts[1].fingerprint);
}

TEST_CASE("a malformed or oversized alert body is refused whole, saying why",
          "[core][alerts][hostile]") {
  std::string many = R"({"alerts":[)";
  for (std::size_t i = 0; i <= kMaxAlertsPerRequest; ++i) {
    absl::StrAppend(&many, i == 0 ? "" : ",", R"({"name":"A)", i, R"("})");
  }
  many += "]}";
  std::string many_labels = R"({"alerts":[{"name":"A","labels":{)";
  for (std::size_t i = 0; i <= kMaxAlertLabels; ++i) {
    absl::StrAppend(&many_labels, i == 0 ? "" : ",", R"("l)", i, R"(":"v")");
  }
  many_labels += "}}]}";
  const std::vector<std::string> bad = {
      "",
      "not json",
      "[]",
      "{}",
      R"({"alerts": []})",
      R"({"alerts": {}})",
      R"({"alerts": [1]})",
      R"({"alerts": [{}]})",
      R"({"alerts": [{"name": ""}]})",
      R"({"alerts": [{"name": 7}]})",
      R"({"alerts": [{"name": "A", "status": "open"}]})",
      R"({"alerts": [{"name": "A", "resource_id": "not an id"}]})",
      R"({"alerts": [{"name": "A", "bogus": 1}]})",
      R"({"alerts": [{"name": "A", "name": "B"}]})",
      R"({"alerts": [{"name": "A", "labels": {"bad-name": "v"}}]})",
      R"({"alerts": [{"name": "A", "labels": {"k": 1}}]})",
      R"({"alerts": [{"name": "A", "labels": {"k": "line\nbreak"}}]})",
      R"({"alerts": [{"name": "A\u0000B"}]})",
      R"({"alerts": [{"name": "A"}], "extra": true})",
      absl::StrCat(R"({"alerts": [{"name": "A", "labels": {"k": ")", std::string(1025, 'v'),
                   R"("}}]})"),
      absl::StrCat(R"({"alerts": [{"name": ")", std::string(201, 'n'), R"("}]})"),
      many,
      many_labels,
      R"({"version": "3", "alerts": [{"status": "firing", "labels": {"alertname": "A"}}]})",
      R"({"version": 4, "alerts": [{"status": "firing", "labels": {"alertname": "A"}}]})",
      R"({"version": "4", "alerts": [{"status": "firing", "labels": {}}]})",
      R"({"version": "4", "alerts": [{"status": "firing"}]})",
      R"({"version": "4", "alerts": [{"status": "pending", "labels": {"alertname": "A"}}]})",
      R"({"version": "4", "alerts": [{"status": "firing", "labels": {"alertname": "A"},
          "startsAt": "yesterday"}]})",
      R"({"version": "4", "alerts": [{"status": "firing", "labels": {"alertname": "A"},
          "fingerprint": "<script>"}]})",
      R"({"version": "4", "alerts": [{"status": "firing", "labels": {"alertname": "A"},
          "annotations": {"summary": 5}}]})",
      absl::StrCat(R"({"alerts": [{"name": "A", "summary": ")", std::string(70000, 's'), R"("}]})"),
      std::string(200, '[') + std::string(200, ']'),
  };
  for (const std::string& body : bad) {
    INFO(body.substr(0, 200));
    const absl::StatusOr<AlertBatch> parsed = ParseAlertIntake(body);
    REQUIRE_FALSE(parsed.ok());
    CHECK(absl::IsInvalidArgument(parsed.status()));
    CHECK_FALSE(parsed.status().message().empty());
  }
}

TEST_CASE("an alert maps to one resource by the documented label rules, never by a guess",
          "[core][alerts]") {
  // pulse_resource decides alone, even when other labels would say otherwise.
  CHECK(Mapped({{"pulse_resource", "vm:101"}, {"container", "api"}}) == "vm:101");
  CHECK(Mapped({{"pulse_resource", "vm:999"}, {"container", "api"}}) == "<unmapped>");
  // container: by name or local id; two sources with a "web" are ambiguous unless a node says.
  CHECK(Mapped({{"container", "api"}}) == "app-container:api");
  CHECK(Mapped({{"container_name", "api"}}) == "app-container:api");
  CHECK(Mapped({{"container", "web"}}) == "<ambiguous>");
  CHECK(Mapped({{"container", "web"}, {"node", "docker2"}}) == "app-container:@d2/web");
  CHECK(Mapped({{"container", "nope"}}) == "<unmapped>");
  // vmid: vm or lxc, with a source prefix; narrowed by node.
  CHECK(Mapped({{"vmid", "200"}}) == "lxc:200");
  CHECK(Mapped({{"vmid", "101"}}) == "<ambiguous>");
  CHECK(Mapped({{"vmid", "101"}, {"node", "pve2"}}) == "vm:@lab2/101");
  CHECK(Mapped({{"vmid", "01"}}) == "<unmapped>");  // no suffix match inside a number
  // instance / host / hostname: a node or host by name, id or address attribute; port dropped.
  CHECK(Mapped({{"instance", "10.0.0.12:9100"}}) == "node:pve2");
  CHECK(Mapped({{"instance", "PVE1:9100"}}) == "node:pve1");
  CHECK(Mapped({{"hostname", "docker1.lab"}}) == "host:docker1");
  CHECK(Mapped({{"host", "docker2"}}) == "host:docker2");
  CHECK(Mapped({{"instance", "[::1]:9100"}}) == "<unmapped>");
  // node alone: the node.
  CHECK(Mapped({{"node", "pve1"}}) == "node:pve1");
  // Nothing that names a resource.
  const AlertMapping none = MapAlert(WithLabels({{"job", "node"}}), TestFleet());
  CHECK(none.kind == AlertMapping::Kind::kUnmapped);
  CHECK(none.reason.find("pulse_resource") != std::string::npos);
  const AlertMapping two = MapAlert(WithLabels({{"container", "web"}}), TestFleet());
  CHECK(two.rule == "container");
  CHECK(two.reason.find("app-container:web") != std::string::npos);
  CHECK(two.reason.find("app-container:@d2/web") != std::string::npos);
}

TEST_CASE("an alert's finding carries its severity, summary, runbook and labels as evidence",
          "[core][alerts]") {
  const AlertBatch batch = *ParseAlertIntake(kAlertmanager);
  const FleetResource api = Res("app-container:api", "api", "host:docker1");
  const FindingReport r = AlertFindingReport(batch.alerts[0], api, batch.shape);
  CHECK(r.resource_id == "app-container:api");
  CHECK(r.key == "alert:ContainerDown");
  CHECK(r.source == "alertmanager");
  CHECK(r.severity == Severity::kCritical);
  CHECK(r.category == Category::kReliability);
  CHECK(r.title == "api is down");
  CHECK(r.description == "The api container exited.");
  CHECK(r.recommendation == "Follow the runbook: https://runbooks.example/api");
  CHECK(r.evidence.find("firing since 2026-12-03T10:00:00.123Z") != std::string::npos);
  CHECK(r.evidence.find("container=api") != std::string::npos);
  CHECK(r.evidence.find("http://prometheus:9090/graph") != std::string::npos);
  Alert plain = WithLabels({{"severity", "INFO"}, {"pulse_category", "capacity"}});
  const FindingReport p = AlertFindingReport(plain, api, "native");
  CHECK(p.severity == Severity::kInfo);
  CHECK(p.category == Category::kCapacity);
  CHECK(p.source == "alert");
  CHECK(p.title == "Alert Test is firing");
  for (const auto& [label, severity] :
       std::vector<std::pair<std::string, Severity>>{{"page", Severity::kCritical},
                                                     {"warn", Severity::kWarning},
                                                     {"", Severity::kWarning},
                                                     {"odd", Severity::kWarning}}) {
    CHECK(AlertFindingReport(WithLabels({{"severity", label}}), api, "native").severity ==
          severity);
  }
}

struct IntakeWorld {
  testing::FakeClock clock;
  testing::FakeFleet fleet;
  testing::InMemoryFindingStore store;
  testing::FakeFindingVerifier verifier;
  testing::InMemoryMetricsHistory history;
  FindingsService findings{store, clock, verifier, history};
  std::vector<PatrolScope> runs;
  absl::Status next_run = absl::OkStatus();
  AlertIntake intake{fleet, findings, clock,
                     [this](const PatrolScope& scope) -> absl::StatusOr<std::string> {
                       if (!next_run.ok()) {
                         return next_run;
                       }
                       runs.push_back(scope);
                       return absl::StrCat("run-", runs.size());
                     }};

  IntakeWorld() {
    for (const FleetResource& r : TestFleet()) {
      fleet.PutResource(r);
    }
  }
  AlertIntakeResult Receive(const std::string& body) {
    absl::StatusOr<AlertBatch> batch = ParseAlertIntake(body);
    REQUIRE(batch.ok());
    absl::StatusOr<AlertIntakeResult> result = intake.Receive(*batch);
    REQUIRE(result.ok());
    return *result;
  }
};

std::string Native(const std::string& name, const std::string& resource,
                   const std::string& status = "firing") {
  return absl::StrCat(R"({"alerts":[{"name":")", name, R"(","resource_id":")", resource,
                      R"(","status":")", status, R"(","severity":"critical"}]})");
}

TEST_CASE("a firing alert reports its finding once and starts one scoped Patrol run, cooled",
          "[core][alerts]") {
  IntakeWorld w;
  AlertIntakeResult first = w.Receive(kAlertmanager);
  REQUIRE(first.alerts.size() == 2);
  CHECK(first.alerts[0].mapping.resource_id == "app-container:api");
  CHECK(first.alerts[0].finding_outcome == "created");
  CHECK(first.alerts[0].investigation == "started");
  CHECK(first.alerts[1].mapping.resource_id == "node:pve2");
  CHECK(first.alerts[1].finding_outcome == "none");  // resolved, and no finding of it
  CHECK(first.run_id == "run-1");
  REQUIRE(w.runs.size() == 1);
  CHECK(w.runs[0].resource_ids == std::vector<std::string>{"app-container:api", "node:pve2"});
  absl::StatusOr<Finding> finding = w.findings.Get(first.alerts[0].finding_id);
  REQUIRE(finding.ok());
  CHECK(finding->severity == Severity::kCritical);
  CHECK(finding->source == "alertmanager");

  // Alertmanager repeats the notification: the same finding, no second run in the cooldown.
  w.clock.Advance(absl::Minutes(5));
  AlertIntakeResult repeat = w.Receive(kAlertmanager);
  CHECK(repeat.alerts[0].finding_id == first.alerts[0].finding_id);
  CHECK(repeat.alerts[0].finding_outcome == "updated");
  CHECK(repeat.alerts[0].investigation == "cooldown");
  CHECK(repeat.run_id.empty());
  CHECK(w.runs.size() == 1);
  // A flapping alert on another resource is not held by this one's cooldown.
  CHECK(w.Receive(Native("Flap", "vm:101")).alerts[0].investigation == "started");
  for (int i = 0; i < 20; ++i) {
    w.clock.Advance(absl::Seconds(10));
    w.Receive(Native("Flap", "vm:101", i % 2 == 0 ? "resolved" : "firing"));
  }
  CHECK(w.runs.size() == 2);  // 200 s of flapping: still the one run
  // Once the cooldown passed, the next alert investigates again.
  w.clock.Advance(absl::Minutes(10));
  CHECK(w.Receive(kAlertmanager).alerts[0].investigation == "started");
  CHECK(w.runs.size() == 3);
}

TEST_CASE("a resolved alert resolves its finding only when the verifier confirms",
          "[core][alerts]") {
  IntakeWorld w;
  const std::string id = w.Receive(Native("DiskFull", "vm:101")).alerts[0].finding_id;
  REQUIRE_FALSE(id.empty());
  // No verifier for the alert's key: the finding stays active, with the reason.
  AlertIntakeResult kept = w.Receive(Native("DiskFull", "vm:101", "resolved"));
  CHECK(kept.alerts[0].finding_id == id);
  CHECK(kept.alerts[0].finding_outcome == "kept");
  CHECK_FALSE(kept.alerts[0].detail.empty());
  CHECK_FALSE(w.findings.Get(id)->resolved_at.has_value());
  // The verifier still sees the problem: kept.
  w.verifier.Script(NormalizeFindingKey("alert:DiskFull"), VerifierVerdict::kSignalPresent);
  CHECK(w.Receive(Native("DiskFull", "vm:101", "resolved")).alerts[0].finding_outcome == "kept");
  CHECK_FALSE(w.findings.Get(id)->resolved_at.has_value());
  // It confirms: resolved; a second resolved notification finds it no longer active.
  w.verifier.Script(NormalizeFindingKey("alert:DiskFull"), VerifierVerdict::kSignalGone);
  CHECK(w.Receive(Native("DiskFull", "vm:101", "resolved")).alerts[0].finding_outcome ==
        "resolved");
  CHECK(w.findings.Get(id)->resolved_at.has_value());
  CHECK(w.Receive(Native("DiskFull", "vm:101", "resolved")).alerts[0].finding_outcome ==
        "not_active");
  // Firing again: the finding regresses.
  CHECK(w.Receive(Native("DiskFull", "vm:101")).alerts[0].finding_outcome == "regressed");
}

TEST_CASE("unmapped alerts write nothing, and a run that cannot start is reported, not cooled",
          "[core][alerts]") {
  IntakeWorld w;
  AlertIntakeResult r = w.Receive(
      R"({"alerts":[{"name":"A","labels":{"container":"web"}},{"name":"B","labels":{"job":"x"}}]})");
  CHECK(r.alerts[0].mapping.kind == AlertMapping::Kind::kAmbiguous);
  CHECK(r.alerts[1].mapping.kind == AlertMapping::Kind::kUnmapped);
  for (const AlertOutcome& a : r.alerts) {
    CHECK(a.finding_id.empty());
    CHECK(a.investigation == "not_started");
  }
  CHECK(r.run_id.empty());
  CHECK(w.runs.empty());
  CHECK(w.findings.List(FindingQuery{})->empty());

  w.next_run = absl::FailedPreconditionError("running");
  CHECK(w.Receive(Native("X", "vm:101")).alerts[0].investigation == "already_running");
  w.next_run = absl::UnavailableError("queue full");
  w.clock.Advance(absl::Minutes(11));
  CHECK(w.Receive(Native("X", "lxc:200")).alerts[0].investigation == "failed");
  w.next_run = absl::OkStatus();
  CHECK(w.Receive(Native("X", "lxc:200")).alerts[0].investigation == "started");  // not cooled

  // The fleet cannot be listed: Unavailable, nothing written.
  w.fleet.SetError(testing::FakeFleet::Method::kListResources, absl::UnavailableError("down"));
  absl::StatusOr<AlertIntakeResult> down =
      w.intake.Receive(*ParseAlertIntake(Native("Y", "vm:101")));
  CHECK(absl::IsUnavailable(down.status()));
}

}  // namespace
}  // namespace pulse::core
