#!/usr/bin/env bash
# Debian packages the tests need on a fresh CI machine, installed only when missing (so a
# machine that has them needs neither root nor the network). One line a package, with why;
# add yours below.
set -euo pipefail

PACKAGES=(
  chromium   # the UI's browser tests and bench (playwright-core drives /usr/bin/chromium; browsers cannot be downloaded)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "system packages: all present (${PACKAGES[*]})"
  exit 0
fi
echo "system packages: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
if ! "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  "${sudo_cmd[@]}" apt-get update
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
