// The secret redactor (core/auth/secret_redactor.h): what it removes, what it must leave
// alone, idempotence, and bounded work on pathological input. Pure core code; it lives with the
// storage tests because the audit log is its first user.
#include "pulse/core/auth/secret_redactor.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

namespace pulse::core {
namespace {

struct Vector {
  std::string in;
  std::string out;
};

const std::string kPulseToken =
    "pulse_" + std::string("AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_aBcDe");

TEST_CASE("credentials in command text and headers are redacted", "[core][auth][redact]") {
  REQUIRE(kPulseToken.size() == 49);
  const std::vector<Vector> vectors = {
      {"Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [REDACTED]"},
      {"authorization:basic dXNlcjpwYXNz", "authorization:basic [REDACTED]"},
      {"Proxy-Authorization: Negotiate YIIGhgYGKwYBBQUC",
       "Proxy-Authorization: Negotiate [REDACTED]"},
      {"Authorization: rawtokenvalue123", "Authorization: [REDACTED]"},
      {"curl -H \"Authorization: Bearer eyJhbGciOi.eyJzdWIi.sig\" https://x",
       "curl -H \"Authorization: Bearer [REDACTED]\" https://x"},
      {"got bearer 0123456789abcdef from cache", "got bearer [REDACTED] from cache"},
      {"X-API-Token: " + kPulseToken, "X-API-Token: [REDACTED]"},
      {"token " + kPulseToken + " leaked", "token [REDACTED] leaked"},
      {"key sk-proj-abcdefghijklmnop1234 used", "key [REDACTED] used"},
      {"ANTHROPIC sk-ant-api03-xxxxxxxxxxxxxxxxxxxx", "ANTHROPIC [REDACTED]"},
      {"or sk-or-v1-0123456789abcdef0123", "or [REDACTED]"},
      {"groq gsk_0123456789abcdefABCDEF", "groq [REDACTED]"},
      {"google AIzaSyA-1234567890abcdefghijklmnopqrstu", "google [REDACTED]"},
      {"gh ghp_0123456789abcdefghijABCDEFGHIJ0123", "gh [REDACTED]"},
      {"slack xoxb-1234567890-abcdefghij", "slack [REDACTED]"},
      {"aws AKIAIOSFODNN7EXAMPLE region", "aws [REDACTED] region"},
      {"password=hunter2", "password=[REDACTED]"},
      {"PGPASSWORD='s3cr3t pass' psql -h db", "PGPASSWORD='[REDACTED]' psql -h db"},
      {"mysql --password hunter2 -u root", "mysql --password [REDACTED] -u root"},
      {"mysql --password=hunter2 -u root", "mysql --password=[REDACTED] -u root"},
      {"vault login --token=s.abcdef", "vault login --token=[REDACTED]"},
      {"--client-secret \"a b c\"", "--client-secret \"[REDACTED]\""},
      {R"({"api_key": "k-123", "name": "x"})", R"({"api_key": "[REDACTED]", "name": "x"})"},
      {R"({\"password\":\"p\\\"q\"})", R"({\"password\":\"[REDACTED]\"})"},
      {R"({\"token\":\"plain\"})", R"({\"token\":\"[REDACTED]\"})"},
      {"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key = [REDACTED]"},
      {"clientSecret: abc;def&3 next", "clientSecret: [REDACTED] next"},
      {"db.password=x&user=y", "db.password=[REDACTED]"},
      {"postgres://admin:pa55w0rd@db:5432/app", "postgres://admin:[REDACTED]@db:5432/app"},
      {"https://user:tok@github.com/x.git", "https://user:[REDACTED]@github.com/x.git"},
      {"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\nafter",
       "[REDACTED]\nafter"},
      {"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "[REDACTED]"},
      {"export PGPASSWORD=s3cr3t; psql", "export PGPASSWORD=[REDACTED] psql"},
      {"MYSQL_PWD=hunter2 mysql -u root", "MYSQL_PWD=[REDACTED] mysql -u root"},
      {"mysql -u root -phunter2 -h db app", "mysql -u root -p[REDACTED] -h db app"},
      {"/usr/bin/mysqldump -uroot -p'a b' app", "/usr/bin/mysqldump -uroot -p'[REDACTED]' app"},
      {"mariadb-dump -pX1 db && mysql -p app", "mariadb-dump -p[REDACTED] db && mysql -p app"},
      {"sshpass -p hunter2 ssh root@pve1", "sshpass -p [REDACTED] ssh root@pve1"},
      {"redis-cli -h cache -a s3cret ping", "redis-cli -h cache -a [REDACTED] ping"},
      {"redis-cli -aS3cret info", "redis-cli -a[REDACTED] info"},
      {"CREATE USER 'app'@'%' IDENTIFIED BY 'pw1';",
       "CREATE USER 'app'@'%' IDENTIFIED BY '[REDACTED]';"},
      {"ALTER ROLE app WITH PASSWORD 'pw2'", "ALTER ROLE app WITH PASSWORD '[REDACTED]'"},
      {R"({"password":"x"})", R"({"password":"[REDACTED]"})"},
      {"mysql://root:pw3@db/app", "mysql://root:[REDACTED]@db/app"},
  };
  for (const Vector& v : vectors) {
    INFO(v.in);
    CHECK(RedactSecrets(v.in) == v.out);
  }
}

TEST_CASE("ordinary operations text is left alone", "[core][auth][redact]") {
  const std::vector<std::string> untouched = {
      "",
      "plan_drift: resource vm:101 changed since approval",
      "resource_remediation_locked: vm:101 never_auto_remediate",
      "Restart vm:101 (graceful) — kernel patch",
      "max_tokens=2048 input_tokens: 512",
      "the password is wrong: try again",
      "tool pulse_query and pulse_investigate_resource ran",
      "risk-assessment task-force skip-cache",
      "https://example.com:8443/path?q=1",
      "ssh root@pve1",
      "mailto:ops@example.com",
      "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
      "bearer of bad news",
      "AKIA is a prefix; AKIASHORT",
      "sk-learn is a library",
      "mkdir -p /srv/data && ssh -p 2222 pve1 && docker run -p8080:80 nginx",
      "mysql -u root -p app",
      "mysql -h db -P3306 app; ls -phunter",
      "PWD=/root OLDPWD=/home",
      "the user was identified by the badge",
      std::string("NUL") + '\0' + "byte and \xFF bytes stay",
  };
  for (const std::string& text : untouched) {
    INFO(text);
    CHECK(RedactSecrets(text) == text);
  }
}

TEST_CASE("redaction is idempotent", "[core][auth][redact]") {
  const std::vector<std::string> inputs = {
      "Authorization: Bearer abc.def-ghi_jkl password=x --token y " + kPulseToken,
      "postgres://a:b@h/db sk-proj-abcdefghijklmnop1234 AKIAIOSFODNN7EXAMPLE",
      R"({"secret":"s","token":"t"})",
  };
  for (const std::string& in : inputs) {
    const std::string once = RedactSecrets(in);
    INFO(once);
    CHECK(once != in);
    CHECK(RedactSecrets(once) == once);
  }
}

TEST_CASE("pathological input is handled in one pass", "[core][auth][redact]") {
  // Each would be quadratic for a scanner that restarts at every position.
  std::string dashes;
  for (int i = 0; i < (1 << 18); ++i) {
    dashes += "a-";
  }
  CHECK(RedactSecrets(dashes) == dashes);
  const std::string urls(1 << 20, ':');
  CHECK(RedactSecrets(urls) == urls);
  std::string begins;
  for (int i = 0; i < 20000; ++i) {
    begins += "-----BEGIN ";
  }
  CHECK(RedactSecrets(begins) == begins);
  std::string flags = "mysql";
  for (int i = 0; i < (1 << 17); ++i) {
    flags += " -p";
  }
  CHECK(RedactSecrets(flags) == flags);
  std::string commands;
  for (int i = 0; i < (1 << 16); ++i) {
    commands += "redis-cli identified by ";
  }
  CHECK(RedactSecrets(commands) == commands);
  const std::string long_value = "password=" + std::string(1 << 20, 'p') + " tail";
  CHECK(RedactSecrets(long_value) == "password=[REDACTED] tail");
}

TEST_CASE("names that hold secrets are recognised", "[core][auth][redact]") {
  for (const char* name : {"password", "DB_PASSWORD", "MYSQL_PWD", "api_key", "X-API-Key", "apiKey",
                           "--client-secret", "token", "auth_token", "aws_secret_access_key",
                           "Authorization", "private_key", "credentials"}) {
    INFO(name);
    CHECK(NamesSecret(name));
  }
  for (const char* name : {"", "user", "max_tokens", "resource_id", "plan_hash", "key_id",
                           "secrets_count", "author", "PWD", "OLDPWD"}) {
    INFO(name);
    CHECK_FALSE(NamesSecret(name));
  }
}

}  // namespace
}  // namespace pulse::core
