# bench/rounds.sh: the alternation both disk benchmarks run, sourced by bench/blkwrite.sh and
# bench/blkread.sh. It needs from them: `one CASE TOOL` (one timed run, appending a line
# starting "CASE " to $results) and $rounds.

# case_rounds CASE TOOL...: one untimed warm-up run of each tool, then ROUNDS rounds, the
# order rotated each round (A B C, B C A, C A B, ...) so no tool always goes first after
# another's file was removed (on a VM, the first buffered writer can pay for fresh pages).
case_rounds() {
	c=$1
	shift
	for t in "$@"; do one "$c" "$t"; done
	grep -v "^$c " "$results" >"$results.warm" || true
	cp "$results.warm" "$results"
	rm -f "$results.warm"
	i=0
	while [ "$i" -lt "$rounds" ]; do
		echo "bench: $c round $((i + 1))" >&2
		for t in "$@"; do one "$c" "$t"; done
		first=$1
		shift
		set -- "$@" "$first"
		i=$((i + 1))
	done
}
