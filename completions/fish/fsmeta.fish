complete -c fsmeta -s n -l files -d 'Number of files to create, stat and unlink (fs_mark\'s -n; bonnie++ -n 16 is 16384)' -r
complete -c fsmeta -s s -l size -d 'Bytes written into each file, dd sizes: 0, 4k, 1M' -r
complete -c fsmeta -l dirs -d 'Spread the files over D subdirectories of the private directory, in turn (0: all in it)' -r
complete -c fsmeta -l seed -d 'Seed of the random orders of the stat and unlink phases, 0 to 2^53 - 1 so that every JSON reader (jq too) holds it exactly (default: a fresh one each run, reported in begin)' -r
complete -c fsmeta -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c fsmeta -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c fsmeta -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c fsmeta -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c fsmeta -l fsync -d 'fsync each file before closing it (bonnie++ -b, fs_mark -S 1)'
complete -c fsmeta -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c fsmeta -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c fsmeta -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsmeta -s V -l version -d 'Print version'
