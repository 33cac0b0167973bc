#!/usr/bin/env bash
# deps.sh - install kerf's build and test dependencies from Debian packages (idempotent, quiet).
set -euo pipefail
PKGS=(build-essential cmake pkg-config clang-format clang libclang-rt-14-dev
      libcmocka-dev libjansson-dev libyaml-dev libsqlite3-dev libsodium-dev libmicrohttpd-dev
      libcurl4-openssl-dev linux-libc-dev prometheus chromium help2man
      libarchive-dev podman runc busybox-static
      slurmctld slurmd slurm-client munge libslurm-dev)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root or install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
