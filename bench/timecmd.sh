#!/bin/sh
# timecmd against its peers, alternating A B A B in one run, reporting the ratio of medians:
#   1. overhead: the whole of `timecmd -n 200 -- true` vs `hyperfine -N --runs 200 true`
#      (wall time of each invocation / 200 = per-run cost, tool start-up included);
#   2. a single run: `timecmd -- true` vs `/usr/bin/time true`, timed by hyperfine -N;
#   3. accuracy: `sleep 1` as timecmd measures it vs as hyperfine -N measures it.
# Needs: a release build (cargo build --release -p timecmd), hyperfine, GNU time, jq, GNU date.
# Usage: sh bench/timecmd.sh            (ROUNDS=7 SLEEP_ROUNDS=3 TIMECMD=path to override)
set -eu

TIMECMD=${TIMECMD:-target/release/timecmd}
ROUNDS=${ROUNDS:-7}
SLEEP_ROUNDS=${SLEEP_ROUNDS:-3}
for tool in "$TIMECMD" hyperfine /usr/bin/time jq; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench/timecmd.sh: $tool not found (cargo build --release -p timecmd; apt-get install hyperfine time jq)" >&2
		exit 2
	}
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

now_ns() { date +%s%N; }

# The median of the numbers in file $1.
median() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.3f ms", s * 1000 }'; }
us() { awk -v s="$1" 'BEGIN { printf "%.1f us", s * 1e6 }'; }

echo "machine: $(nproc) CPUs, $(uname -r); timecmd $("$TIMECMD" --version | cut -d' ' -f2), $(hyperfine --version)"

# 1. Overhead of 200 runs of true, whole invocations.
: >"$tmp/a1"
: >"$tmp/b1"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	t0=$(now_ns)
	"$TIMECMD" -q -o /dev/null --output null -n 200 -- true
	t1=$(now_ns)
	hyperfine -N --runs 200 --output null true >/dev/null 2>&1
	t2=$(now_ns)
	awk -v d="$((t1 - t0))" 'BEGIN { print d / 200 / 1e9 }' >>"$tmp/a1"
	awk -v d="$((t2 - t1))" 'BEGIN { print d / 200 / 1e9 }' >>"$tmp/b1"
	i=$((i + 1))
done
a=$(median "$tmp/a1")
b=$(median "$tmp/b1")
echo "1. per-run cost, 200 runs of true ($ROUNDS rounds, A B A B):"
echo "   timecmd -n 200 -- true:        $(us "$a") per run"
echo "   hyperfine -N --runs 200 true:  $(us "$b") per run"
echo "   ratio timecmd/hyperfine:       $(ratio "$a" "$b")   (below 1: timecmd costs less)"

# 2. One run of true under timecmd and under GNU time, each timed by hyperfine -N.
: >"$tmp/a2"
: >"$tmp/b2"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	hyperfine -N --runs 30 --warmup 3 --export-json "$tmp/h.json" \
		"$TIMECMD -q -o /dev/null -- true" >/dev/null 2>&1
	jq '.results[0].median' "$tmp/h.json" >>"$tmp/a2"
	hyperfine -N --runs 30 --warmup 3 --export-json "$tmp/h.json" \
		"/usr/bin/time -o /dev/null true" >/dev/null 2>&1
	jq '.results[0].median' "$tmp/h.json" >>"$tmp/b2"
	i=$((i + 1))
done
a=$(median "$tmp/a2")
b=$(median "$tmp/b2")
echo "2. a single run of true, whole invocation timed by hyperfine -N ($ROUNDS rounds x 30 runs):"
echo "   timecmd -- true:          $(ms "$a")"
echo "   /usr/bin/time true:       $(ms "$b")"
echo "   ratio timecmd/GNU time:   $(ratio "$a" "$b")   (below 1: timecmd costs less)"

# 3. sleep 1 as each tool measures it.
: >"$tmp/a3"
: >"$tmp/b3"
i=0
while [ "$i" -lt "$SLEEP_ROUNDS" ]; do
	"$TIMECMD" -q -o - --output null -n 3 -- sleep 1 |
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
