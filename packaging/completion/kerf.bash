# bash completion for kerf(1). Commands and flags come from kerf's own help text at completion
# time (`kerf --help`, `kerf COMMAND --help`), so this file never falls behind the program.
_kerf_commands()
{
	"${1:-kerf}" --help 2>/dev/null | awk '
		/^[A-Z][a-z]+: / {
			sub(/^[A-Za-z]+: +/, ""); sub(/ *\(.*/, "")
			if ($0 !~ /[,|]/) { for (i = 1; i <= NF; i++) print $i; next }
			n = split($0, part, /, */)   # "poc run, poc verify": the first word of each part
			for (i = 1; i <= n; i++) { split(part[i], w, " "); print w[1] }
		}' | sort -u
}

_kerf()
{
	local cur prev cmd="" i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--socket | --url | --token | --node) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--socket --url --token --node --json --help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_kerf_commands "${COMP_WORDS[0]}")" -- "$cur"))
		fi
		return
	fi
	case $prev in
	--cwd | --out | --suite | --in | --against | --nodes) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--workload) COMPREPLY=($(compgen -W "training inference dev batch" -- "$cur")); return ;;
	--tier) COMPREPLY=($(compgen -W "high queueable exploratory" -- "$cur")); return ;;
	--route) COMPREPLY=($(compgen -W "whole mig slice mps tslice software hardware both" -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		local flags
		flags=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
		COMPREPLY=($(compgen -W "$flags --help" -- "$cur"))
	fi
}
complete -F _kerf kerf
