#!/usr/bin/env bash
# Installs the Debian packages meshscope builds and tests with. Idempotent: installs only what is
# missing, and runs apt-get update only when something is. CUDA is not installed here: the build
# uses /usr/local/cuda when it exists and builds the CPU-only parts otherwise.
# openssh-client: Open MPI's mpirun looks for an ssh agent even to start processes on this host.
set -euo pipefail

packages=(
  build-essential cmake git pkg-config ccache
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev zlib1g-dev libsqlite3-dev
  libimgui-dev libglfw3-dev libgl-dev libgl1-mesa-dri xvfb xauth
  clang clang-format libclang-rt-14-dev
  libopenmpi-dev openmpi-bin openssh-client
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup-deps: need root to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
