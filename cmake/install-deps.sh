#!/usr/bin/env bash
# Installs every Debian 12 package that building, testing and running Pulse Core needs.
# Idempotent: when everything is already installed it changes nothing and exits quickly.
# Run as root (or through sudo) on Debian 12 (bookworm).
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential g++ clang lld cmake ninja-build pkg-config git curl ca-certificates
  # libraries (cmake/PulseDependencies.cmake finds each one)
  libabsl-dev rapidjson-dev libfmt-dev libcpp-httplib-dev libsodium-dev
  libsqlitecpp-dev libsqlite3-dev catch2 libcli11-dev libssl-dev zlib1g-dev libbrotli-dev
  libcurl4-openssl-dev
  # Boost.Beast/Asio, header-only: the HTTP server transport (docs/architecture.md)
  libboost-dev
  # the HTTP client tests make their TLS certificates with the openssl command
  openssl
  # the email notification tests' SMTP server (tests/e2e/notifications/smtp_sink.py)
  python3
  # the alert intake's tests send real alerts through Prometheus Alertmanager
  # (tests/e2e/notifications/alertmanager_e2e_test.cc)
  prometheus-alertmanager
  # benchmarks and sanitizer runtimes
  libbenchmark-dev libclang-rt-14-dev llvm-14
  # the model checker of the safety kernel's model (tests/model, docs/model.md)
  spin
  # cmake/lint.sh: the format check (.clang-format) and clang-tidy (.clang-tidy), version 14
  clang-format clang-tidy
  # the Docker adapter's tests start a private dockerd and import a static busybox as their image
  docker.io busybox-static
  # the man pages of the apps, generated from their --help at build time (apps/CMakeLists.txt)
  help2man
  # pulse-cli's zsh and fish completion scripts are parsed by their shells in the tests
  zsh fish
  # the operator console's browser suite drives Debian's chromium through playwright-core
  # (tests/console); no test tool downloads a browser of its own
  chromium
)

# Node.js and npm install and run the interop tests' npm tools (cmake/install-node-tools.sh
# pins the runtime those run on). A node and npm already on PATH are kept as they are: Debian's
# npm package conflicts with other vendors' nodejs packages, which bundle their own npm.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo "$0" "$@"
  fi
  echo "install-deps: missing packages (${missing[*]}) and not running as root" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
