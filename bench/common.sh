# bench/common.sh: the helpers the benchmarks share: medians, alternation (rounds), bench/run's
# records and the report with its targets table. Sourced by bench/run (which sources
# bench/compare/*.sh, one file per peer comparison, after it) and by the per-tool scripts
# bench/*.sh, which use the medians and, for the two disk scripts, case_rounds. Only
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

# ---------------------------------------------------------------- bench/run: running the cases
# What these use, bench/run sets: $BIN (our binaries), $BEFORE (BENCH_BEFORE's or empty), $out
# (the results), $TMP (its scratch directory, $TMP/pids the background processes its cleanup
# ends), $dir and $made_dir (--dir), $rounds, $CUR_BENCH and $failed.

say() { echo "bench: $*" >&2; }
skip() { echo "skipped: $*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }
ours() { [ -x "$BIN/$1" ]; }
# tool_bin IMPL: the directory of IMPL's binaries: BENCH_BEFORE's for TOOL-before, else ours.
tool_bin() { case $1 in *-before) echo "$BEFORE" ;; *) echo "$BIN" ;; esac; }
# before TOOL: " TOOL-before" when BENCH_BEFORE is set (an impl to add to a case), else nothing.
before() { [ -z "$BEFORE" ] || echo " $1-before"; }

# scratch_dir BENCH: $dir, made (a new temporary directory here) unless --dir gave it.
scratch_dir() {
	if [ -z "$dir" ]; then
		dir=$(mktemp -d "$(pwd)/.bench-scratch.XXXXXX") || { skip "$1: cannot make a scratch directory in $(pwd) (give --dir)"; return 1; }
		made_dir=1
	else
		mkdir -p "$dir"
	fi
}

# timed BENCH IMPL NAME [timecmd options --] CMD...: one timecmd sample of CMD (none during a
# warm-up). The command's stdout goes to $TOUT (default: discarded), its stderr to $TMP/err.
timed() {
	t_b=$1 t_i=$2 t_n=$3
	shift 3
	t_rec=$out
	[ -z "$WARM" ] || t_rec=/dev/null
	t_out=${TOUT:-null}
	TOUT=""
	"$BIN/timecmd" -q -o "$t_rec" --name "$t_n" --tag "bench=$t_b" --tag "impl=$t_i" --stdout "$t_out" "$@" 2>>"$TMP/err"
}
WARM=""
TOUT=""

# peer_records BENCH IMPL NAME FORMAT FILE: a peer's own output (iperf3 -J, fio's JSON,
# hyperfine's export, ping's text) as ingest converts it: the peer's records, tagged, checked
# by collate, appended. Extra sed expressions on stdin's place ($PEER_SED) rename a key where
# the compared figure has another name in our tool's vocabulary.
peer_records() {
	"$BIN/ingest" "$4" -q -o - --name "$3" --tag "bench=$1" --tag "impl=$2" "$5" >"$TMP/peer.jsonl" 2>"$TMP/err" || {
		echo "bench/run: ingest could not convert $2's output for '$3':" >&2
		cat "$TMP/err" >&2
		return 1
	}
	if [ -n "${PEER_SED:-}" ]; then
		sed "$PEER_SED" "$TMP/peer.jsonl" >"$TMP/peer.sed" && mv "$TMP/peer.sed" "$TMP/peer.jsonl"
	fi
	PEER_SED=""
	"$BIN/collate" "$TMP/peer.jsonl" >/dev/null 2>"$TMP/err" || {
		echo "bench/run: the records ingest made of $2's output do not decode:" >&2
		cat "$TMP/err" >&2
		return 1
	}
	cat "$TMP/peer.jsonl" >>"$out"
}
PEER_SED=""

# peer_lines TOOL VERSION BENCH IMPL NAME KEY: numbers on stdin (one a line; the value of KEY in
# base units, picked out of TOOL's text) as ingest figures converts them: a sample each and the
# run's summary (their median), tagged, checked by collate, appended.
peer_lines() {
	awk -v key="$6" '$1 ~ /^[0-9.eE+-]+$/ && $1 + 0 >= 0 { print key "=" $1 }' >"$TMP/peer.in"
	[ -s "$TMP/peer.in" ] || { echo "bench/run: no $6 figure from $1 for '$5'" >&2; return 1; }
	"$BIN/ingest" figures --tool "$1" --tool-version "$2" -q -o - --name "$5" --tag "bench=$3" --tag "impl=$4" \
		"$TMP/peer.in" >"$TMP/peer.jsonl" 2>"$TMP/err" || {
		echo "bench/run: ingest could not convert $1's figures for '$5':" >&2
		cat "$TMP/err" >&2
		return 1
	}
	"$BIN/collate" "$TMP/peer.jsonl" >/dev/null 2>"$TMP/err" || {
		echo "bench/run: the records ingest made of $1's figures do not decode:" >&2
		cat "$TMP/err" >&2
		return 1
	}
	cat "$TMP/peer.jsonl" >>"$out"
}

# alternate FUNCTION IMPL...: one untimed warm-up run of each IMPL (all must work, else the
# case is skipped), then $rounds rounds of A B C ..., the order rotated each round.
alternate() {
	fn=$1
	shift
	WARM=1
	for i in "$@"; do
		: >"$TMP/err"
		"$fn" "$i" >/dev/null 2>>"$TMP/err" || {
			WARM=""
			skip "$CUR_BENCH: $fn: $i does not run here: $(tail -n 3 "$TMP/err" | tr '\n' ' ')"
			return 1
		}
	done
	WARM=""
	r=1
	while [ "$r" -le "$rounds" ]; do
		say "$fn round $r/$rounds: $*"
		for i in "$@"; do
			: >"$TMP/err"
			"$fn" "$i" 2>>"$TMP/err" || {
				echo "bench/run: $fn $i failed:" >&2
				tail -n 5 "$TMP/err" | sed 's/^/  /' >&2
				failed=1
			}
		done
		first=$1
		shift
		set -- "$@" "$first"
		r=$((r + 1))
	done
}

# ---------------------------------------------------------------- bench/run: the report
# The comparisons and targets the cases add go to $groups and $targets (files bench/run makes
# empty before the first case); they are printed after the last.

# group BENCH BASELINE METRIC NAME IMPL...: a comparison the report prints at the end: the
# row NAME, one column per IMPL, each against BASELINE.
group() {
	g_b=$1 g_base=$2 g_m=$3 g_n=$4
	shift 4
	g_i=$g_base
	for x in "$@"; do g_i="$g_i OR $x"; done
	printf '%s\t%s\t%s\t%s\t%s\n' "$g_b" "$g_base" "$g_m" "$g_n" "$g_i" >>"$groups"
}

# target BENCH WHAT NAME METRIC STAT PEER WAY OP BAR: a target an issue set, checked at the end
# from this run's records: collate's STAT of METRIC in row NAME for BENCH's own tool (impl=BENCH)
# and for PEER (an impl, or =NUMBER for a fixed figure), their ratio taken WAY (ours/peer or
# peer/ours), met when it is OP (>=, <=) BAR, or within BAR of 1 (OP within).
target() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$targets"
}

# report_groups: each comparison's collate table, the command that makes it printed above it
# (a table that collate cannot make sets failed).
report_groups() {
	while IFS='	' read -r b base metric name impls; do
		echo
		echo "== $name: $metric against impl=$base"
		echo "   collate --cols impl --baseline impl=$base --metric $metric --filter 'bench:$b impl:($impls) name:\"$name\"' $out"
		"$BIN/collate" --cols impl --baseline "impl=$base" --metric "$metric" \
			--filter "bench:$b impl:($impls) name:\"$name\"" "$out" || failed=1
	done <"$groups"
}

# cell BENCH NAME METRIC STAT IMPL: collate's STAT of METRIC in row NAME for impl=IMPL (empty
# when it has none).
cell() {
	"$BIN/collate" -f json --cols impl --metric "$3" --stat "$4" --no-ci \
		--filter "bench:$1 impl:\"$5\" name:\"$2\"" "$out" 2>/dev/null |
		jq -r '.rows[0].cells[0].value // empty' 2>/dev/null
}

# per_round BENCH NAME METRIC OURS PEER WAY: the median of the per-round ratios of OURS's and
# PEER's runs of row NAME, the k-th run of each (by its first time) being round k's: a paired
# figure, which a drift of the machine's speed over the run moves far less than the ratio of
# the two medians. A run's figure is the median of its samples' METRIC, else its summary's.
per_round() {
	jq -rs --arg b "$1" --arg n "$2" --arg m "$3" --arg a "$4" --arg p "$5" --arg way "$6" '
		def med: sort | if length == 0 then null elif length % 2 == 1 then .[(length - 1) / 2]
			else (.[length / 2 - 1] + .[length / 2]) / 2 end;
		def runs($impl): [.[] | select(.tags.bench == $b and .tags.impl == $impl and .name == $n
				and (.type == "sample" or .type == "summary") and .values[$m] != null)]
			| group_by(.run)
			| map({at: (map(.at) | min),
				v: ([.[] | select(.type == "sample") | .values[$m]] as $s
					| if ($s | length) > 0 then ($s | med) else ([.[] | .values[$m]] | first) end)})
			| sort_by(.at) | map(.v);
		runs($a) as $x | runs($p) as $y
		| [range(0; [($x | length), ($y | length)] | min)
			| if $way == "ours/peer" then $x[.] / $y[.] else $y[.] / $x[.] end] | med // empty
	' "$out" 2>/dev/null
}

# report_targets: each target with both figures, their ratio and whether it is met.
report_targets() {
	echo
	echo "== Targets, from this run's records (see bench/README.md): ours and peer are collate's cells"
	echo "   (STAT over the rounds), 'of cells' their ratio, 'per round' the median of the rounds' ratios;"
	echo "   a median's target is judged by the rounds' ratios, a min's or max's by the cells"
	printf '%-72s %-22s %-11s %-11s %-9s %-9s %s\n' target bar ours peer "of cells" "per round" met
	while IFS='	' read -r b what name metric stat peer way op bar; do
		target_line "$b" "$b"
		[ -z "$BEFORE" ] || [ "$b" = blkread ] || target_line "$b-before" "$b" " (before)"
	done <"$targets"
	[ -z "${target_missed:-}" ] || echo "bench/run: a target is missed (NO above)" >&2
}

# target_line IMPL BENCH [SUFFIX]: one target's line for impl=IMPL (the fields of report_targets'
# line in its variables); a NO sets target_missed, except for a before line.
target_line() {
	mine=$(cell "$2" "$name" "$metric" "$stat" "$1")
	rr=""
	case $peer in
	=*) theirs=${peer#=} ;;
	*)
		theirs=$(cell "$2" "$name" "$metric" "$stat" "$peer")
		[ "$stat" != median ] || rr=$(per_round "$2" "$name" "$metric" "$1" "$peer" "$way")
		;;
	esac
	awk -v what="$what${3:-}" -v a="$mine" -v p="$theirs" -v rr="$rr" -v way="$way" -v op="$op" -v bar="$bar" 'BEGIN {
		if (a == "" || p == "" || a + 0 == 0 || p + 0 == 0) { printf "%-72s %s\n", what, "no figure (the case did not run)"; exit 1 }
		r = (way == "ours/peer") ? a / p : p / a
		judged = (rr == "") ? r : rr + 0
		if (op == ">=") { ok = judged >= bar; b = ">= " bar }
		else if (op == "<=") { ok = judged <= bar; b = "<= " bar }
		else { ok = judged >= 1 - bar && judged <= 1 + bar; b = "1 +/- " bar }
		printf "%-72s %-22s %-11.4g %-11.4g %-9.4g %-9s %s\n", what, way " " b, a, p, r, (rr == "") ? "-" : sprintf("%.4g", rr), ok ? "yes" : "NO"
		exit ok ? 0 : 1
	}' || [ -n "${3:-}" ] || target_missed=1
}

# Waits (at most 10 s) until something listens on TCP port $1 (the benches listen on 127.0.0.1).
wait_listen() {
	wl_n=0
	while [ $wl_n -lt 500 ]; do
		ss -Hltn "sport = :$1" 2>/dev/null | grep -q LISTEN && return 0
		sleep 0.02
		wl_n=$((wl_n + 1))
	done
	echo "bench: nothing listens on 127.0.0.1:$1" >&2
	return 1
}

# ---------------------------------------------------------------- collate's input
# collate_lines SHAPE N: N sample lines over 100 cells (10 names x 10 labels) on stdout, for
# collate and its peers. SHAPE `real`: the records as the tools write them: runs of 100 samples
# (N / 100 run ids, each run one cell), each run a begin (the machine's facts in a nested
# `info`), its samples and an ok summary; `tags` on every line; values as full-precision f64
# (17 significant digits, as serde_json writes a computed f64); half the names pingrt's shape
# (`rtt_s`, info icmp_seq, ttl, from...), half timecmd's (`wall_s` and ten more values, info
# exit codes and pid). SHAPE `simple`: one run id, a six-digit `wall_s` a line and a bare
# `info`, then one summary (the shape issue 7 measured first). collate counts only runs that
# finished; in both shapes every run does, so the peers' medians over all samples agree.
collate_lines() {
	case $1 in
	simple) awk -v N="$2" "$COLLATE_SIMPLE_AWK" ;;
	*) awk -v N="$2" "$COLLATE_REAL_AWK" ;;
	esac
}

COLLATE_SIMPLE_AWK='BEGIN { srand(7); for (i = 0; i < N; i++) { c = i % 100; nm = int(c / 10); lb = c % 10;
 printf "{\"schema\":\"benchmatrix/1\",\"tool\":\"timecmd\",\"version\":\"0.1.0\",\"type\":\"sample\",\"run\":\"0123456789ab\",\"seq\":%d,\"at\":\"2026-11-30T13:00:00.123456Z\",\"host\":\"h%d\",\"label\":\"env%d/disk\",\"name\":\"bench %d\",\"values\":{\"wall_s\":%.6f},\"info\":{\"exit\":0}}\n", i, lb, lb, nm, 1 + nm + rand() }
 printf "{\"schema\":\"benchmatrix/1\",\"tool\":\"timecmd\",\"version\":\"0.1.0\",\"type\":\"summary\",\"run\":\"0123456789ab\",\"seq\":0,\"at\":\"2026-11-30T13:00:01.000000Z\",\"host\":\"h0\",\"label\":\"env0/disk\",\"name\":\"bench 0\",\"status\":\"ok\",\"headline\":\"wall_median_s\",\"values\":{\"wall_median_s\":1},\"info\":{}}\n" }'

# The real shape: one awk program; head() is the envelope, g() a full-precision f64.
COLLATE_REAL_AWK='
function g(x) { return sprintf("%.17g", x) }
function head(type, seq, s) {
	return sprintf("{\"schema\":\"benchmatrix/1\",\"tool\":\"%s\",\"version\":\"0.1.0\",\"type\":\"%s\",\"run\":\"%s\",\"seq\":%d,\"at\":\"2026-12-07T%02d:%02d:%02d.%06dZ\",\"host\":\"%s\",\"label\":\"%s\",\"name\":\"%s\",\"tags\":{\"disk\":\"%s\",\"peer\":\"10.0.0.%d\"}", tool, type, run, seq, int(s / 3600) % 24, int(s / 60) % 60, int(s) % 60, int((s - int(s)) * 1e6), host, label, name, disk, lb + 1)
}
function facts() {
	return sprintf("\"hostname\":\"%s\",\"kernel\":\"6.1.0-%d-amd64\",\"cpu_model\":\"AMD EPYC 7B13 64-Core Processor\",\"cpu_count\":2,\"cpu_usable_count\":2,\"memory_bytes\":25276182528,\"virtualization\":\"kvm\",\"container\":\"none\",\"vm\":\"kvm\",\"hypervisor\":true,\"clocksource\":\"tsc\",\"namespaces\":\"none\",\"cgroup\":\"v2\",\"cpu_quota\":\"max\",\"cpuset\":\"0-1\",\"memory_limit_bytes\":\"max\",\"io_throttle\":\"none\",\"mitigations\":{\"meltdown\":\"Not affected\",\"spec_store_bypass\":\"Vulnerable\",\"spectre_v1\":\"Mitigation: usercopy/swapgs barriers and __user pointer sanitization\",\"spectre_v2\":\"Mitigation: Retpolines; STIBP: disabled; RSB filling\"},\"load_1m\":%s,\"procs_running_count\":%d", host, 20 + lb % 3, g(rand() * 2), 1 + int(rand() * 3))
}
BEGIN {
	srand(7); runs = int((N + 99) / 100); left = N; t = 36000
	for (r = 0; r < runs; r++) {
		c = r % 100; nm = int(c / 10); lb = c % 10; n = (left < 100) ? left : 100; left -= n
		run = sprintf("%06x%06x", (r * 40503 + 7) % 16777216, r)
		host = "h" lb; label = "env" lb "/" (lb % 2 ? "lvm" : "xfs") "/disk"; disk = "vd" substr("abcd", lb % 4 + 1, 1)
		ping = nm % 2 == 0
		if (ping) { tool = "pingrt"; name = "ping 10.0.0." (nm + 1) } else { tool = "timecmd"; name = "make " nm }
		base = ping ? 1e-4 * (1 + nm + lb / 10) : 0.5 * (1 + nm + lb / 10)
		print head("begin", 0, t) ",\"values\":{},\"info\":{" (ping ? "\"host\":\"10.0.0.1\",\"count\":100,\"interval_s\":0.2," : "\"command\":[\"make\",\"-j2\"],\"runs\":100,\"warmup\":0,\"shell\":null,") facts() "}}"
		sum = 0; mx = 0; mn = 1e9
		for (i = 0; i < n; i++) {
			v = base * (1 + rand()); sum += v; if (v > mx) mx = v; if (v < mn) mn = v; t += ping ? 0.2 : v
			if (ping) print head("sample", i, t) ",\"values\":{\"rtt_s\":" g(v) "},\"info\":{\"icmp_seq\":" i + 1 ",\"probe\":" i ",\"ttl\":64,\"bytes\":64,\"from\":\"10.0.0." nm + 1 "\",\"tx_stamp\":\"kernel\",\"rx_stamp\":\"kernel\"}}"
			else print head("sample", i, t) ",\"values\":{\"wall_s\":" g(v) ",\"user_s\":" g(v * 0.7 * rand()) ",\"sys_s\":" g(v * 0.2 * rand()) ",\"cpu_ratio\":" g(0.5 + rand() / 2) ",\"max_rss_bytes\":" 2945024 + int(rand() * 4096) * 4096 ",\"minor_faults_count\":" int(rand() * 900) ",\"major_faults_count\":0,\"voluntary_switches_count\":" int(rand() * 40) ",\"involuntary_switches_count\":" int(rand() * 9) ",\"fs_read_bytes\":0,\"fs_write_bytes\":" int(rand() * 64) * 4096 "},\"info\":{\"run\":" i + 1 ",\"ok\":true,\"exit_code\":0,\"exit_status\":0,\"pid\":" 10000 + r * 100 + i "}}"
		}
		t += 1
		if (ping) print head("summary", 0, t) ",\"status\":\"ok\",\"headline\":\"rtt_mean_s\",\"values\":{\"sent_count\":" n ",\"received_count\":" n ",\"loss_ratio\":0.0,\"rtt_min_s\":" g(mn) ",\"rtt_mean_s\":" g(sum / n) ",\"rtt_max_s\":" g(mx) ",\"elapsed_s\":" g(n * 0.2 + rand() / 1000) "},\"info\":{\"host\":\"10.0.0.1\",\"socket\":\"raw\",\"end\":\"done\",\"load_1m_end\":" g(rand() * 2) ",\"steal_ratio\":0.0}}"
		else print head("summary", 0, t) ",\"status\":\"ok\",\"headline\":\"wall_median_s\",\"values\":{\"runs_count\":" n ",\"failed_runs_count\":0,\"wall_mean_s\":" g(sum / n) ",\"wall_median_s\":" g(sum / n) ",\"wall_min_s\":" g(mn) ",\"wall_max_s\":" g(mx) "},\"info\":{\"runs_requested\":" n ",\"runs_measured\":" n ",\"warmup\":0,\"warnings\":[],\"load_1m_end\":" g(rand() * 2) ",\"steal_ratio\":0.0}}"
	}
}'

# duckdb_python [existing]: prints the Python of a venv that has the duckdb package, making the
# venv (python3 -m venv, in the cache directory) and installing duckdb with pip where it is not
# there yet; with `existing`, only a venv made before (a quick run installs nothing). Where it
# cannot, prints `skipped: duckdb: why` on stderr and returns 1.
duckdb_python() {
	venv=${XDG_CACHE_HOME:-$HOME/.cache}/benchmatrix/duckdb-venv
	if "$venv/bin/python" -c 'import duckdb' >/dev/null 2>&1; then
		echo "$venv/bin/python"
		return 0
	fi
	if [ "${1:-}" = existing ]; then
		skip "duckdb: no venv with duckdb in $venv (a run without --smoke installs it)"
		return 1
	fi
	if ! command -v python3 >/dev/null 2>&1; then
		skip "duckdb: python3 is not installed"
		return 1
	fi
	dp_log=$(mkdir -p "$(dirname "$venv")" 2>&1 && python3 -m venv "$venv" 2>&1) || {
		skip "duckdb: python3 -m venv $venv failed: $(echo "$dp_log" | tail -n 1)"
		return 1
	}
	# Bounded: no retries, 15 s a connection, 5 minutes in all.
	dp_log=$(timeout 300 "$venv/bin/pip" install --quiet --disable-pip-version-check --retries 0 --timeout 15 duckdb 2>&1) || {
		skip "duckdb: pip could not install duckdb: $(echo "$dp_log" | tail -n 1)"
		return 1
	}
	echo "$venv/bin/python"
}
