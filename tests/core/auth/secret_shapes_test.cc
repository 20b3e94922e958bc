// The secret redactor (core/auth/secret_redactor.h) over the contents of the credential files
// the exec denylist also refuses (issue 19, item 2): one row per shape, raw as a command prints
// it and escaped inside a JSON string as a tool result carries it, plus the lookalikes that must
// stay as they are.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json_writer.h"

namespace pulse::core {
namespace {

struct Shape {
  std::string name;
  std::string text;    // what the file holds, with the secret in it
  std::string secret;  // must not survive
  std::string kept;    // must survive (the part that tells an operator what this is)
};

// Realistic fixtures: each `secret` is what a leak would give away.
std::vector<Shape> Shapes() {
  return {
      {"shadow sha512",
       "root:$6$Zr4x9QmT$KZ1uXw8b7pQ0f2cT1sV3yA.aB/cD9eF0gH1iJ2kL3mN4oP5qR6sT7uV8w"
       "X9yZ0aB1cD2eF3gH4iJ5kL6mN7:19700:0:99999:7:::\n",
       "KZ1uXw8b7pQ0f2cT1sV3yA", "root:"},
      {"shadow yescrypt",
       "alice:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd."
       "ELJG6YA:19600:0:99999:7:::",
       "X3DX6M94c7o.9agCG9G317fhZg9SqC", "alice:"},
      {"shadow bcrypt",
       "bob:$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW:19000::::::",
       "R9h/cIPz0gi.URNNX3kh2OPST9", "bob:"},
      {"opasswd",
       "carol:1000:2:$6$saltsalt$oldhasholdhasholdhasholdhash0123,$5$pepper12$rotated"
       "hashrotatedhash",
       "oldhasholdhasholdhash", "carol:1000:2:"},
      {"htpasswd argon2", "admin:$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
       "aGFzaGhhc2hoYXNoaGFzaA", "admin:"},
      {"wpa_supplicant psk", "network={\n  ssid=\"home\"\n  psk=\"correct horse battery\"\n}",
       "correct horse battery", "ssid=\"home\""},
      {"wpa_supplicant hex psk",
       "network={\n psk=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0\n}",
       "0f1e2d3c4b5a69788796", "network={"},
      {"NetworkManager psk", "[wifi-security]\nkey-mgmt=wpa-psk\npsk=SuperWifiPass99\n",
       "SuperWifiPass99", "key-mgmt=wpa-psk"},
      {"NetworkManager wep key", "[wifi-security]\nwep-key0=abcdef0123456789abcdef0123\n",
       "abcdef0123456789", "[wifi-security]"},
      {"ceph keyring",
       "[client.admin]\n\tkey = AQBvaBFZAAAAABAA9VHgwCgY7uUCX6Gjh8PcUA==\n\tcaps mon = "
       "\"allow *\"\n",
       "AQBvaBFZAAAAABAA9VHgwCgY7uUCX6Gjh8PcUA==", "[client.admin]"},
      {"ceph secret in a mount line",
       "mount -t ceph mon1:/ /mnt -o name=admin,secretfile=/etc/ceph/s AQCj2YpRiAe6CxAA7/ETt7Hcl9"
       "IyxyYciVs47w==",
       "AQCj2YpRiAe6CxAA7/ETt7Hcl9IyxyYciVs47w==", "mount -t ceph"},
      {"kubeconfig client key",
       "users:\n- name: admin\n  user:\n    client-key-data: LS0tLS1CRUdJTiBS"
       "U0EgUFJJVkFURSBLRVkt\n",
       "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVkt", "client-key-data: "},
      {"kubeconfig client certificate",
       "    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM\n",
       "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM", "client-certificate-data: "},
      {"kubeconfig token",
       "  user:\n    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJzdWIiOiJh\n",
       "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9", "token: "},
      {"k3s node token", "token: K10c2d5b8e0f0a1b2c3d4e5f60718293a4b5c6d7e8f::server:0a1b2c3d4e5f",
       "K10c2d5b8e0f0a1b2c3d4e5f6", "token: "},
      {"netrc one line", "machine api.example.com login deploy password Netrc-Pass-77\n",
       "Netrc-Pass-77", "login deploy password "},
      {"netrc one keyword a line", "machine git.example.com\n  login ci\n  password gitNetrcPw9\n",
       "gitNetrcPw9", "login ci"},
      {"pgpass", "db.internal:5432:app:appuser:Pg-Pass-1234\n*:*:*:postgres:pgSuperPw\n",
       "Pg-Pass-1234", "db.internal:5432:app:appuser:"},
      {"pgpass wildcard", "*:*:*:replicator:replPw42", "replPw42", "*:*:*:replicator:"},
      {"docker auth", R"({"auths":{"registry.example.com":{"auth":"ZGVwbG95OnMzY3JldC1yZWc="}}})",
       "ZGVwbG95OnMzY3JldC1yZWc=", "registry.example.com"},
      {"docker identity token",
       R"({"auths":{"r.io":{"identitytoken":"dGhpcy1pcy1hbi1pZGVudGl0eQ"}}})",
       "dGhpcy1pcy1hbi1pZGVudGl0eQ", "identitytoken"},
      {"postfix sasl_passwd", "[smtp.example.com]:587 mailer@example.com:SaslPw77", "SaslPw77",
       "[smtp.example.com]:587"},
      {"mysql debian.cnf",
       "[client]\nhost = localhost\nuser = debian-sys-maint\npassword = "
       "DebSysPw0\n",
       "DebSysPw0", "user = debian-sys-maint"},
  };
}

// `text` as a tool result carries it: inside a JSON string.
std::string AsJsonString(const std::string& text) {
  JsonWriter out;
  out.StartObject();
  out.Member("output", text);
  out.EndObject();
  return out.Take();
}

TEST_CASE("credential file contents are redacted, one row per shape", "[core][auth][redact]") {
  for (const Shape& shape : Shapes()) {
    INFO(shape.name << ": " << shape.text);
    REQUIRE(shape.text.find(shape.secret) != std::string::npos);  // the plant is real
    const std::string raw = RedactSecrets(shape.text);
    INFO("raw -> " << raw);
    CHECK(raw.find(shape.secret) == std::string::npos);
    CHECK(raw.find(kRedactedSecret) != std::string::npos);
    CHECK(raw.find(shape.kept) != std::string::npos);
    CHECK(RedactSecrets(raw) == raw);  // idempotent
    const std::string json = RedactSecrets(AsJsonString(shape.text));
    INFO("json -> " << json);
    CHECK(json.find(shape.secret) == std::string::npos);
  }
}

TEST_CASE("lookalikes of the credential shapes are left alone", "[core][auth][redact]") {
  const std::vector<std::string> untouched = {
      "root:x:0:0:root:/root:/bin/bash",
      "root:!:19700:0:99999:7:::",
      "daemon:*:19700:0:99999:7:::",
      "sudo:x:27:alice,bob",
      "the password is wrong: try again",
      "machine learning jobs: the password rotation is due",
      "Jan 01 10:00:01 host CRON[123]: (root) CMD (run-parts /etc/cron.hourly)",
      "12:30:45 up 3 days",
      "price is $6$ per unit and $100 total",
      "echo $1$2$3",
      "key-mgmt=wpa-psk",
      "psk-flags=0",
      "key = value",
      "key: vm:101",
      R"({"key":"service:pve1/nginx","value":"ActiveEnterTimestampMonotonic"})",
      R"({"auth":{"header":"X-API-Token","scopes":["ai:chat"]}})",
      R"({"auth":"none"})",
      "certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
      "AQ is a prefix; AQBvaBFZ is too short",
  };
  for (const std::string& text : untouched) {
    INFO(text);
    CHECK(RedactSecrets(text) == text);
  }
}

TEST_CASE("the credential shapes keep redaction linear", "[core][auth][redact]") {
  std::string quotes(1 << 20, '"');
  CHECK(RedactSecrets(quotes) == quotes);
  std::string escapes;
  for (int i = 0; i < (1 << 17); ++i) {
    escapes += "a:1\\n";
  }
  CHECK(RedactSecrets(escapes) == escapes);
  std::string passwords;
  for (int i = 0; i < (1 << 16); ++i) {
    passwords += "password ";
  }
  CHECK(RedactSecrets(passwords) == passwords);
  std::string dollars;
  for (int i = 0; i < (1 << 17); ++i) {
    dollars += "$6$";
  }
  CHECK(RedactSecrets(dollars) == dollars);
}

TEST_CASE("a secret-named key over JSON structure is not a secret, a bare value still is",
          "[core][auth][redact]") {
  // Schemas and nested records name properties "token", "password", "secret": the structure
  // under them passes, and a secret string inside it is still redacted.
  const std::vector<std::string> untouched = {
      R"({"properties":{"token":{"type":"string"},"record":{"type":"object"}}})",
      R"({"token": {"type":"string"}})",
      R"({"password":{}})",
      R"({"secrets":["a","b"]})",
      R"({"api_key":[]})",
      "token:\n  type: string",
  };
  for (const std::string& text : untouched) {
    INFO(text);
    CHECK(RedactSecrets(text) == text);
  }
  CHECK(RedactSecrets(R"({"token":{"value":"x","token":"s3cr3t-value-123"}})")
            .find("s3cr3t-value-123") == std::string::npos);
  CHECK(RedactSecrets("password={hunter2-and-more}").find("hunter2") == std::string::npos);
  CHECK(RedactSecrets("token=[abc123secret]").find("abc123secret") == std::string::npos);
}

}  // namespace
}  // namespace pulse::core
