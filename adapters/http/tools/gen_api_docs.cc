// pulse-gen-api-docs: writes docs/api.md from the capability manifest (api_docs.h).
//   pulse-gen-api-docs              print the document
//   pulse-gen-api-docs FILE         write it to FILE
//   pulse-gen-api-docs --check FILE exit 1, naming the first differing line, when FILE is stale
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "pulse/adapters/http/api_docs.h"
#include "pulse/core/manifest/capability_manifest.h"

namespace {

int Usage() {
  std::cerr << "usage: pulse-gen-api-docs [--check] [FILE]\n";
  return 2;
}

// 1-based number of the first line where the two texts differ.
std::size_t FirstDifferentLine(const std::string& a, const std::string& b) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) {
      return line;
    }
    if (a[i] == '\n') {
      ++line;
    }
  }
  return line;
}

int Check(const std::string& path, const std::string& expected) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << path
              << " is missing. Generate it with: cmake --build <build-dir> --target "
                 "api-docs\n";
    return 1;
  }
  std::ostringstream actual;
  actual << in.rdbuf();
  if (actual.str() == expected) {
    return 0;
  }
  std::cerr << path << " is stale: it differs from the capability manifest from line "
            << FirstDifferentLine(actual.str(), expected)
            << ". Regenerate it with: cmake --build <build-dir> --target api-docs, and commit "
               "the result.\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (absl::Status s = pulse::core::ValidateManifest(); !s.ok()) {
    std::cerr << "the capability manifest is invalid: " << s.ToString() << "\n";
    return 1;
  }
  const std::string docs = pulse::adapters::http::RenderApiDocs();
  if (argc == 1) {
    std::cout << docs;
    return 0;
  }
  const std::string first = argv[1];
  if (first == "--check") {
    return argc == 3 ? Check(argv[2], docs) : Usage();
  }
  if (argc != 2) {
    return Usage();
  }
  std::ofstream out(first, std::ios::binary | std::ios::trunc);
  out << docs;
  if (!out.flush()) {
    std::cerr << "cannot write " << first << "\n";
    return 1;
  }
  return 0;
}
