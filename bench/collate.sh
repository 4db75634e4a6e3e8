#!/bin/sh
# bench/collate.sh: collate against Miller and jq on the same JSON lines: a median per
# (name, label) group over LINES sample lines (default 1,000,000) spread over 100 cells.
# Runs collate, mlr and jq alternately (A B C A B C ...) for ROUNDS rounds, checks that
# they agree on every median, and prints each tool's median wall time, collate's peak
# memory, and the ratios of the medians.
#
# Usage: bench/collate.sh [LINES] [ROUNDS]      (from the workspace root)
#   NO_JQ=1 skips jq (slow: it holds every line in memory).
set -eu

LINES=${1:-1000000}
ROUNDS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/target/release/collate
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collate-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM

for tool in mlr awk; do
    command -v "$tool" >/dev/null 2>&1 || { echo "skipped: $tool not installed" >&2; exit 0; }
done
use_jq=1
if [ -n "${NO_JQ:-}" ] || ! command -v jq >/dev/null 2>&1; then use_jq=0; fi

(cd "$ROOT" && cargo build --release -q -p collate)

# 100 cells: 10 names x 10 labels, every line a sample as timecmd writes it, then the run's
# summary (status ok: collate counts only runs that finished).
awk -v N="$LINES" 'BEGIN { srand(7); for (i = 0; i < N; i++) { c = i % 100; nm = int(c / 10); lb = c % 10;
 printf "{\"schema\":\"benchmatrix/1\",\"tool\":\"timecmd\",\"version\":\"0.1.0\",\"type\":\"sample\",\"run\":\"0123456789ab\",\"seq\":%d,\"at\":\"2026-11-30T13:00:00.123456Z\",\"host\":\"h%d\",\"label\":\"env%d/disk\",\"name\":\"bench %d\",\"values\":{\"wall_s\":%.6f},\"info\":{\"exit\":0}}\n", i, lb, lb, nm, 1 + nm + rand() }
 printf "{\"schema\":\"benchmatrix/1\",\"tool\":\"timecmd\",\"version\":\"0.1.0\",\"type\":\"summary\",\"run\":\"0123456789ab\",\"seq\":%d,\"at\":\"2026-11-30T13:00:01.000000Z\",\"host\":\"h0\",\"label\":\"env0/disk\",\"name\":\"bench 0\",\"status\":\"ok\",\"headline\":\"wall_median_s\",\"values\":{\"wall_median_s\":1},\"info\":{}}\n", N }' > "$WORK/in.jsonl"
echo "input: $LINES lines, $(wc -c < "$WORK/in.jsonl") bytes, 100 cells" >&2

now() { date +%s.%N; }

run_collate() { "$BIN" -f json "$WORK/in.jsonl" > "$WORK/collate.json"; }
# Miller needs the nested values flattened to see values.wall_s; -i interpolates the
# median like collate (R's type 7: the mean of the middle two of an even count).
run_mlr() { mlr --ijsonl --ocsv flatten then stats1 -i -a median -f values.wall_s -g name,label "$WORK/in.jsonl" > "$WORK/mlr.csv"; }
run_jq() {
    jq -n -r 'reduce (inputs | select(.type == "sample")) as $r ({}; .[$r.name + "," + $r.label] += [$r.values.wall_s])
      | to_entries[] | (.value | sort) as $v | ($v | length) as $n
      | "\(.key),\(if $n % 2 == 1 then $v[($n - 1) / 2] else ($v[$n / 2 - 1] + $v[$n / 2]) / 2 end)"' \
      "$WORK/in.jsonl" > "$WORK/jq.csv"
}

: > "$WORK/t.collate"; : > "$WORK/t.mlr"; : > "$WORK/t.jq"
round=1
while [ "$round" -le "$ROUNDS" ]; do
    for tool in collate mlr jq; do
        if [ "$tool" = jq ] && [ "$use_jq" = 0 ]; then continue; fi
        t0=$(now); "run_$tool"; t1=$(now)
        echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >> "$WORK/t.$tool"
        echo "round $round: $tool $(tail -n 1 "$WORK/t.$tool") s" >&2
    done
    round=$((round + 1))
done

# The same medians from all of them (collate's JSON keeps full precision).
jq -r '.columns as $c | .rows[] | .dims.name as $n | .cells | to_entries[]
       | "\($n),\($c[.key].key),\(.value.value)"' "$WORK/collate.json" | sort > "$WORK/c.sorted"
tail -n +2 "$WORK/mlr.csv" | sort > "$WORK/m.sorted"
check() {
    awk -F, 'NR == FNR { want[$1 "," $2] = $3; next }
             { k = $1 "," $2; d = $3 - want[k]; if (!(k in want) || d > 1e-9 || d < -1e-9) bad++ ; n++ }
             END { if (bad || n != 100) { print "MISMATCH: " bad + 0 " of " n " medians differ"; exit 1 } }' "$1" "$2"
}
check "$WORK/c.sorted" "$WORK/m.sorted" && echo "mlr agrees on all 100 medians" >&2
if [ "$use_jq" = 1 ]; then
    sort "$WORK/jq.csv" > "$WORK/j.sorted"
    check "$WORK/c.sorted" "$WORK/j.sorted" && echo "jq agrees on all 100 medians" >&2
fi

. "$ROOT/bench/common.sh"
mc=$(median "$WORK/t.collate"); mm=$(median "$WORK/t.mlr")
rss=$(/usr/bin/time -f %M "$BIN" -f json "$WORK/in.jsonl" 2>&1 >/dev/null | tail -n 1)
echo "collate: median ${mc} s over $ROUNDS rounds, peak RSS ${rss} KiB for $(wc -c < "$WORK/in.jsonl") bytes of input"
# Paired ratios (each round's mlr time over the same round's collate time) are less
# sensitive to load from other processes that comes and goes between rounds.
paste "$WORK/t.mlr" "$WORK/t.collate" | awk '{ print $1 / $2 }' > "$WORK/r.mlr"
echo "mlr:     median ${mm} s   ratio mlr/collate = $(echo "$mm $mc" | awk '{ printf "%.1f", $1 / $2 }')x (per round: $(awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 }' "$WORK/r.mlr"); median $(median "$WORK/r.mlr" | awk '{ printf "%.1f", $1 }')x)"
if [ "$use_jq" = 1 ]; then
    mj=$(median "$WORK/t.jq")
    paste "$WORK/t.jq" "$WORK/t.collate" | awk '{ print $1 / $2 }' > "$WORK/r.jq"
    echo "jq:      median ${mj} s   ratio jq/collate = $(echo "$mj $mc" | awk '{ printf "%.1f", $1 / $2 }')x (per round median $(median "$WORK/r.jq" | awk '{ printf "%.1f", $1 }')x)"
fi
