# bench/compare/collate.sh: bench/run's collate comparison, sourced by it: collate's median
# per cell against Miller and jq over generated sample lines, with its speed and RSS targets.
# Defines bench_collate.

col_one() { # IMPL: the median per (name, label) cell of COLLATE_LINES sample lines
	in=$TMP/lines.jsonl
	case $1 in
	collate | collate-before) timed collate "$1" "$NAME_COLLATE" -- "$(tool_bin "$1")/collate" -f json "$in" ;;
	mlr) timed collate mlr "$NAME_COLLATE" -- mlr --ijsonl --ocsv flatten then stats1 -i -a median -f values.wall_s -g name,label "$in" ;;
	jq)
		# jq holds every line: slow, so only the first JQ_ROUNDS rounds (and no warm-up).
		if [ -n "$WARM" ]; then return 0; fi
		jq_runs=$((jq_runs + 1))
		[ "$jq_runs" -le "$JQ_ROUNDS" ] || return 0
		timed collate jq "$NAME_COLLATE" -- jq -n -r 'reduce (inputs | select(.type == "sample")) as $r ({}; .[$r.name + "," + $r.label] += [$r.values.wall_s])
			| to_entries[] | (.value | sort) as $v | ($v | length) as $n
			| "\(.key),\(if $n % 2 == 1 then $v[($n - 1) / 2] else ($v[$n / 2 - 1] + $v[$n / 2]) / 2 end)"' "$in"
		;;
	esac
}

bench_collate() {
	NAME_COLLATE="collate: median per cell, $COLLATE_LINES lines"
	impls="collate$(before collate)"
	if have mlr; then impls="$impls mlr"; else skip "collate vs Miller: mlr is not installed"; fi
	impls="$impls jq"
	# 100 cells: 10 names x 10 labels, every line a sample as timecmd writes it, then the run's
	# ok summary (collate counts only runs that finished; mlr and jq take the samples only).
	awk -v N="$COLLATE_LINES" 'BEGIN { srand(7); for (i = 0; i < N; i++) { c = i % 100; nm = int(c / 10); lb = c % 10;
	 printf "{\"schema\":\"benchmatrix/1\",\"tool\":\"timecmd\",\"version\":\"0.1.0\",\"type\":\"sample\",\"run\":\"0123456789ab\",\"seq\":%d,\"at\":\"2026-11-30T13:00:00.123456Z\",\"host\":\"h%d\",\"label\":\"env%d/disk\",\"name\":\"bench %d\",\"values\":{\"wall_s\":%.6f},\"info\":{\"exit\":0}}\n", i, lb, lb, nm, 1 + nm + rand() }
	 printf "{\"schema\":\"benchmatrix/1\",\"tool\":\"timecmd\",\"version\":\"0.1.0\",\"type\":\"summary\",\"run\":\"0123456789ab\",\"seq\":0,\"at\":\"2026-11-30T13:00:01.000000Z\",\"host\":\"h0\",\"label\":\"env0/disk\",\"name\":\"bench 0\",\"status\":\"ok\",\"headline\":\"wall_median_s\",\"values\":{\"wall_median_s\":1},\"info\":{}}\n" }' >"$TMP/lines.jsonl"
	say "collate: $COLLATE_LINES lines, $(wc -c <"$TMP/lines.jsonl") bytes, 100 cells ($impls; jq in $JQ_ROUNDS rounds)"
	jq_runs=0
	alternate col_one $impls || return 0
	case $impls in *mlr*)
		group collate mlr wall_s "$NAME_COLLATE" collate $(before collate)
		target collate "collate, $COLLATE_LINES lines: Miller's wall time over collate's" "$NAME_COLLATE" wall_s median mlr peer/ours '>=' 30
		;;
	esac
	group collate jq wall_s "$NAME_COLLATE" collate $(before collate)
	# Streamed cells: the peak RSS stays far below the input's size (243 MB for 1M lines).
	target collate "collate, $COLLATE_LINES lines: peak RSS (bytes) under 128 MiB" "$NAME_COLLATE" max_rss_bytes max =134217728 ours/peer '<=' 1
	rm -f "$TMP/lines.jsonl"
}
