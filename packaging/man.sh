#!/usr/bin/env bash
# packaging/man.sh BIN_DIR OUT_DIR - kerf's man pages, generated, never written by hand:
#   kerf(1), kerfd(8), kerf-sim(1), kerf-load(1) by help2man from each program's own --help and
#   --version (the one help text the programs print); kerfd.yaml(5) from docs/DAEMON.md's
#   "Configuration reference" (the one configuration reference).
set -euo pipefail
bin=$1
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
command -v help2man >/dev/null || { echo "man.sh: help2man missing (scripts/deps.sh installs it)" >&2; exit 1; }
mkdir -p "$out/man1" "$out/man5" "$out/man8"
h2m() { # SECTION PROGRAM "one-line description"
	help2man -N -s "$1" -n "$3" -o "$out/man$1/$2.$1" "$bin/$2"
}
# kerf(1) gets a COMMANDS section: each command's own --help, verbatim
cmds=$(source "$src/packaging/completion/kerf.bash" && _kerf_commands "$bin/kerf")
inc=$(mktemp)
trap 'rm -f "$inc"' EXIT
{
	echo "[COMMANDS]"
	for c in $cmds; do
		echo ".SS $c"
		echo ".nf"
		"$bin/kerf" "$c" --help 2>&1 | sed 's/\\/\\e/g; s/^[.\x27]/\\\&&/'
		echo ".fi"
	done
} >"$inc"
help2man -N -s 1 -n "submit, watch and explain GPU tasks on a kerf node" --include "$inc" \
	-o "$out/man1/kerf.1" "$bin/kerf"
h2m 8 kerfd "the kerf node daemon: GPU sharing, quotas, slices and MIG"
h2m 1 kerf-sim "create and drive a simulated NVIDIA GPU node"
h2m 1 kerf-load "driver-API workloads for kerf's acceptance tests"

# kerfd.yaml(5): markdown subset -> roff (paragraphs, `code`, **bold**, tables as tagged lists)
ver=$("$bin/kerfd" --version | awk '{print $2}')
awk -v ver="$ver" '
function inline(s) {
	gsub(/\\/, "\\e", s)
	while (match(s, /`[^`]*`/)) s = substr(s, 1, RSTART - 1) "\\fB" substr(s, RSTART + 1, RLENGTH - 2) "\\fR" substr(s, RSTART + RLENGTH)
	while (match(s, /\*\*[^*]*\*\*/)) s = substr(s, 1, RSTART - 1) "\\fB" substr(s, RSTART + 2, RLENGTH - 4) "\\fR" substr(s, RSTART + RLENGTH)
	sub(/^[.\047]/, "\\\\\\&&", s)
	return s
}
BEGIN {
	print ".TH KERFD.YAML 5 \"\" \"kerf " ver "\" \"File Formats\""
	print ".SH NAME\nkerfd.yaml \\- the configuration file of kerfd(8)"
	print ".SH SYNOPSIS\n/etc/kerf/kerfd.yaml\n.PP\n\\fBkerfd \\-\\-check\\-config \\-c\\fR \\fIFILE\\fR"
	print ".SH DESCRIPTION"
}
/^## Configuration reference/ { on = 1; next }
on && /^## / { flush(); exit }
!on { next }
/^\|[-| ]*\|$/ { next }
/^\| key \|/ { flush(); print ".SH KEYS"; next }
/^\|/ {
	flush()
	n = split($0, c, /[ ]*\|[ ]*/)
	print ".TP\n" inline(c[2]) "  (default: " inline(c[3]) ")"
	print inline(c[4])
	next
}
function flush() { if (para != "") print inline(para); para = "" }
/^### / { flush(); print ".SS " inline(substr($0, 5)); next }
/^$/ { flush(); print ".PP"; next }
/^- / { flush(); print ".IP \\(bu 2"; para = substr($0, 3); next }
{ para = para == "" ? $0 : para " " $0; next }
END { flush(); print ".SH SEE ALSO\nkerfd(8), kerf(1); /usr/share/doc/kerf/DAEMON.md" }
' "$src/docs/DAEMON.md" >"$out/man5/kerfd.yaml.5"
