complete -c cpumem -l only -d 'Only these probes, comma-separated: syscall,pipe1,pipe2,spawn,fault,memread,memwrite,memcopy,memlat,clock (default: all, in that order)' -r
complete -c cpumem -s t -l time -d 'How long each probe runs, its batches together (250ms, 2s; a bare number is seconds)' -r
complete -c cpumem -s c -l count -d 'Batches per probe: the samples of each row' -r
complete -c cpumem -l cpu -d 'Pin the probes (and the processes they start) to CPU N' -r
complete -c cpumem -s s -l size -d 'Buffer of the bandwidth probes (default: 4x the last-level cache, at least 64M, at most an eighth of memory or of the cgroup memory limit; 4k = 4096)' -r
complete -c cpumem -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c cpumem -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c cpumem -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c cpumem -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c cpumem -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c cpumem -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c cpumem -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cpumem -s V -l version -d 'Print version'
