#!/usr/bin/env bash
# Installs the Debian packages the test suite starts real servers from (sshd, podman, ...),
# only those that are missing, so a machine already set up pays nothing. Add a package to
# PACKAGES with the test that needs it.
set -euo pipefail

PACKAGES=(
  # ssh step tests: sshd started on a loopback port (packages/engine/test/executor.ssh.test.ts)
  openssh-server
  # container step tests: podman's Docker API, its runtime, and a busybox root for the test image
  # (packages/engine/test/executor.docker.test.ts)
  podman
  runc
  busybox-static
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then missing+=("$pkg"); fi
done
if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
echo "== installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  "${as_root[@]}" apt-get update
  "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
