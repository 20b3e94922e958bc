#include "pulse/core/findings/finding_identity.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

namespace pulse::core {
namespace {

Finding Make(std::string id, std::string resource_id, Category category, std::string title,
             std::string description = "") {
  Finding f;
  f.id = std::move(id);
  f.resource_id = std::move(resource_id);
  f.category = category;
  f.title = std::move(title);
  f.description = std::move(description);
  f.key = NormalizeFindingKey(f.title);
  return f;
}

TEST_CASE("key normalization trims, lowercases and collapses separators", "[core][findings]") {
  CHECK(NormalizeFindingKey("disk-high") == "disk-high");
  CHECK(NormalizeFindingKey("  Disk   High \t") == "disk-high");
  CHECK(NormalizeFindingKey("DISK_HIGH") == "disk-high");
  CHECK(NormalizeFindingKey("--disk--high--") == "disk-high");
  CHECK(NormalizeFindingKey("Disk usage: 90%!") == "disk-usage-90");
  CHECK(NormalizeFindingKey("caf\xC3\xA9 latency") == "caf-latency");
  CHECK(NormalizeFindingKey("   ").empty());
  CHECK(NormalizeFindingKey("").empty());
}

TEST_CASE("key aliases map only the directional synonyms onto verifier keys", "[core][findings]") {
  CHECK(NormalizeFindingKey("high-cpu") == "cpu-high");
  CHECK(NormalizeFindingKey("High CPU") == "cpu-high");
  CHECK(NormalizeFindingKey("high_memory") == "memory-high");
  CHECK(NormalizeFindingKey("HIGH-DISK") == "disk-high");
  CHECK(NormalizeFindingKey("pbs-job-failed") == "pbs-job-failed");
  CHECK(NormalizeFindingKey("node-offline") == "node-offline");
  CHECK(NormalizeFindingKey("high-cpu-steal") == "high-cpu-steal");
}

TEST_CASE("key normalization is idempotent and bounded", "[core][findings]") {
  const std::vector<std::string> keys = {"  Mixed_Case key!! ", "high cpu", std::string(300, 'a'),
                                         std::string("a ") + std::string(200, 'b'), "x-y"};
  for (const std::string& key : keys) {
    const std::string once = NormalizeFindingKey(key);
    CHECK(NormalizeFindingKey(once) == once);
    CHECK(once.size() <= kMaxNormalizedKeyBytes);
    CHECK((once.empty() || (once.front() != '-' && once.back() != '-')));
  }
  std::string long_key = std::string(127, 'a') + " b";
  CHECK(NormalizeFindingKey(long_key) == std::string(127, 'a'));
}

TEST_CASE("the report key falls back to the title and then to llm-finding", "[core][findings]") {
  CHECK(FindingKeyFor("Disk High", "ignored") == "disk-high");
  CHECK(FindingKeyFor("", "Backup job failed") == "backup-job-failed");
  CHECK(FindingKeyFor("  ", "!!!") == "llm-finding");
}

TEST_CASE("finding ids are the wire digest of resource, category and key", "[core][findings]") {
  CHECK(FindingIdFor("vm:100", Category::kPerformance, "cpu-high") == "e555c612e91fa75b");
  CHECK(FindingIdFor("storage:pve1:local-zfs", Category::kCapacity, "disk-high") ==
        "404d9e19185b51da");
  std::set<std::string> ids;
  for (const char* resource : {"vm:100", "vm:101"}) {
    for (Category c : AllCategories()) {
      for (const char* key : {"cpu-high", "memory-high"}) {
        const std::string id = FindingIdFor(resource, c, key);
        CHECK(id.size() == 16);
        CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
        ids.insert(id);
      }
    }
  }
  CHECK(ids.size() == 2 * 6 * 2);
}

TEST_CASE("keyword overlap ignores case, short words and stop words", "[core][findings]") {
  CHECK(TitleKeywords("The CPU is at 97% on web-1") == std::set<std::string>{"cpu", "web"});
  CHECK(KeywordOverlap("High CPU usage", "high cpu USAGE!") == Approx(1.0));
  CHECK(KeywordOverlap("High CPU usage", "High memory usage") == Approx(0.5));
  CHECK(KeywordOverlap("Backup failed", "Disk nearly full") == Approx(0.0));
  CHECK(KeywordOverlap("", "") == Approx(1.0));
}

TEST_CASE("semantic similarity adds the weighted signals and caps at one", "[core][findings]") {
  Finding a = Make("a", "vm:1", Category::kPerformance, "High CPU usage", "cpu busy");
  Finding b = a;
  b.id = "b";
  CHECK(SemanticSimilarity(a, b) == Approx(1.0));
  Finding c = Make("c", "vm:2", Category::kBackup, "Backup failed", "job error");
  CHECK(SemanticSimilarity(a, c) == Approx(0.0));
}

TEST_CASE("storage capacity siblings of one pool are one problem", "[core][findings]") {
  Finding risk = Make("a", "storage:pve1:local-zfs", Category::kReliability,
                      "Storage pool local-zfs at risk", "Pool usage at 92% and climbing");
  risk.resource_type = "storage";
  risk.resource_name = "local-zfs";
  Finding usage = Make("b", "pool:pve1/local-zfs", Category::kCapacity, "Pool nearly full",
                       "92% used, 150 GB free");
  usage.resource_type = "storage";
  usage.resource_name = "Local-ZFS";
  CHECK(SiblingEquivalence(risk, usage).has_value());
  CHECK(SiblingEquivalence(usage, risk).has_value());
}

TEST_CASE("backup, health and pool versus device findings stay separate", "[core][findings]") {
  Finding usage =
      Make("u", "storage:pve1:tank", Category::kCapacity, "Pool tank nearly full", "92% used");
  usage.resource_type = "storage";
  Finding backup = Make("b", "storage:pve1:tank", Category::kBackup, "Backup to pool tank failed",
                        "storage full during backup");
  backup.resource_type = "storage";
  CHECK_FALSE(SiblingEquivalence(usage, backup).has_value());
  Finding health = Make("h", "storage:pve1:tank", Category::kReliability, "Pool tank degraded",
                        "one vdev is faulted");
  health.resource_type = "storage";
  CHECK_FALSE(SiblingEquivalence(usage, health).has_value());
  Finding device =
      Make("d", "disk:pve1:sda", Category::kCapacity, "Disk sda nearly full", "95% used");
  device.resource_type = "physical_disk";
  CHECK_FALSE(SiblingEquivalence(usage, device).has_value());
}

TEST_CASE("distinct symptoms on one resource stay separate", "[core][findings]") {
  Finding cpu =
      Make("a", "vm:1", Category::kPerformance, "High CPU usage on web-1", "CPU above 95%");
  Finding memory =
      Make("b", "vm:1", Category::kPerformance, "High memory usage on web-1", "Memory above 95%");
  CHECK_FALSE(SiblingEquivalence(cpu, memory).has_value());
}

TEST_CASE("equal titles or near-identical text on one resource are one problem",
          "[core][findings]") {
  Finding a = Make("a", "vm:1", Category::kPerformance, "High CPU usage", "CPU above 95%");
  Finding b = Make("b", "vm:1", Category::kReliability, "high cpu usage!", "other words");
  b.key = "other-key";
  CHECK(SiblingEquivalence(a, b).has_value());
  Finding c = Make("c", "vm:1", Category::kPerformance, "High CPU usage now", "CPU above 95%");
  c.key = "cpu-pressure";
  // same resource (0.3) + category (0.2) + title overlap 1 (0.2) + description 1 (0.1) = 0.8
  CHECK(SiblingEquivalence(a, c).has_value());
  Finding elsewhere = a;
  elsewhere.id = "e";
  elsewhere.resource_id = "vm:2";
  CHECK_FALSE(SiblingEquivalence(a, elsewhere).has_value());
  CHECK_FALSE(SiblingEquivalence(a, a).has_value());  // same id is not a sibling
}

TEST_CASE("the same display name on two nodes is two resources, never one finding",
          "[core][findings][identity]") {
  // Every Proxmox node has a `local-zfs`; pve1's fills while pve2's sits at 85 %.
  Finding pve1 = Make("a", "storage:pve1/local-zfs", Category::kCapacity,
                      "Storage local-zfs is filling up", "local-zfs is 88.0% used");
  pve1.resource_name = "local-zfs";
  pve1.resource_type = "storage";
  Finding pve2 = Make("b", "storage:pve2/local-zfs", Category::kCapacity,
                      "Storage local-zfs is nearly full", "local-zfs is 85.1% used");
  pve2.resource_name = "LOCAL-ZFS";
  pve2.resource_type = "storage";
  CHECK(StorageIdentityOf(pve1) == "pve1-local-zfs");
  CHECK(StorageIdentityOf(pve2) == "pve2-local-zfs");
  CHECK_FALSE(SiblingEquivalence(pve1, pve2).has_value());
  CHECK_FALSE(SiblingEquivalence(pve2, pve1).has_value());
  // Even with equal titles and a shared node name, a name is not an identity.
  pve2.title = pve1.title;
  pve2.node = pve1.node = "pve1";
  CHECK_FALSE(SiblingEquivalence(pve1, pve2).has_value());

  // nginx crash-looping on two nodes: equal title, key and category, two problems.
  Finding nginx1 = Make("c", "service:pve1/nginx", Category::kReliability,
                        "Service nginx is crash-looping", "restart count 14");
  nginx1.resource_name = "nginx";
  nginx1.resource_type = "service";
  Finding nginx2 = nginx1;
  nginx2.id = "d";
  nginx2.resource_id = "service:pve2/nginx";
  CHECK(StorageIdentityOf(nginx1).empty());
  CHECK_FALSE(SiblingEquivalence(nginx1, nginx2).has_value());
  // The same resource id still is one resource.
  nginx2.resource_id = nginx1.resource_id;
  CHECK(SiblingEquivalence(nginx1, nginx2).has_value());
}

TEST_CASE("the related-resource filter selects by canonical id and storage identity only",
          "[core][findings][identity]") {
  Finding pve1 = Make("a", "storage:pve1/local-zfs", Category::kCapacity, "Pool full");
  pve1.resource_name = "local-zfs";
  Finding pve2 = pve1;
  pve2.resource_id = "storage:pve2/local-zfs";
  Finding web = Make("c", "vm:101", Category::kPerformance, "High CPU usage");
  web.resource_name = "local-zfs";  // a VM that happens to carry the name
  const RelatedResourceFilter by_storage{"", StorageIdentityOf(pve1)};
  CHECK(by_storage.storage_identity == "pve1-local-zfs");
  CHECK(MatchesRelatedResource(by_storage, pve1));
  CHECK_FALSE(MatchesRelatedResource(by_storage, pve2));
  CHECK_FALSE(MatchesRelatedResource(by_storage, web));
  // Words match as case-insensitive substrings of the id (a superset of equal identities).
  Finding upper = pve1;
  upper.resource_id = "POOL:PVE1/Local-ZFS";
  CHECK(MatchesRelatedResource(by_storage, upper));
  CHECK(MatchesRelatedResource(RelatedResourceFilter{"vm:101", ""}, web));
  CHECK_FALSE(MatchesRelatedResource(RelatedResourceFilter{"vm:102", ""}, web));
  CHECK_FALSE(MatchesRelatedResource(RelatedResourceFilter{"", ""}, pve1));
  CHECK(StorageIdentityWords("pve1-local-zfs") == std::vector<std::string>{"pve1", "local", "zfs"});
  CHECK(StorageIdentityWords("A%b_c") == std::vector<std::string>{"a", "b", "c"});
}

}  // namespace
}  // namespace pulse::core
