#!/usr/bin/env bash
# test_completion.sh KERF - the bash completion offers every command `kerf --help` names, the
# flags of `kerf COMMAND --help`, and the values of enumerated flags; zsh's wrapper loads it.
set -euo pipefail
kerf=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=completion/kerf.bash
source "$here/completion/kerf.bash"
fail() { echo "FAIL: $*" >&2; exit 1; }
complete_words() { COMP_WORDS=("$kerf" "$@"); COMP_CWORD=$(($# )); COMPREPLY=(); _kerf; echo "${COMPREPLY[*]}"; }
cmds=$(complete_words "")
for c in submit run ls show cancel logs explain gpus units top tenants tenant quota audit cost \
	export version slurm cluster replay poc; do
	[[ " $cmds " == *" $c "* ]] || fail "command '$c' not offered (got: $cmds)"
done
[[ $(complete_words sub) == submit ]] || fail "'sub' does not complete to submit"
[[ $(complete_words submit --mem) == --memory ]] || fail "'submit --mem' does not complete to --memory"
[[ $(complete_words submit --tier "") == "high queueable exploratory" ]] || fail "--tier values"
[[ " $(complete_words --) " == *" --version "* ]] || fail "global --version not offered"
# every flag a command's help names is offered
for c in submit ls cancel; do
	want=$("$kerf" "$c" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
	got=" $(complete_words "$c" --) "
	for f in $want; do [[ $got == *" $f "* ]] || fail "kerf $c: $f not offered"; done
done
if command -v zsh >/dev/null; then
	zsh -fc "fpath=($here/completion \$fpath); autoload -U compinit && compinit -u; source $here/completion/_kerf; (( \$+functions[_kerf] ))" ||
		fail "zsh: _kerf not defined by _kerf"
fi
echo "pkg_completion: ok"
