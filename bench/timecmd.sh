#!/bin/sh
# timecmd against its peers, alternating A B A B in one run, reporting the ratio of medians:
#   1. overhead: the whole of `timecmd -r 200 -- true` vs `hyperfine -N --runs 200 true`
#      (each invocation timed by an outer hyperfine -N, / 200 = per-run cost, start-up included);
#   2. a single run: `timecmd -- true` vs `/usr/bin/time true`, timed by hyperfine -N;
#   wall is the median elapsed time, cpu the mean user+sys time of the invocation and its
#   children (the `true`s included, the same in A and B): cpu suffers less from a busy machine;
#   3. accuracy: `sleep 1` as timecmd measures it vs as hyperfine -N measures it.
# Needs: a release build (cargo build --release -p timecmd), hyperfine, GNU time, jq, GNU date.
# Usage: sh bench/timecmd.sh            (ROUNDS=9 SLEEP_ROUNDS=3 TIMECMD=path to override)
set -eu

TIMECMD=${TIMECMD:-target/release/timecmd}
ROUNDS=${ROUNDS:-9}
SLEEP_ROUNDS=${SLEEP_ROUNDS:-3}
for tool in "$TIMECMD" hyperfine /usr/bin/time jq; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench/timecmd.sh: $tool not found (cargo build --release -p timecmd; apt-get install hyperfine time jq)" >&2
		exit 2
	}
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

. "$(dirname "$0")/common.sh"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.3f ms", s * 1000 }'; }
us() { awk -v s="$1" 'BEGIN { printf "%.1f us", s * 1e6 }'; }

echo "machine: $(nproc) CPUs, $(uname -r); timecmd $("$TIMECMD" --version | cut -d' ' -f2), $(hyperfine --version)"

# hyperfine -N timing of command $2 ($3 runs): appends "median_wall_s cpu_s" to file $1.
hf() {
	hyperfine -N --runs "$3" --warmup 1 --export-json "$tmp/h.json" "$2" >/dev/null 2>&1
	jq -r '.results[0] | "\(.median) \(.user + .system)"' "$tmp/h.json" >>"$1"
}

# Column $2 of file $1 into file $1.$2.
col() { awk -v c="$2" '{ print $c }' "$1" >"$1.$2"; }

report() { # title, label A, label B, file A, file B, divisor, unit function
	col "$4" 1
	col "$4" 2
	col "$5" 1
	col "$5" 2
	wa=$(median "$4.1")
	wb=$(median "$5.1")
	ca=$(median "$4.2")
	cb=$(median "$5.2")
	echo "$1"
	printf '   %-34s wall %s  cpu %s\n' "$2" "$($7 "$(awk -v x="$wa" -v d="$6" 'BEGIN { print x / d }')")" "$($7 "$(awk -v x="$ca" -v d="$6" 'BEGIN { print x / d }')")"
	printf '   %-34s wall %s  cpu %s\n' "$3" "$($7 "$(awk -v x="$wb" -v d="$6" 'BEGIN { print x / d }')")" "$($7 "$(awk -v x="$cb" -v d="$6" 'BEGIN { print x / d }')")"
	echo "   ratio of medians A/B: wall $(ratio "$wa" "$wb")  cpu $(ratio "$ca" "$cb")   (below 1: timecmd costs less)"
}

# 1. Overhead: whole invocations of 200 runs of true, per run (tool start-up included).
: >"$tmp/a1"
: >"$tmp/b1"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	hf "$tmp/a1" "$TIMECMD -q -o /dev/null --stdout null -r 200 -- true" 3
	hf "$tmp/b1" "hyperfine -N --runs 200 --output null true" 3
	i=$((i + 1))
done
report "1. per-run cost of 200 runs of true ($ROUNDS rounds A B A B, each the median of 3 invocations / 200):" \
	"A timecmd -r 200 -- true" "B hyperfine -N --runs 200 true" "$tmp/a1" "$tmp/b1" 200 us

# 2. One run of true under timecmd and under GNU time.
: >"$tmp/a2"
: >"$tmp/b2"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	hf "$tmp/a2" "$TIMECMD -q -o /dev/null -- true" 30
	hf "$tmp/b2" "/usr/bin/time -o /dev/null true" 30
	i=$((i + 1))
done
report "2. a single run of true, whole invocation ($ROUNDS rounds A B A B, each the median of 30):" \
	"A timecmd -- true" "B /usr/bin/time true" "$tmp/a2" "$tmp/b2" 1 ms

# 3. sleep 1 as each tool measures it.
: >"$tmp/a3"
: >"$tmp/b3"
i=0
while [ "$i" -lt "$SLEEP_ROUNDS" ]; do
	"$TIMECMD" -q -o - --stdout null -r 3 -- sleep 1 |
		jq 'select(.type == "summary").values.wall_median_s' >>"$tmp/a3"
	hyperfine -N --runs 3 --export-json "$tmp/h.json" "sleep 1" >/dev/null 2>&1
	jq '.results[0].median' "$tmp/h.json" >>"$tmp/b3"
	i=$((i + 1))
done
a=$(median "$tmp/a3")
b=$(median "$tmp/b3")
echo "3. sleep 1, median of the tools' own figures ($SLEEP_ROUNDS rounds x 3 runs):"
echo "   timecmd:    $(ms "$a")"
echo "   hyperfine:  $(ms "$b")"
echo "   difference: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%+.3f ms", (a - b) * 1000 }')   (bar: within 3 ms)"
