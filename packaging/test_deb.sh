#!/usr/bin/env bash
# test_deb.sh BUILD - `make deb`'s package, installed as far as this machine allows: built by
# scripts/mkdeb.sh; its file list (private library dir, nothing beside a real driver's
# libraries, man pages, completion, unit, conffile); installed with dpkg into a scratch root
# (--root, maintainer scripts run chrootless and do nothing there: DPKG_ROOT); the unit checked
# by systemd-analyze verify; the INSTALLED kerfd started on a simulated node, where it must find
# the shim and the simulated libraries in /usr/lib/kerf and enforce a slice; then removed and
# purged by dpkg.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d /tmp/kerf-deb.XXXXXX)
kpid=
cleanup() {
	[ -n "$kpid" ] && kill "$kpid" 2>/dev/null && wait "$kpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
chmod 755 "$tmp" # the tasks' uid walks into the state dir below

deb=$("$src/scripts/mkdeb.sh" "$build" "$tmp")
[ -f "$deb" ] || fail "mkdeb.sh made no package"
ver=$("$build/bin/kerfd" --version | awk '{print $2}')
[ "$(dpkg-deb -f "$deb" Version)" = "$ver" ] || fail "package version is not kerfd's ($ver)"
dep=$(dpkg-deb -f "$deb" Depends)
for d in libsqlite3-0 libjansson4 libmicrohttpd12 libsodium23 libyaml-0-2 libarchive13; do
	[[ $dep == *"$d"* ]] || fail "Depends misses $d: $dep"
done
list=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/kerf ./usr/bin/kerfd ./usr/bin/kerf-supervise ./usr/bin/kerf-sim \
	./usr/bin/kerf-load ./usr/lib/kerf/libkerf-cuda.so ./usr/lib/kerf/libcuda.so.1 \
	./usr/lib/kerf/libnvidia-ml.so.1 ./etc/kerf/kerfd.yaml ./lib/systemd/system/kerfd.service \
	./usr/share/man/man1/kerf.1.gz ./usr/share/man/man8/kerfd.8.gz \
	./usr/share/man/man5/kerfd.yaml.5.gz ./usr/share/man/man1/kerf-sim.1.gz \
	./usr/share/bash-completion/completions/kerf ./usr/share/zsh/vendor-completions/_kerf \
	./usr/share/doc/kerf/DAEMON.md ./usr/share/kerf/examples/fleet-8xh200.yaml; do
	grep -qx -- "$f" <<<"$list" || fail "$f not in the package"
done
# the simulated NVIDIA libraries never where the loader looks for the real ones
if grep -v '^\./usr/lib/kerf/' <<<"$list" | grep -E '/lib(cuda|nvidia-ml)\.so'; then
	fail "a simulated NVIDIA library outside /usr/lib/kerf"
fi
[ "$(dpkg-deb -I "$deb" conffiles)" = /etc/kerf/kerfd.yaml ] || fail "kerfd.yaml is not a conffile"

# install into a scratch root
r=$tmp/root
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers"
touch "$r/var/lib/dpkg/status"
dpkg --root="$r" --log=/dev/null --force-script-chrootless --force-depends -i "$deb" \
	>"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i into $r"; }
dpkg --root="$r" -s kerf | grep -q '^Status: install ok installed' || fail "dpkg does not list kerf installed"
[ -x "$r/usr/bin/kerfd" ] && [ -f "$r/usr/lib/kerf/libkerf-cuda.so" ] || fail "files missing after dpkg -i"
[ "$("$r/usr/bin/kerf" --version)" = "kerf $ver" ] || fail "kerf --version"
for b in kerf-sim kerf-load kerf-supervise; do
	[ "$("$r/usr/bin/$b" --version)" = "$b $ver" ] || fail "$b --version"
done
man -l "$r/usr/share/man/man5/kerfd.yaml.5.gz" 2>/dev/null | grep -q state_dir ||
	zcat "$r/usr/share/man/man5/kerfd.yaml.5.gz" | grep -q state_dir || fail "kerfd.yaml(5) lacks the keys"
# the shipped config is valid (its paths point into /usr/share: rebase them on the scratch root)
sed "s|/usr/share/|$r/usr/share/|" "$r/etc/kerf/kerfd.yaml" >"$tmp/kerfd.yaml"
"$r/usr/bin/kerfd" --check-config -c "$tmp/kerfd.yaml" >/dev/null || fail "the packaged kerfd.yaml is refused"
# the unit (its ExecStart pointed at the scratch root: the host has no /usr/bin/kerfd)
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$tmp/unit"
	sed "s|/usr/bin/kerfd|$r/usr/bin/kerfd|; s|/etc/kerf/|$tmp/|" \
		"$r/lib/systemd/system/kerfd.service" >"$tmp/unit/kerfd.service"
	out=$(systemd-analyze verify --man=no "$tmp/unit/kerfd.service" 2>&1) ||
		fail "systemd-analyze verify: $out"
	[ -z "$out" ] || fail "systemd-analyze verify complains: $out"
else
	echo "pkg_deb: no systemd-analyze here: unit not verified"
fi

# the installed kerfd, on a simulated node: the shim and the simulated libraries from
# /usr/lib/kerf, a slice task enforced
# (the packaged config, rebased, with one tenant)
sock=$tmp/kerfd.sock
printf 'tenants:\n  - name: pkgtest\n' | cat "$tmp/kerfd.yaml" - >"$tmp/kerfd-run.yaml"
"$r/usr/bin/kerfd" -c "$tmp/kerfd-run.yaml" --simulated --socket "$sock" --state-dir "$tmp/state" \
	>"$tmp/kerfd.log" 2>&1 &
kpid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { cat "$tmp/kerfd.log"; fail "installed kerfd did not start"; }
cmp -s "$r/usr/lib/kerf/libkerf-cuda.so" "$tmp/state/lib/libkerf-cuda.so" ||
	fail "kerfd did not stage the installed shim (/usr/lib/kerf)"
cmp -s "$r/usr/lib/kerf/libcuda.so.1" "$tmp/state/lib/libcuda.so.1" ||
	fail "kerfd did not stage the installed simulated libcuda"
grep -q "not loaded" "$tmp/kerfd.log" && { cat "$tmp/kerfd.log"; fail "installed kerfd did not load the simulated NVML"; }
out=$("$r/usr/bin/kerf" --socket "$sock" run --tenant pkgtest --route slice --memory 2GiB --compute 30 -- \
	"$r/usr/bin/kerf-load" probe --window-ms 300 --warmup-ms 100 2>&1) || { echo "$out"; cat "$tmp/kerfd.log"; fail "slice task failed"; }
total=$(grep -o '"memory_total":[0-9]*' <<<"$out" | head -1 | cut -d: -f2)
[ "$total" = $((2 << 30)) ] || { echo "$out"; fail "probe saw memory_total=$total, not the 2GiB cap"; }
kill "$kpid"
wait "$kpid" 2>/dev/null || true
kpid=

dpkg --root="$r" --log=/dev/null --force-script-chrootless -r kerf >/dev/null || fail "dpkg -r"
[ ! -e "$r/usr/bin/kerfd" ] || fail "kerfd left after dpkg -r"
[ -f "$r/etc/kerf/kerfd.yaml" ] || fail "dpkg -r removed the conffile (only purge may)"
dpkg --root="$r" --log=/dev/null --force-script-chrootless -P kerf >/dev/null || fail "dpkg -P"
[ ! -e "$r/etc/kerf/kerfd.yaml" ] || fail "conffile left after purge"
echo "pkg_deb: ok ($(basename "$deb"), $(stat -c %s "$deb") bytes)"
