complete -c benchmatrix -l label -d 'environment label, levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c benchmatrix -l peer -d 'measure network and ICMP against HOST, which runs ./benchmatrix --serve' -r -f -a "(__fish_print_hostnames)"
complete -c benchmatrix -l port -d 'first of the two TCP ports of --serve and --peer (default 5301)' -r
complete -c benchmatrix -l serve-time -d 'with --serve: stop after DUR, e.g. 10m (default: serve until stopped)' -r
complete -c benchmatrix -l token -d 'with --serve: serve only clients that give TOKEN (default: 128 random bits, printed when stderr is a terminal, else put in a file of mode 0600 that it names); with --peer: the token the peer\'s --serve printed (16 to 48 characters, no spaces: a shorter one can be guessed; default: $BENCHMATRIX_TOKEN, which ps does not show, where --token is on the command line that any local user reads)' -r
complete -c benchmatrix -l bind -d 'with --serve: listen on this address only (default: all addresses)' -r
complete -c benchmatrix -l session-time -d 'with --serve: end a client\'s session after DUR (default 10m)' -r
complete -c benchmatrix -l session-bytes -d 'with --serve: end a client\'s session after SIZE bytes (default 1T)' -r
complete -c benchmatrix -l net-time -d 'length of each network transfer (default 1s)' -r
complete -c benchmatrix -l dir -d 'where to write the block file and the metadata step\'s files, each in a scratch directory made there and removed after (default: the current directory)' -r -f -a "(__fish_complete_directories)"
complete -c benchmatrix -l disk-size -d 'size of the block file (default 256M)' -r
complete -c benchmatrix -l runs -d 'repetitions of each network transfer, tar, make and disk measurement (default 6: enough for a 95% CI)' -r
complete -c benchmatrix -l jobs -d 'make -jN, recorded in the tag jobs (default: the number of CPUs)' -r
complete -c benchmatrix -l only -d 'run only these steps: net,icmp,tar,make,cpu,disk,kernel (comma-separated; kernel is not in the default list)' -r -f -a "net\t''
icmp\t''
tar\t''
make\t''
cpu\t''
disk\t''
kernel\t''"
complete -c benchmatrix -l workload -d 'add a workload\'s steps to the run: kernel (unpack and build a Linux kernel, rows "time tar xJf linux" and "time make linux (CONFIG)"; long: about 3 min a run)' -r -f -a "kernel\t''"
complete -c benchmatrix -l kernel-tarball -d 'the kernel tarball (.tar.xz, .tar.gz, .tar.bz2; default: the newest /usr/src/linux-source-*, from Debian\'s linux-source-6.1 package)' -r
complete -c benchmatrix -l kernel-config -d 'the make target that writes the kernel\'s .config (default tinyconfig; defconfig for the full build)' -r
complete -c benchmatrix -l tree-dir -d 'unpack and build the kernel in DIR instead of a tmpfs (which needs root); its file system is the tag fs' -r
complete -c benchmatrix -l results -d 'results directory (default: results)' -r -f -a "(__fish_complete_directories)"
complete -c benchmatrix -s f -l format -d 'matrix format, passed to collate (text, dokuwiki, markdown, html, csv, json, svg); html is also written to report.html in the results directory' -r -f -a "text\t''
dokuwiki\t''
markdown\t''
html\t''
csv\t''
json\t''
svg\t''"
complete -c benchmatrix -l baseline -d 'compare every column with this label\'s (passed to collate)' -r
complete -c benchmatrix -l max-load -d 'before the first step, wait until the 1-minute load average (/proc/loadavg\'s first figure) is LOAD or less, checking every 5 s and saying so on stderr; e.g. the number of CPUs for a machine that others share' -r
complete -c benchmatrix -l max-load-wait -d 'with --max-load: wait at most DUR, then refuse the run with exit status 2 (default 5m)' -r
complete -c benchmatrix -l serve -d 'serve a --peer run from another machine: listen on PORT and PORT+1 (all addresses, or --bind) until Ctrl-C, SIGTERM, SIGHUP or --serve-time; runs no step'
complete -c benchmatrix -l no-matrix -d 'do not print the matrix'
complete -c benchmatrix -s v -l verbose -d 'on a terminal, each tool\'s own lines (per-run detail) and every step\'s time'
complete -c benchmatrix -s h -l help -d 'print this help'
