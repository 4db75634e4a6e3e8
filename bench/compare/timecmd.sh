# bench/compare/timecmd.sh: bench/run's timecmd comparison, sourced by it: timecmd's overhead
# against hyperfine -N and GNU time, and each tool's own figure for a sleep. Defines bench_timecmd.

tc_true_many() { # IMPL: TRUE_RUNS runs of true in one invocation
	case $1 in
	timecmd | timecmd-before) timed timecmd "$1" "$NAME_TRUE_MANY" -- "$(tool_bin "$1")/timecmd" -q -o /dev/null --stdout null -r "$TRUE_RUNS" -- true ;;
	hyperfine) timed timecmd hyperfine "$NAME_TRUE_MANY" -- hyperfine -N --runs "$TRUE_RUNS" --output null --style none true ;;
	esac
}
tc_true_one() { # IMPL: one run of true
	case $1 in
	timecmd) timed timecmd timecmd "$NAME_TRUE_ONE" -- "$BIN/timecmd" -q -o /dev/null -- true ;;
	time) timed timecmd time "$NAME_TRUE_ONE" -- /usr/bin/time -o /dev/null true ;;
	esac
}
tc_sleep() { # IMPL: sleep $SLEEP as each tool measures it (its own figure)
	case $1 in
	timecmd)
		rec=$out
		[ -z "$WARM" ] || rec=/dev/null
		"$BIN/timecmd" -q -o "$rec" --name "$NAME_SLEEP" --tag bench=timecmd --tag impl=timecmd -- sleep "$SLEEP"
		;;
	hyperfine)
		hyperfine -N --runs 1 --style none --export-json "$TMP/hf.json" "sleep $SLEEP" >/dev/null 2>&1 || return 1
		[ -n "$WARM" ] || peer_records timecmd hyperfine "$NAME_SLEEP" hyperfine "$TMP/hf.json"
		;;
	time)
		/usr/bin/time -f %e -o "$TMP/time.out" sleep "$SLEEP" || return 1
		[ -n "$WARM" ] || tail -n 1 "$TMP/time.out" |
			peer_lines time "$TIME_VERSION" timecmd time "$NAME_SLEEP" wall_s
		;;
	esac
}

bench_timecmd() {
	NAME_TRUE_MANY="timecmd: $TRUE_RUNS runs of true, whole invocation"
	NAME_TRUE_ONE="timecmd: one run of true, whole invocation"
	NAME_SLEEP="timecmd: sleep $SLEEP, as each tool measures it"
	if have hyperfine; then
		say "timecmd: overhead, $TRUE_RUNS runs of true in one invocation ($TRUE_ROUNDS rounds)"
		rounds_save=$rounds
		rounds=$TRUE_ROUNDS
		# shellcheck disable=SC2046 # before's word is an impl or nothing
		alternate tc_true_many timecmd $(before timecmd) hyperfine && {
			group timecmd hyperfine wall_s "$NAME_TRUE_MANY" timecmd $(before timecmd)
			target timecmd "timecmd, $TRUE_RUNS runs of true: wall against hyperfine -N's" "$NAME_TRUE_MANY" wall_s median hyperfine ours/peer '<=' 1.0
		}
		rounds=$rounds_save
	else skip "timecmd vs hyperfine: hyperfine is not installed"; fi
	if [ -x /usr/bin/time ]; then
		TIME_VERSION=$(/usr/bin/time --version 2>&1 | awk 'NR == 1 { print $NF }')
		say "timecmd: one run of true ($TRUE_ROUNDS rounds)"
		rounds_save=$rounds
		rounds=$TRUE_ROUNDS
		alternate tc_true_one timecmd time && group timecmd time wall_s "$NAME_TRUE_ONE" timecmd
		rounds=$rounds_save
	else skip "timecmd vs GNU time: /usr/bin/time is not installed"; fi
	impls=timecmd
	have hyperfine && impls="$impls hyperfine"
	[ -x /usr/bin/time ] && impls="$impls time"
	if [ "$impls" != timecmd ]; then
		say "timecmd: accuracy, sleep $SLEEP ($impls)"
		if alternate tc_sleep $impls; then
			case $impls in *hyperfine*) group timecmd hyperfine wall_s "$NAME_SLEEP" timecmd ;; esac
			case $impls in *" time"*) group timecmd time wall_s "$NAME_SLEEP" timecmd ;; esac
		fi
	fi
}
