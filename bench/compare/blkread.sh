# bench/compare/blkread.sh: bench/run's blkread comparison, sourced by it: blkread against fio
# and `dd iflag=direct`, random and sequential O_DIRECT reads of one scratch file, with the
# IOPS and p99 targets. Defines bench_blkread.

br_one() { # CASE IMPL: one read of $dir/bench.dat, the file written once for every run
	f=$dir/bench.dat
	n="blkread: $1"
	own="blkread: $1, own figure"
	own_rec=$out
	[ -z "$WARM" ] || own_rec=/dev/null
	case "$1" in
	# The random cases run for BLK_RAND_T seconds over the first BLK_RAND of the file (both
	# tools start over at its end), so that each run has tens of thousands of reads to rate and
	# to take percentiles of, whatever the disk's speed.
	*"depth 1,"*) mode="--random -t $BLK_RAND_T" bs=4k size=$BLK_RAND fio="--rw=randread --ioengine=psync --time_based --runtime=$BLK_RAND_T" ;;
	# fio reaps everything that has completed (--iodepth_batch_complete_max=32), as blkread
	# does; by default it reaps one completion a call, and the others wait in the ring, inside
	# their clat, while it submits the reads that replace the ones before them.
	*"depth 32,"*) mode="--random --iodepth 32 -t $BLK_RAND_T" bs=4k size=$BLK_RAND fio="--rw=randread --ioengine=io_uring --iodepth=32 --iodepth_batch_complete_max=32 --time_based --runtime=$BLK_RAND_T" ;;
	*) mode="" bs=1M size=$BLK_SEQ fio="--rw=read --ioengine=psync" ;;
	esac
	case $2 in
	blkread)
		# shellcheck disable=SC2086 # $mode is a list of options
		timed blkread blkread "$n" -- "$BIN/blkread" --direct $mode -b "$bs" -s "$size" -q \
			-o "$own_rec" --name "$own" --tag bench=blkread --tag impl=blkread "$f"
		;;
	fio)
		# shellcheck disable=SC2086 # $fio is a list of options
		timed blkread fio "$n" -- fio --name=bench --filename="$f" --size="$size" --bs="$bs" --direct=1 \
			--output-format=json --output="$TMP/fio.json" $fio || return 1
		[ -n "$WARM" ] || peer_records blkread fio "$own" fio "$TMP/fio.json"
		;;
	dd)
		: >"$TMP/err"
		timed blkread dd "$n" -- dd if="$f" of=/dev/null bs=1M iflag=direct || return 1
		[ -n "$WARM" ] || awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") { printf "%.0f\n", $1 / $(i - 1) } }' "$TMP/err" |
			tail -n 1 | peer_lines dd "$DD_VERSION" blkread dd "$own" throughput_bytes_per_s
		;;
	esac
}

bench_blkread() {
	ours blkread || { skip "blkread: $BIN/blkread is not built"; return 0; }
	ours blkwrite || { skip "blkread: $BIN/blkwrite is not built to write the file it reads"; return 0; }
	have fio || have dd || { skip "blkread: neither fio nor dd is installed"; return 0; }
	scratch_dir blkread || return 0
	[ ! -e "$dir/bench.dat" ] || { echo "bench/run: $dir/bench.dat exists; bench/run will not overwrite it" >&2; failed=1; return 0; }
	# One file of random data, fsynced, for every read (the reads are O_DIRECT: no cache).
	"$BIN/blkwrite" -s "$BLK_SEQ" -b 4M --keep -q -o /dev/null "$dir/bench.dat" ||
		{ echo "bench/run: blkwrite could not write the file blkread reads" >&2; failed=1; return 0; }
	say "blkread: scratch $dir ($(df -PT "$dir" | awk 'NR == 2 { print $2 " on " $1 }')), a $BLK_SEQ file, random reads over $BLK_RAND of it"
	if have fio; then FIO_VERSION=$(fio --version | sed 's/^fio-//'); else skip "blkread vs fio: fio is not installed"; fi
	if have dd; then DD_VERSION=$(dd --version 2>/dev/null | awk 'NR == 1 { print $NF }'); else skip "blkread vs dd: dd is not installed"; fi
	for c in "random 4k O_DIRECT depth 1, ${BLK_RAND_T}s over $BLK_RAND" "random 4k O_DIRECT depth 32, ${BLK_RAND_T}s over $BLK_RAND" \
		"sequential O_DIRECT 1M, $BLK_SEQ"; do
		impls=blkread
		have fio && impls="$impls fio"
		case $c in sequential*) have dd && impls="$impls dd" ;; esac
		[ "$impls" != blkread ] || continue
		key=reads_per_s
		case $c in sequential*) key=throughput_bytes_per_s ;; esac
		br_case() { br_one "$c" "$1"; }
		# The random cases in three times the rounds: a shared virtual disk's IOPS wander by 30%
		# from one 3 s run to the next, and the targets are 5% and 10%.
		rounds_save=$rounds
		case $c in random*) rounds=$((rounds * 3)) ;; esac
		say "blkread: $c ($impls, $rounds rounds)"
		alternate br_case $impls || { rounds=$rounds_save; continue; }
		rounds=$rounds_save
		for p in fio dd; do
			case " $impls " in *" $p "*)
				# A timed run's whole-command time is its --time: only the sequential case's says
				# which tool is faster.
				case $c in sequential*) group blkread "$p" wall_s "blkread: $c" blkread ;; esac
				group blkread "$p" "$key" "blkread: $c, own figure" blkread
				;;
			esac
		done
		case $c in random*)
			have fio || continue
			group blkread fio latency_p99_s "blkread: $c, own figure" blkread
			target blkread "blkread IOPS, ${c%%,*}" "blkread: $c, own figure" reads_per_s median fio ours/peer '>=' 0.95
			target blkread "blkread p99 against fio's clat p99, ${c%%,*}" "blkread: $c, own figure" latency_p99_s median fio ours/peer within 0.10
			;;
		esac
	done
	rm -f "$dir/bench.dat"
}
