# bench/compare/blkwrite.sh: bench/run's blkwrite comparison, sourced by it: blkwrite against
# fio and dd, sequential and random writes of a fresh scratch file. Defines bench_blkwrite.

blk_one() { # CASE IMPL: one run, on a fresh file, removed outside the timing
	f=$dir/bench.dat
	rm -f "$f"
	sync
	n="blkwrite: $1"
	own="blkwrite: $1, own figure"
	own_rec=$out
	[ -z "$WARM" ] || own_rec=/dev/null
	case "$1" in
	"sequential O_DIRECT 4M"*) mode="--direct" bs=4M size=$BLK_SEQ count=$BLK_SEQ_4M fio="--rw=write --direct=1 --ioengine=psync" dd="oflag=direct conv=fsync" ;;
	"buffered 1M + fsync"*) mode="" bs=1M size=$BLK_SEQ count=$BLK_SEQ_1M fio="--rw=write --ioengine=psync" dd="conv=fsync" ;;
	*"depth 1,"*) mode="--direct --random" bs=4k size=$BLK_RAND fio="--rw=randwrite --direct=1 --ioengine=psync" ;;
	*"depth 32,"*) mode="--direct --random --iodepth 32" bs=4k size=$BLK_RAND fio="--rw=randwrite --direct=1 --ioengine=io_uring --iodepth=32" ;;
	esac
	case $2 in
	blkwrite)
		# shellcheck disable=SC2086 # $mode is a list of options
		timed blkwrite blkwrite "$n" -- "$BIN/blkwrite" $mode -b "$bs" -s "$size" --pattern zero --keep -q \
			-o "$own_rec" --name "$own" --tag bench=blkwrite --tag impl=blkwrite "$f" || { rm -f "$f"; return 1; }
		;;
	fio)
		# shellcheck disable=SC2086 # $fio is a list of options
		timed blkwrite fio "$n" -- fio --name=bench --filename="$f" --size="$size" --bs="$bs" --zero_buffers --end_fsync=1 \
			--output-format=json --output="$TMP/fio.json" $fio || { rm -f "$f"; return 1; }
		# fio's bandwidth (bw_bytes, ingest's throughput_bytes_per_s) leaves its end_fsync out:
		# blkwrite's write_phase_bytes_per_s does too, so that is its name in the comparison.
		[ -n "$WARM" ] || {
			PEER_SED='s/"throughput_bytes_per_s":/"write_phase_bytes_per_s":/g'
			peer_records blkwrite fio "$own" fio "$TMP/fio.json"
		}
		;;
	dd)
		: >"$TMP/err"
		# shellcheck disable=SC2086 # $dd is a list of operands
		timed blkwrite dd "$n" -- dd if=/dev/zero of="$f" bs="$bs" count="$count" $dd || { rm -f "$f"; return 1; }
		# dd's rate (bytes / its elapsed time) includes its conv=fsync, as blkwrite's throughput does.
		[ -n "$WARM" ] || awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") { printf "%.0f\n", $1 / $(i - 1) } }' "$TMP/err" |
			tail -n 1 | peer_lines dd "$DD_VERSION" blkwrite dd "$own" throughput_bytes_per_s
		;;
	esac
	st=$?
	rm -f "$f"
	return $st
}

bench_blkwrite() {
	ours blkwrite || { skip "blkwrite: $BIN/blkwrite is not built"; return 0; }
	scratch_dir blkwrite || return 0
	[ ! -e "$dir/bench.dat" ] || { echo "bench/run: $dir/bench.dat exists; bench/run will not overwrite it" >&2; failed=1; return 0; }
	to_bytes() { awk -v s="$1" 'BEGIN { n = s + 0; u = substr(s, length(n "") + 1)
		m = (u == "k" || u == "K") ? 1024 : (u == "M") ? 1048576 : (u == "G") ? 1073741824 : 1; printf "%d", n * m }'; }
	BLK_SEQ_4M=$(($(to_bytes "$BLK_SEQ") / 4194304))
	BLK_SEQ_1M=$(($(to_bytes "$BLK_SEQ") / 1048576))
	say "blkwrite: scratch $dir ($(df -PT "$dir" | awk 'NR == 2 { print $2 " on " $1 }')), $BLK_SEQ sequential, $BLK_RAND random"
	have fio || skip "blkwrite vs fio: fio is not installed"
	if have dd; then DD_VERSION=$(dd --version 2>/dev/null | awk 'NR == 1 { print $NF }'); else skip "blkwrite vs dd: dd is not installed"; fi
	for c in "sequential O_DIRECT 4M, $BLK_SEQ" "buffered 1M + fsync, $BLK_SEQ" "random 4k O_DIRECT depth 1, $BLK_RAND" "random 4k O_DIRECT depth 32, $BLK_RAND"; do
		impls=blkwrite
		have fio && impls="$impls fio"
		case $c in random*) ;; *) have dd && impls="$impls dd" ;; esac
		[ "$impls" != blkwrite ] || continue
		blk_case() { blk_one "$c" "$1"; }
		say "blkwrite: $c ($impls)"
		alternate blk_case $impls || continue
		case $impls in *fio*)
			group blkwrite fio wall_s "blkwrite: $c" blkwrite
			group blkwrite fio write_phase_bytes_per_s "blkwrite: $c, own figure" blkwrite
			;;
		esac
		case $impls in *dd*)
			group blkwrite dd wall_s "blkwrite: $c" blkwrite
			group blkwrite dd throughput_bytes_per_s "blkwrite: $c, own figure" blkwrite
			;;
		esac
	done
}
