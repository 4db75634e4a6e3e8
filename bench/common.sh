# bench/common.sh: the helpers the benchmarks share: the median and the disk scripts'
# alternation (rounds). Sourced by bench/run and by the per-tool scripts bench/*.sh. Only
# definitions: nothing here runs when it is sourced.

# ---------------------------------------------------------------- medians
# median(list): the median of the numbers in the space-separated `list` ("nan" for none); the
# mean of the middle two for an even count.
MEDIAN_AWK='
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	if (n == 0) return "nan"
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
'

# median [FILE]: the median of the numbers in FILE (or on stdin), one a line.
median() {
	awk "$MEDIAN_AWK"'$1 ~ /^[-+0-9.eE]+$/ { l = l " " $1 } END { print median(l) }' ${1+"$1"}
}

# ---------------------------------------------------------------- the disk scripts' alternation
# bench/blkwrite.sh and bench/blkread.sh define `one CASE TOOL` (one timed run, appending a
# line starting "CASE " to $results) and set $rounds.

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
