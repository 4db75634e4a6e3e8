#!/bin/sh
# bench/fsmeta.sh: fsmeta against bonnie++ -n on one file system, side by side in one run.
#
# Usage: bench/fsmeta.sh [SCRATCH_DIR] [ROUNDS] [K]
#   SCRATCH_DIR  where both tools make their files (default: a new directory under /var/tmp)
#   ROUNDS       rounds, the tools alternating (fsmeta bonnie++, bonnie++ fsmeta, ...) (default 5)
#   K            files in thousands of 1024, bonnie++'s -n K (default 16: 16384 files)
# Environment: FSMETA=path to the binary (default: cargo build --release, then target/release);
#   FSYNC=1 fsyncs every file before close (fsmeta --fsync, bonnie++ -b).
#
# One untimed warm-up run of each, then ROUNDS rounds. bonnie++ runs as `bonnie++ -q -s 0
# -n K:0:0:1 -d DIR` (no block I/O tests, empty files, one directory) and reports six rates:
# sequential create, stat and delete (in name order) and random create, stat and delete.
# fsmeta -n K*1024 creates in name order and stats and unlinks in random orders, so its
# creates_per_s is set against bonnie's sequential create, its stats_per_s against bonnie's
# random stat and its unlinks_per_s against bonnie's random delete. bonnie++ prints +++++
# instead of a rate when a phase took under about half a second: such a round has no figure
# for that phase, and a phase without any is reported as n/a (give a larger K); "timed" says in
# how many rounds bonnie++ timed it. A phase that bonnie++ timed in some rounds only is biased
# against bonnie++ (its fast rounds are the ones left out): trust the rows timed in every
# round, and give a K large enough for that (64 times most phases here). Printed: the
# median of each rate and the ratio fsmeta/bonnie++ of the medians (> 1: fsmeta counts more
# operations a second), and the per-round ratios.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/common.sh"
dir=${1:-}
rounds=${2:-5}
k=${3:-16}
if [ -z "$dir" ]; then
	dir=$(mktemp -d /var/tmp/fsmeta-bench.XXXXXX)
	made_dir=1
else
	mkdir -p "$dir"
	made_dir=0
fi
results=$(mktemp)
cleanup() {
	rm -f "$results" "$results.csv"
	[ "$made_dir" = 1 ] && rmdir "$dir" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

for t in bonnie++ jq awk; do
	command -v "$t" >/dev/null 2>&1 || { echo "bench: $t is needed" >&2; exit 2; }
done
if [ -z "${FSMETA:-}" ]; then
	(cd "$here" && cargo build --release -q -p fsmeta)
	FSMETA=$here/target/release/fsmeta
fi
files=$((k * 1024))
user=""
[ "$(id -u)" = 0 ] && user="-u root"
fs_sync="" bo_sync=""
[ "${FSYNC:-0}" = 1 ] && fs_sync="--fsync" bo_sync="-b"

# run TOOL: one run; records "round tool create stat delete seqstat seqdelete randcreate" (n/a
# where bonnie++ gave +++++; fsmeta has no sequential-order phases).
run() {
	case $1 in
	fsmeta)
		# shellcheck disable=SC2086 # $fs_sync is empty or one option
		out=$("$FSMETA" -q -n "$files" $fs_sync "$dir") || { echo "bench: fsmeta failed" >&2; exit 1; }
		line=$(printf '%s\n' "$out" | jq -r 'select(.type=="summary") | .values |
			"\(.creates_per_s) \(.stats_per_s) \(.unlinks_per_s) n/a n/a n/a"')
		;;
	bonnie++)
		# shellcheck disable=SC2086 # $user and $bo_sync are empty or options
		bonnie++ -q -s 0 -n "$k:0:0:1" -d "$dir" $user $bo_sync >"$results.csv" 2>/dev/null ||
			{ echo "bench: bonnie++ failed" >&2; exit 1; }
		# The CSV (format 1.98, fields from 1): 22 the files in 1024s, 27 29 31 sequential
		# create, stat, delete per second, 33 35 37 random create, stat, delete.
		line=$(awk -F, 'END { n = split("27 35 37 29 31 33", f, " ")
			for (i = 1; i <= n; i++) { v = $f[i]; printf "%s%s", (v ~ /^[0-9.]+$/ ? v : "n/a"), (i < n ? " " : "\n") } }' "$results.csv")
		;;
	esac
	echo "bench: $1 $line" >&2
	[ -z "$warm" ] && echo "$r $1 $line" >>"$results"
	return 0
}

echo "bench: $rounds rounds of $files files on $dir ($(df -PT "$dir" | awk 'NR==2 {print $2 " on " $1}'))${fs_sync:+, fsync each file}" >&2
warm=1
run fsmeta
run bonnie++
warm=""
r=1
set -- fsmeta bonnie++
while [ "$r" -le "$rounds" ]; do
	echo "bench: round $r" >&2
	for t in "$@"; do run "$t"; done
	set -- "$2" "$1"
	r=$((r + 1))
done

awk -v files="$files" "$MEDIAN_AWK"'
function fmt(v) { return v == "n/a" ? "n/a" : sprintf("%.0f", v) }
{
	for (c = 3; c <= 8; c++) if ($c != "n/a") { v[$2, c] = v[$2, c] " " $c; per[$2, c, $1] = $c }
	if ($1 > nr) nr = $1
}
END {
	split("creates stats unlinks", what, " ")
	split("seq-create random-stat random-delete", peer, " ")
	printf "%-9s %14s %14s %-14s %6s %9s  per-round fsmeta/bonnie++, sorted\n", "per s", "fsmeta", "bonnie++", "(bonnie phase)", "timed", "ratio"
	for (i = 1; i <= 3; i++) {
		c = i + 2; f = median(v["fsmeta", c]); b = median(v["bonnie++", c])
		ratio = (f == "n/a" || b == "n/a") ? "n/a" : sprintf("%.3f", f / b)
		line = ""; m = 0
		for (r = 1; r <= nr; r++) if ((("fsmeta", c, r) in per) && (("bonnie++", c, r) in per)) x[++m] = per["fsmeta", c, r] / per["bonnie++", c, r]
		for (p = 2; p <= m; p++) { t = x[p]; for (q = p - 1; q >= 1 && x[q] > t; q--) x[q + 1] = x[q]; x[q + 1] = t }
		for (p = 1; p <= m; p++) line = line sprintf(" %.2f", x[p])
		timed = split(v["bonnie++", c], junk, " ")
		printf "%-9s %14s %14s %-14s %3d/%-2d %9s %s\n", what[i], fmt(f), fmt(b), peer[i], timed, nr, ratio, line
	}
	printf "bonnie++ also: sequential stat %s/s, sequential delete %s/s, random create %s/s (medians)\n",
		fmt(median(v["bonnie++", 6])), fmt(median(v["bonnie++", 7])), fmt(median(v["bonnie++", 8]))
}' "$results"
