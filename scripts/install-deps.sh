#!/usr/bin/env bash
# Installs the Debian packages the build and tests need. Idempotent: when every package is
# already present it only runs dpkg-query and returns in well under a second.
#   scripts/install-deps.sh          build + test dependencies
#   scripts/install-deps.sh --fuzz   also clang-19 and its libFuzzer runtime
set -euo pipefail

packages=(
  cmake ninja-build ccache g++
  libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev  # JSON written by the report, read by the tests
  libzip-dev          # the zip container of .npz files
  libcli11-dev        # the retarget command line's parser
  zlib1g-dev llvm-19-tools llvm-19-dev   # llvm-19-dev: the CPU and GPU code generators
  libsystemc-dev  # the accelerator simulator
  libeigen3-dev   # CPU backend: GEMM alternative measured against our own micro-kernel
  libopenblas-dev # the GEMM baseline of the CPU benchmarks and tests
  graphviz libjs-chart.js chromium   # report --html: graph layout, charts, and its headless test
  python3-venv    # scripts/setup-python.sh: the tests' own Python with pinned packages
  python3-dev     # the Python package's extension (tools/python) compiles against its headers
  valgrind        # bench/sim_speed.sh: callgrind instruction counts
  slurmctld slurmd slurm-client munge parallel  # sweep manifests run on a real cluster
)
if [[ "${1:-}" == "--fuzz" ]]; then
  packages+=(clang-19 libclang-rt-19-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
