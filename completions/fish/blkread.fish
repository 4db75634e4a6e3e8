complete -c blkread -s b -l bs -d 'Bytes per read (default 1M sequential, 4k with --random)' -r
complete -c blkread -s s -l size -d 'Bytes of the target to read, from its start (default: all of it)' -r
complete -c blkread -s t -l time -d 'Read for DURATION (10s, 2m; a bare number is seconds), starting over at the end of --size (fio --time_based); buffered reads after --drop-cache stop at the end of the first pass instead (a second would read the page cache)' -r
complete -c blkread -l seed -d 'Seed for the random offsets, 0 to 2^53 - 1 so that every JSON reader (jq too) holds it exactly (default: a fresh one each run, reported in begin)' -r
complete -c blkread -l iodepth -d 'Reads in flight: 1 uses pread(2) (fio psync); more uses io_uring' -r
complete -c blkread -l direct -d 'O_DIRECT, bypassing the page cache; refused where it would not be honoured (tmpfs) unless --direct=try, which runs and reports direct_effective: false' -r -f -a "on\t''
try\t''
off\t''"
complete -c blkread -s i -l interval -d 'Write an interval record (and the progress line) this often' -r
complete -c blkread -l create -d 'Make TARGET first: SIZE bytes of random data, fsynced, dropped from the cache; removed at the end unless --keep' -r
complete -c blkread -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c blkread -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c blkread -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c blkread -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c blkread -l random -d 'Uniform random block-aligned offsets, every block once per pass (fio --rw=randread)'
complete -c blkread -l keep -d 'Keep the file --create made'
complete -c blkread -l force -d 'Make the --create file even where the file system reports less free space than SIZE'
complete -c blkread -l drop-cache -d 'Write out and evict the target\'s own pages from the page cache before reading (fdatasync, posix_fadvise DONTNEED); partial if over 1% stays cached'
complete -c blkread -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c blkread -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c blkread -s h -l help -d 'Print help (see more with \'--help\')'
complete -c blkread -s V -l version -d 'Print version'
