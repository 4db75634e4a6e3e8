complete -c timecmd -s r -l runs -d 'Measured runs (1 is like time)' -r
complete -c timecmd -l warmup -d 'Unrecorded runs before the measured ones, to warm caches' -r
complete -c timecmd -l setup -d 'Shell command run once before all runs (e.g. building the input); a failure stops timecmd (exit 125)' -r
complete -c timecmd -l prepare -d 'Shell command run before every run, warm-ups included (e.g. dropping caches); its stdout is discarded; a failure stops timecmd (exit 125)' -r
complete -c timecmd -l cleanup -d 'Shell command run once after the last run (also after a failure or Ctrl-C)' -r
complete -c timecmd -l time-limit -d 'Kill a run\'s whole process group (SIGKILL) after DURATION (30s, 500ms; a bare number is seconds) and record it as timed out' -r
complete -c timecmd -l shell -d 'Run COMMAND (its words joined by spaces) as one string through SHELL -c (default sh)' -r
complete -c timecmd -l stdout -d 'The command\'s stdout: inherit, null, pipe (read and discarded by timecmd, for programs that skip work on /dev/null), or FILE (truncated before each run; hyperfine\'s --output)' -r
complete -c timecmd -l input -d 'The command\'s stdin: inherit, null, or FILE (every run reads it from the start)' -r
complete -c timecmd -s f -l format -d 'GNU time -f\'s report after each run: %e %E %U %S %P %M %t %K %D %p %X %Z %F %R %W %c %w %I %O %r %s %k %C %x, \\n \\t \\\\ and %%' -r
complete -c timecmd -l time-output -d 'GNU time\'s report to FILE (truncated before the first run, unless -a) instead of stderr; with -p, -v, -f or -a given, -o and --output mean this, and the records take --records FILE' -r -F
complete -c timecmd -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c timecmd -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c timecmd -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c timecmd -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human summary. With GNU time\'s -p, -v, -f or -a, -o is GNU time\'s (--time-output): give the records as --records FILE' -r
complete -c timecmd -l ignore-failure -d 'Keep going after a run that fails (non-zero exit, signal, time limit); count the runs that ended in the statistics'
complete -c timecmd -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c timecmd -s p -l portability -d 'POSIX time\'s report after each run: real, user and sys seconds (time -p)'
complete -c timecmd -s v -l verbose -d 'GNU time -v\'s report after each run: every rusage field, one a line'
complete -c timecmd -s a -l append -d 'With -o FILE in GNU time\'s form: append the report instead of truncating FILE'
complete -c timecmd -l json -d 'Records on stderr even when it is a terminal (stdout is the command\'s)'
complete -c timecmd -s h -l help -d 'Print help (see more with \'--help\')'
complete -c timecmd -s V -l version -d 'Print version'
