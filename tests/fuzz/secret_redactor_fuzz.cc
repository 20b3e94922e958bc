// Fuzzes the secret redactor (core/auth/secret_redactor.h). The first input byte picks one
// known secret shape (a credential line of a common file or header); the rest is context
// placed before and after that line. Invariants: redaction never crashes and stays bounded,
// valid UTF-8 in gives valid UTF-8 out, the planted secret never survives (it may only appear
// as often as the context itself spelled it), and redacting the context alone is
// deterministic.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/utf8.h"

namespace {

constexpr std::string_view kSecret = "Pl4ntedSecretValue9";
constexpr std::string_view kCephSecret = "AQBvaBFZAAAAABAA9VHgwCgY7uUCX6Gjh8PcUA==";

struct Shape {
  std::string_view before;  // the line up to the secret
  std::string_view after;   // the rest of the line
  bool ceph = false;        // the secret is kCephSecret instead of kSecret
};

constexpr Shape kShapes[] = {
    {"password=", ""},
    {"PGPASSWORD='", "' psql -h db"},
    {"Authorization: Bearer ", ""},
    {"curl -H \"X-API-Token: ", "\" https://pulse"},
    {"mysql -uroot -p", " app"},
    {"postgres://app:", "@db:5432/app"},
    {"root:$6$Zr4x9QmT$", ":19700:0:99999:7:::"},
    {"alice:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$", ":19600::::::"},
    {"psk=\"", "\""},
    {"\tkey = ", "", true},
    {"    client-key-data: ", ""},
    {"    token: ", ""},
    {"machine api.example.com login deploy password ", ""},
    {"db.internal:5432:app:appuser:", ""},
    {"{\"auths\":{\"r.io\":{\"auth\":\"", "\"}}}"},
    {"{\"identitytoken\":\"", "\"}"},
    {"[smtp.example.com]:587 mailer@example.com:", ""},
};

std::size_t Count(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pulse::fuzz::Input input(data, size);
  const Shape& shape = kShapes[input.Byte() % (sizeof(kShapes) / sizeof(kShapes[0]))];
  const std::string_view context = input.Rest();

  const std::string alone = pulse::core::RedactSecrets(context);
  PULSE_FUZZ_CHECK(alone == pulse::core::RedactSecrets(context), "not deterministic");
  PULSE_FUZZ_CHECK(alone.size() <= context.size() + context.size() * 10 + 16,
                   "the output grew without bound");
  if (pulse::core::IsValidUtf8(context)) {
    PULSE_FUZZ_CHECK(pulse::core::IsValidUtf8(alone), "valid UTF-8 became invalid");
  }

  // The secret on a line of its own between two copies of the context.
  const std::string_view secret = shape.ceph ? kCephSecret : kSecret;
  std::string text(context);
  text += "\n";
  text += shape.before;
  text += secret;
  text += shape.after;
  text += "\n";
  text += context;
  const std::string out = pulse::core::RedactSecrets(text);
  PULSE_FUZZ_CHECK(Count(out, secret) <= 2 * Count(context, secret),
                   "a planted secret survived redaction");
  if (pulse::core::IsValidUtf8(text)) {
    PULSE_FUZZ_CHECK(pulse::core::IsValidUtf8(out), "valid UTF-8 became invalid");
  }
  return 0;
}
