#include "pulse/core/manifest/path_template.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace pulse::core {
namespace {

TEST_CASE("path templates parse into literal and placeholder segments", "[core][manifest][path]") {
  absl::StatusOr<std::vector<PathSegment>> segments =
      ParsePathTemplate("/api/actions/{actionId}/decision");
  REQUIRE(segments.ok());
  CHECK(*segments ==
        std::vector<PathSegment>{
            {"api", false}, {"actions", false}, {"actionId", true}, {"decision", false}});
  CHECK(PathPlaceholders("/api/resources/{resourceId}/operator-state") ==
        std::vector<std::string>{"resourceId"});
  CHECK(PathPlaceholders("/healthz").empty());
  // The root is the one template without a segment (the console's page).
  CHECK(ParsePathTemplate("/").value().empty());
}

TEST_CASE("malformed templates are refused", "[core][manifest][path]") {
  for (const char* bad :
       {"", "//", "api/x", "/api//x", "/api/x/", "/api/{}", "/api/{1id}", "/api/{id", "/api/x{id}",
        "/api/{a-b}", "/api/{id}/{id}", "/api/a b", "/api/%41"}) {
    INFO(bad);
    CHECK_FALSE(ParsePathTemplate(bad).ok());
  }
}

TEST_CASE("percent-encoding keeps only unreserved bytes", "[core][manifest][path]") {
  CHECK(PercentEncode("vm:101") == "vm%3A101");
  CHECK(PercentEncode("a/b") == "a%2Fb");
  CHECK(PercentEncode("a b") == "a%20b");
  CHECK(PercentEncode("AZaz09-._~") == "AZaz09-._~");
  CHECK(PercentEncode("é") == "%C3%A9");
  CHECK(PercentEncode(std::string("\0", 1)) == "%00");
  CHECK(PercentEncode("%+&=?#") == "%25%2B%26%3D%3F%23");
}

TEST_CASE("percent-decoding is strict about escapes and NUL", "[core][manifest][path]") {
  CHECK(PercentDecode("vm%3A101").value() == "vm:101");
  CHECK(PercentDecode("vm%3a101").value() == "vm:101");
  CHECK(PercentDecode("a+b").value() == "a+b");
  CHECK(PercentDecode("..%2F..").value() == "../..");
  for (const char* bad : {"%", "%4", "%zz", "a%G1", "%00", "x%0"}) {
    INFO(bad);
    CHECK_FALSE(PercentDecode(bad).ok());
  }
  for (const std::string& id : {std::string("vm:101"), std::string("a b/c"), std::string("é~")}) {
    CHECK(PercentDecode(PercentEncode(id)).value() == id);
  }
}

TEST_CASE("path parameter values may not traverse or carry controls", "[core][manifest][path]") {
  CHECK(CheckPathParamValue("vm:101").ok());
  CHECK(CheckPathParamValue("node:pve1").ok());
  CHECK(CheckPathParamValue("..a").ok());
  for (const std::string& bad :
       {std::string(), std::string("."), std::string(".."), std::string("a/b"), std::string("a\\b"),
        std::string("a\nb"), std::string("a\rb"), std::string("a\x7f"), std::string("\xff\xfe"),
        std::string(kMaxPathParamBytes + 1, 'a')}) {
    CHECK_FALSE(CheckPathParamValue(bad).ok());
  }
}

TEST_CASE("a resource id parameter follows the canonical resource id rule, slashes included",
          "[core][manifest][path]") {
  for (const char* good : {"service:pve1/nginx", "storage:pve1/local-zfs", "vm:101", "node:pve1"}) {
    INFO(good);
    CHECK(CheckPathParam(kResourceIdPathParam, good).ok());
  }
  // The decoded value is judged as it is: "%2F" left over from a double encoding is no id.
  for (const std::string& bad :
       {std::string(), std::string("pve1"), std::string("service:pve1/../etc"),
        std::string("service:pve1//nginx"), std::string("service:/nginx"),
        std::string("service:pve1/"), std::string("service:pve1%2Fnginx"),
        std::string("service:pve1\\nginx"), std::string("service:pve1/ngi\nnx"),
        std::string("../etc/passwd"), std::string("vm:") + std::string(300, 'a')}) {
    INFO(bad);
    CHECK_FALSE(CheckPathParam(kResourceIdPathParam, bad).ok());
  }
  // Every other placeholder keeps the opaque-id rule, which has no room for a slash.
  CHECK(CheckPathParam("actionId", "act_1").ok());
  CHECK_FALSE(CheckPathParam("actionId", "a/b").ok());
  CHECK_FALSE(CheckPathParam("sessionId", "..").ok());
}

}  // namespace
}  // namespace pulse::core
