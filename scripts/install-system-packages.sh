#!/usr/bin/env bash
# Debian packages the test suites start as real servers. Installs only what is missing, so a
# machine that has them all needs neither root nor the network. Add a line per package, with
# what needs it.
set -euo pipefail

packages=(
  redis-server   # redis step tests: a three-node cluster and a sentinel on spare ports
  redis-tools    # redis-cli: creates that cluster and checks the servers
  openssh-server # ssh step tests: sshd started on a loopback port (executor.ssh.test.ts)
  podman         # container step tests: podman's Docker API (executor.docker.test.ts)
  runc           # podman's runtime here (crun refuses the hybrid cgroup layout)
  busybox-static # the root of the container tests' locally imported image
  chromium       # the UI's browser tests and bench (playwright-core drives /usr/bin/chromium; browsers cannot be downloaded)
)

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi

echo "system packages: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}" || {
  "${sudo_cmd[@]}" apt-get update
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
}
