#!/bin/sh
# bench/collate.sh: collate against DuckDB, Miller and jq on the same JSON lines: a median per
# (name, label) group over LINES sample lines (default 1,000,000) spread over 100 cells, of
# SHAPE `real` (as the tools write them: runs of 100 samples with a begin and a summary,
# tags, nested info, full-precision values) or `simple` (one run, six-digit values).
# Runs collate, duckdb, mlr and jq alternately (A B C D A B C D ...) for ROUNDS rounds, checks
# that they agree on every median, and prints each tool's median wall time, collate's peak
# memory, and the ratios of the medians.
#
# Usage: bench/collate.sh [LINES] [ROUNDS] [SHAPE]      (from the workspace root)
#   NO_JQ=1 skips jq (slow: it holds every line in memory). DuckDB runs from a venv with the
#   duckdb package in the cache directory, made on first use (skipped where it cannot be).
set -eu

LINES=${1:-1000000}
ROUNDS=${2:-3}
SHAPE=${3:-real}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/collate
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collate-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
. "$ROOT/bench/common.sh"

for tool in mlr awk; do
    command -v "$tool" >/dev/null 2>&1 || { echo "skipped: $tool not installed" >&2; exit 0; }
done
use_jq=1
if [ -n "${NO_JQ:-}" ] || ! command -v jq >/dev/null 2>&1; then use_jq=0; fi
use_duck=1
DUCK_PY=$(duckdb_python) || use_duck=0

(cd "$ROOT" && cargo build --release -q -p collate)

# 100 cells: 10 names x 10 labels, as bench/run's collate case makes them (bench/common.sh).
collate_lines "$SHAPE" "$LINES" > "$WORK/in.jsonl"
case $SHAPE in simple) KEYS=wall_s ;; *) KEYS=rtt_s,wall_s ;; esac
echo "input: $LINES $SHAPE lines, $(wc -c < "$WORK/in.jsonl") bytes, 100 cells" >&2

now() { date +%s.%N; }

run_collate() { "$BIN" -f json "$WORK/in.jsonl" > "$WORK/collate.json"; }
# Miller needs the nested values flattened to see values.wall_s; -i interpolates the
# median like collate (R's type 7: the mean of the middle two of an even count).
run_mlr() {
    mlr --ijsonl --ojsonl flatten then stats1 -i -a median -f "$(echo "$KEYS" | sed 's/^/values./; s/,/,values./g')" -g name,label "$WORK/in.jsonl" > "$WORK/mlr.jsonl"
}
run_duckdb() { "$DUCK_PY" "$ROOT/bench/duckdb_medians.py" "$WORK/in.jsonl" "$KEYS" > "$WORK/duckdb.csv"; }
run_jq() {
    jq -n -r 'reduce (inputs | select(.type == "sample")) as $r ({}; .[$r.name + "," + $r.label] += [$r.values.wall_s // $r.values.rtt_s])
      | to_entries[] | (.value | sort) as $v | ($v | length) as $n
      | "\(.key),\(if $n % 2 == 1 then $v[($n - 1) / 2] else ($v[$n / 2 - 1] + $v[$n / 2]) / 2 end)"' \
      "$WORK/in.jsonl" > "$WORK/jq.csv"
}

: > "$WORK/t.collate"; : > "$WORK/t.duckdb"; : > "$WORK/t.mlr"; : > "$WORK/t.jq"
round=1
while [ "$round" -le "$ROUNDS" ]; do
    for tool in collate duckdb mlr jq; do
        if [ "$tool" = jq ] && [ "$use_jq" = 0 ]; then continue; fi
        if [ "$tool" = duckdb ] && [ "$use_duck" = 0 ]; then continue; fi
        t0=$(now); "run_$tool"; t1=$(now)
        echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >> "$WORK/t.$tool"
        echo "round $round: $tool $(tail -n 1 "$WORK/t.$tool") s" >&2
    done
    round=$((round + 1))
done

# The same medians from all of them (collate's JSON keeps full precision).
jq -r '.columns as $c | .rows[] | .dims.name as $n | .cells | to_entries[]
       | "\($n),\($c[.key].key),\(.value.value)"' "$WORK/collate.json" | sort > "$WORK/c.sorted"
jq -r '"\(.name),\(.label),\(to_entries | map(select(.key | endswith("_median"))) | .[0].value)"' "$WORK/mlr.jsonl" | sort > "$WORK/m.sorted"
check() {
    awk -F, 'NR == FNR { want[$1 "," $2] = $3; next }
             { k = $1 "," $2; d = $3 - want[k]; if (d < 0) d = -d; if (!(k in want) || d > 1e-12 * want[k]) bad++ ; n++ }
             END { if (bad || n != 100) { print "MISMATCH: " bad + 0 " of " n " medians differ"; exit 1 } }' "$1" "$2"
}
check "$WORK/c.sorted" "$WORK/m.sorted" && echo "mlr agrees on all 100 medians" >&2
if [ "$use_duck" = 1 ]; then
    sort "$WORK/duckdb.csv" > "$WORK/d.sorted"
    check "$WORK/c.sorted" "$WORK/d.sorted" && echo "duckdb agrees on all 100 medians" >&2
fi
if [ "$use_jq" = 1 ]; then
    sort "$WORK/jq.csv" > "$WORK/j.sorted"
    check "$WORK/c.sorted" "$WORK/j.sorted" && echo "jq agrees on all 100 medians" >&2
fi

mc=$(median "$WORK/t.collate"); mm=$(median "$WORK/t.mlr")
rss=$(/usr/bin/time -f %M "$BIN" -f json "$WORK/in.jsonl" 2>&1 >/dev/null | tail -n 1)
echo "collate: median ${mc} s over $ROUNDS rounds, peak RSS ${rss} KiB for $(wc -c < "$WORK/in.jsonl") bytes of input"
# Paired ratios (each round's mlr time over the same round's collate time) are less
# sensitive to load from other processes that comes and goes between rounds.
paste "$WORK/t.mlr" "$WORK/t.collate" | awk '{ print $1 / $2 }' > "$WORK/r.mlr"
echo "mlr:     median ${mm} s   ratio mlr/collate = $(echo "$mm $mc" | awk '{ printf "%.1f", $1 / $2 }')x (per round: $(awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 }' "$WORK/r.mlr"); median $(median "$WORK/r.mlr" | awk '{ printf "%.1f", $1 }')x)"
if [ "$use_duck" = 1 ]; then
    md=$(median "$WORK/t.duckdb")
    paste "$WORK/t.collate" "$WORK/t.duckdb" | awk '{ print $1 / $2 }' > "$WORK/r.duckdb"
    echo "duckdb:  median ${md} s   ratio collate/duckdb = $(echo "$mc $md" | awk '{ printf "%.2f", $1 / $2 }')x (per round: $(awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 }' "$WORK/r.duckdb"); median $(median "$WORK/r.duckdb" | awk '{ printf "%.2f", $1 }')x)"
fi
if [ "$use_jq" = 1 ]; then
    mj=$(median "$WORK/t.jq")
    paste "$WORK/t.jq" "$WORK/t.collate" | awk '{ print $1 / $2 }' > "$WORK/r.jq"
    echo "jq:      median ${mj} s   ratio jq/collate = $(echo "$mj $mc" | awk '{ printf "%.1f", $1 / $2 }')x (per round median $(median "$WORK/r.jq" | awk '{ printf "%.1f", $1 }')x)"
fi
