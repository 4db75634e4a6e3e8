# bench/compare/fsmeta.sh: bench/run's fsmeta comparison, sourced by it: fsmeta's create,
# stat and unlink rates against bonnie++ -n in the same scratch directory. Defines bench_fsmeta.

# fs_one IMPL: one run of FS_K*1024 empty files in $dir; each phase's rate over the whole phase
# becomes a sample line tagged impl=IMPL, one per run, the same for both: fsmeta's summary
# (creates, then stats and unlinks in random orders) and bonnie++'s sequential create, random
# stat and random delete (its CSV fields 27, 35, 37; +++++, a phase under half a second, gives
# no line).
fs_one() {
	case $1 in
	fsmeta)
		rm -f "$TMP/fsmeta.jsonl"
		"$BIN/fsmeta" -q -n $((FS_K * 1024)) -o "$TMP/fsmeta.jsonl" "$dir" || return 1
		[ -z "$WARM" ] || return 0
		for f in create:creates_per_s stat:stats_per_s unlink:unlinks_per_s; do
			jq -r --arg k "${f#*:}" 'select(.type == "summary") | .values[$k] // empty' "$TMP/fsmeta.jsonl" |
				peer_lines fsmeta "$FS_VERSION" fsmeta fsmeta "$NAME_FS (${f%%:*})" "${f#*:}" || return 1
		done
		;;
	bonnie++)
		# shellcheck disable=SC2086 # $FS_USER is empty or -u root
		bonnie++ -q -s 0 -n "$FS_K:0:0:1" -d "$dir" $FS_USER >"$TMP/bonnie.csv" || return 1
		[ -z "$WARM" ] || return 0
		BONNIE_VERSION=$(awk -F, 'END { print $2 }' "$TMP/bonnie.csv")
		for f in 27:create:creates_per_s 35:stat:stats_per_s 37:unlink:unlinks_per_s; do
			p=${f#*:}
			awk -F, -v f="${f%%:*}" 'END { if ($f ~ /^[0-9.]+$/) print $f }' "$TMP/bonnie.csv" >"$TMP/bonnie.fig"
			[ -s "$TMP/bonnie.fig" ] || continue
			peer_lines bonnie++ "$BONNIE_VERSION" fsmeta bonnie++ "$NAME_FS (${p%%:*})" "${p#*:}" <"$TMP/bonnie.fig" || return 1
		done
		;;
	esac
}

bench_fsmeta() {
	ours fsmeta || { skip "fsmeta: $BIN/fsmeta is not built"; return 0; }
	have bonnie++ || { skip "fsmeta vs bonnie++: bonnie++ is not installed"; return 0; }
	scratch_dir fsmeta || return 0
	NAME_FS="fsmeta: $((FS_K * 1024)) files"
	FS_VERSION=$("$BIN/fsmeta" --version | awk '{ print $2 }')
	FS_USER=""
	[ "$(id -u)" != 0 ] || FS_USER="-u root"
	say "fsmeta: $((FS_K * 1024)) empty files a run in $dir ($(df -PT "$dir" | awk 'NR == 2 { print $2 " on " $1 }')) (fsmeta bonnie++)"
	# The rows go to the results only for a phase that bonnie++ timed in every round: one timed
	# in some rounds only would count only bonnie++'s slow rounds (+++++ hides its fast ones).
	out_real=$out
	out=$TMP/fsmeta-rows.jsonl
	: >"$out"
	if alternate fs_one fsmeta bonnie++; then ran=1; else ran=0; fi
	out=$out_real
	[ "$ran" = 1 ] || return 0
	for ph in create:creates_per_s stat:stats_per_s unlink:unlinks_per_s; do
		row="$NAME_FS (${ph%%:*})"
		timed=$(grep -F "\"name\":\"$row\"" "$TMP/fsmeta-rows.jsonl" | grep -cF '"impl":"bonnie++"' || true)
		if [ "$timed" -ge "$rounds" ]; then
			grep -F "\"name\":\"$row\"" "$TMP/fsmeta-rows.jsonl" >>"$out"
			group fsmeta bonnie++ "${ph#*:}" "$row" fsmeta
		else
			skip "fsmeta: bonnie++ timed the ${ph%%:*} phase of $((FS_K * 1024)) files in $timed of $rounds rounds (+++++: under half a second), so that row is left out; bench/fsmeta.sh DIR ROUNDS K takes more files"
		fi
	done
}
