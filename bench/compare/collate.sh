# bench/compare/collate.sh: bench/run's collate comparison, sourced by it: collate's median
# per cell against DuckDB, Miller and jq, on records as the tools write them and on the simple
# shape, with its speed and RSS targets. Defines bench_collate.

col_one() { # IMPL: the median per (name, label) cell of $COL_IN, with $COL_KEYS' values
	in=$COL_IN
	# The warm-up keeps each impl's cells, for the check that they agree (col_agree).
	[ -z "$WARM" ] || [ "$1" = jq ] || TOUT=$TMP/cells.$1
	case $1 in
	collate | collate-before) timed collate "$1" "$NAME_COLLATE" -- "$(tool_bin "$1")/collate" -f json "$in" ;;
	duckdb) timed collate duckdb "$NAME_COLLATE" -- "$DUCK_PY" "$ROOT/bench/duckdb_medians.py" "$in" "$COL_KEYS" ;;
	mlr)
		# -i interpolates the median as collate does (R's type 7: the mean of the middle two).
		timed collate mlr "$NAME_COLLATE" -- mlr --ijsonl --ojsonl flatten then stats1 -i -a median \
			-f "$(echo "$COL_KEYS" | sed 's/^/values./; s/,/,values./g')" -g name,label "$in"
		;;
	jq)
		# jq holds every line: slow, so only the first JQ_ROUNDS rounds of the first case.
		if [ -n "$WARM" ]; then return 0; fi
		jq_runs=$((jq_runs + 1))
		[ "$jq_runs" -le "$JQ_ROUNDS" ] || return 0
		timed collate jq "$NAME_COLLATE" -- jq -n -r 'reduce (inputs | select(.type == "sample")) as $r ({}; .[$r.name + "," + $r.label] += [$r.values.wall_s // $r.values.rtt_s])
			| to_entries[] | (.value | sort) as $v | ($v | length) as $n
			| "\(.key),\(if $n % 2 == 1 then $v[($n - 1) / 2] else ($v[$n / 2 - 1] + $v[$n / 2]) / 2 end)"' "$in"
		;;
	esac
}

# col_agree IMPL: IMPL's cells from the warm-up (name,label,median) against collate's, to 1e-12
# of each; a difference is a failed run, since a figure of different work compares nothing.
col_agree() {
	case $1 in
	duckdb) cp "$TMP/cells.duckdb" "$TMP/cells.peer" ;;
	mlr) jq -r '"\(.name),\(.label),\(to_entries | map(select(.key | endswith("_median"))) | .[0].value)"' "$TMP/cells.mlr" >"$TMP/cells.peer" ;;
	esac
	jq -r '.columns as $c | .rows[] | .dims.name as $n | .cells | to_entries[]
		| "\($n),\($c[.key].key),\(.value.value)"' "$TMP/cells.collate" >"$TMP/cells.ours"
	awk -F, 'NR == FNR { want[$1 "," $2] = $3; next }
		{ k = $1 "," $2; d = $3 - want[k]; if (d < 0) d = -d; if (!(k in want) || d > 1e-12 * want[k]) bad++; n++ }
		END { if (bad || n != 100) { print bad + 0 " of " n " cells differ"; exit 1 } }' \
		"$TMP/cells.ours" "$TMP/cells.peer" >"$TMP/agree" || {
		echo "bench/run: collate and $1 do not agree on $COL_SHAPE lines: $(cat "$TMP/agree")" >&2
		failed=1
		return 1
	}
	say "collate: $1 agrees on all 100 cells ($COL_SHAPE lines)"
}

# col_case SHAPE: one case: its lines, the alternating rounds, the check, the report's rows.
col_case() {
	COL_SHAPE=$1
	[ "$1" != real ] || COL_SHAPE=tool-shaped
	case $1 in
	real) NAME_COLLATE="collate: median per cell, $COLLATE_LINES lines as the tools write them" COL_KEYS=rtt_s,wall_s ;;
	*) NAME_COLLATE="collate: median per cell, $COLLATE_LINES lines" COL_KEYS=wall_s ;;
	esac
	COL_IN=$TMP/lines.jsonl
	collate_lines "$1" "$COLLATE_LINES" >"$COL_IN"
	impls="collate$(before collate)"
	[ -z "$DUCK_PY" ] || impls="$impls duckdb"
	if have mlr; then impls="$impls mlr"; else skip "collate vs Miller: mlr is not installed"; fi
	[ "$1" != real ] || impls="$impls jq"
	say "collate: $COLLATE_LINES $COL_SHAPE lines, $(wc -c <"$COL_IN") bytes, 100 cells ($impls; jq in $JQ_ROUNDS rounds)"
	rm -f "$TMP"/cells.*
	alternate col_one $impls || { rm -f "$COL_IN"; return 0; }
	for p in duckdb mlr; do
		case " $impls " in *" $p "*) col_agree "$p" || true ;; esac
	done
	rm -f "$COL_IN" "$TMP"/cells.*
	for p in duckdb mlr jq; do
		case " $impls " in *" $p "*) group collate "$p" wall_s "$NAME_COLLATE" collate $(before collate) ;; esac
	done
}

bench_collate() {
	DUCK_PY=$(duckdb_python "$([ "$smoke" = 1 ] && echo existing)") || DUCK_PY=""
	jq_runs=0
	col_case real
	NAME_REAL=$NAME_COLLATE
	col_case simple
	case $impls in *duckdb*)
		target collate "collate, $COLLATE_LINES tool-shaped lines: wall time over DuckDB's" "$NAME_REAL" wall_s median duckdb ours/peer '<=' 1
		;;
	esac
	case $impls in *mlr*)
		target collate "collate, $COLLATE_LINES tool-shaped lines: Miller's wall time over collate's" "$NAME_REAL" wall_s median mlr peer/ours '>=' 30
		target collate "collate, $COLLATE_LINES simple lines: Miller's wall time over collate's" "$NAME_COLLATE" wall_s median mlr peer/ours '>=' 30
		;;
	esac
	# Streamed cells: the peak RSS stays far below the input's size (516 MB for 1M tool-shaped lines).
	target collate "collate, $COLLATE_LINES tool-shaped lines: peak RSS (bytes) under 128 MiB" "$NAME_REAL" max_rss_bytes max =134217728 ours/peer '<=' 1
}
