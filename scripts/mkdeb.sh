#!/usr/bin/env bash
# scripts/mkdeb.sh BUILD [OUT_DIR] - the Debian package kerf_<version>_<arch>.deb from a built
# tree: `cmake --install` into a staging root (cmake/install.cmake has the layout), the runtime
# dependencies from dpkg-shlibdeps (the Debian packages of the libraries the binaries link),
# packaging/deb/{postinst,prerm,postrm}, /etc/kerf/kerfd.yaml a conffile. Prints the path.
set -euo pipefail
build=${1:?usage: mkdeb.sh BUILD [OUT_DIR]}
out=${2:-$build}
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=$("$build/bin/kerfd" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
DESTDIR=$root cmake --install "$build" --prefix /usr >/dev/null
# Debian's man pages are compressed
find "$root/usr/share/man" -type f ! -name '*.gz' -exec gzip -9n {} +
# dpkg-shlibdeps wants a debian/control; the private dir's libraries are ours
mkdir -p "$work/debian" "$root/DEBIAN"
printf 'Source: kerf\n\nPackage: kerf\nArchitecture: any\n' >"$work/debian/control"
elfs=()
while IFS= read -r f; do
	[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] && elfs+=("$f")
done < <(find "$root/usr/bin" "$root/usr/lib/kerf" -type f)
# (spank_kerf.so takes its slurm_* symbols from slurmd at load time: no libslurm dependency)
deps=$(cd "$work" && dpkg-shlibdeps -O --ignore-missing-info -l"$root/usr/lib/kerf" \
	"${elfs[@]}" 2>"$work/shlibdeps.err" | sed -n 's/^shlibs:Depends=//p')
[ -n "$deps" ] || { cat "$work/shlibdeps.err" >&2; echo "mkdeb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size=$(du -sk "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CTL
Package: kerf
Version: $ver
Architecture: $arch
Maintainer: kerf developers <kerf@localhost>
Installed-Size: $size
Depends: $deps, adduser
Recommends: systemd
Suggests: slurmd, podman, prometheus
Section: admin
Priority: optional
Homepage: https://example.invalid/kerf
Description: GPU sharing and partitioning for NVIDIA GPUs
 kerf lets many models, experiments and inference services share NVIDIA GPUs: software
 slices with an enforced memory cap and compute share (a CUDA interposition library), MIG
 instances created and reclaimed on demand, whole GPUs and time-slicing, under one
 scheduler with tenants, quotas, preemption, metrics and a tamper-evident audit.
 On a machine without a GPU kerfd runs a simulated node.
CTL
echo /etc/kerf/kerfd.yaml >"$root/DEBIAN/conffiles"
install -m 0755 "$src/packaging/deb/postinst" "$src/packaging/deb/prerm" \
	"$src/packaging/deb/postrm" "$root/DEBIAN/"
deb="$out/kerf_${ver}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
