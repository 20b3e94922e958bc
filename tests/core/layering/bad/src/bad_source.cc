// Fixture for layering_rejects_violations: every statement below breaks the rule.
#include <chrono>
#include <cstdlib>
void Bad() {
  auto t = std::chrono::system_clock::now();
  auto s = std::chrono::steady_clock::now();
  const char* home = getenv("HOME");
  std::thread worker([] {});
  int r = rand();
  std::cout << "hello";
  throw 42;
}
