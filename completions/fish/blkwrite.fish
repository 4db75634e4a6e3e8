complete -c blkwrite -s s -l size -d 'Bytes to write, dd sizes: 512M, 2G, 1000000 (default for a block device: all of it)' -r
complete -c blkwrite -s c -l count -d 'Number of --bs writes (dd\'s count=)' -r
complete -c blkwrite -s b -l bs -d 'Bytes per write (dd\'s bs=); the last write of an odd --size is shorter' -r
complete -c blkwrite -l offset -d 'Start writing at this byte of the target (dd\'s seek= times bs=); --size counts from there' -r
complete -c blkwrite -l direct -d 'O_DIRECT, bypassing the page cache; refused where it would not be honoured (tmpfs, checksummed btrfs) unless --direct=try, which runs and reports direct_effective: false' -r -f -a "on\t''
try\t''
off\t''"
complete -c blkwrite -l flush -d 'fsync: end (once after the last write, dd conv=fsync), every=N (after every N writes and at the end), none' -r
complete -c blkwrite -l pattern -d 'Data written: random (generated before timing; zeros flatter compressing and deduplicating storage) or zero' -r -f -a "random\t''
zero\t''"
complete -c blkwrite -l fallocate -d 'Preallocate a new file with fallocate(2) before timing, as fio does: auto = on with --random (else every random write into a hole also times the file system\'s allocator), off when sequential (as dd)' -r -f -a "auto\t''
on\t''
off\t''"
complete -c blkwrite -l seed -d 'Seed for the random data and offsets, 0 to 2^53 - 1 so that every JSON reader (jq too) holds it exactly (default: a fresh one each run, reported in begin)' -r
complete -c blkwrite -l iodepth -d 'Writes in flight: 1 uses pwrite(2) (fio psync); more uses io_uring' -r
complete -c blkwrite -s t -l time -d 'Stop writing after DURATION (250ms, 10s, 2m; a bare number is seconds; not 0) even if --size is not reached' -r
complete -c blkwrite -l dd-form -r
complete -c blkwrite -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c blkwrite -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c blkwrite -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c blkwrite -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c blkwrite -l fdatasync -d 'Flush with fdatasync instead of fsync (dd conv=fdatasync)'
complete -c blkwrite -l dsync -d 'Open with O_DSYNC: every write durable before it returns (dd oflag=dsync)'
complete -c blkwrite -l random -d 'Random offsets within --size, each block written once (fio --rw=randwrite)'
complete -c blkwrite -l verify -d 'After the flush, read everything written back and check it'
complete -c blkwrite -l verify-only -d 'Write nothing: check a target written before with the same --seed, --bs, --size, --pattern (one shorter than --size is checked as far as it goes, and fails)'
complete -c blkwrite -l keep -d 'Keep the file blkwrite created (it is removed at the end by default)'
complete -c blkwrite -l force -d 'Overwrite an existing regular file in place (it is not truncated, and kept); make a new one even where the file system reports less free space than --size'
complete -c blkwrite -l force-device -d 'Write a block device (never one mounted, in use, or holding a signature)'
complete -c blkwrite -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c blkwrite -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c blkwrite -s h -l help -d 'Print help (see more with \'--help\')'
complete -c blkwrite -s V -l version -d 'Print version'
