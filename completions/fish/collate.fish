complete -c collate -s f -l format -d 'Output format' -r -f -a "text\t''
dokuwiki\t''
markdown\t''
html\t''
csv\t''
json\t''
svg\t''"
complete -c collate -l metric -d 'Metrics to show (keys in values, e.g. rtt_s); default: each measurement\'s headline' -r
complete -c collate -l rows -d 'What makes a row (comma-separated keys)' -r
complete -c collate -l cols -d 'What makes a column (comma-separated keys; the label stacks its / levels)' -r
complete -c collate -l filter -d 'Only records that match, e.g. \'label:para/* -host:dom0\' (benchstat\'s syntax)' -r
complete -c collate -l columns -d 'Show these columns (labels), in this order' -r
complete -c collate -l stat -d 'Cell statistic: median, mean, min, max or pNN (p90, p99.9)' -r
complete -c collate -l baseline -d 'Compare each cell with this column (or, per column, the one where KEY is VALUE)' -r
complete -c collate -l change-alpha -d 'With --history: keep a change where its permutation p-value is below P (default 0.01)' -r
complete -c collate -l change-min-runs -d 'With --history: the fewest runs on each side of a change (default 3, at least 2)' -r
complete -c collate -l transpose -d 'Swap rows and columns (text, dokuwiki, markdown, html, json)'
complete -c collate -l no-ci -d 'Do not show the ± confidence interval'
complete -c collate -l include-partial -d 'Count the values of runs that did not finish (summary not ok, or none), marked *'
complete -c collate -l latest -d 'Keep only each cell\'s newest run (by the records\' time)'
complete -c collate -l verbose -d 'Under the text matrix, each note\'s detail too: which runs were left out and why, which runs differ, which rows a column\'s newest run lacks (html shows it folded, the other formats always); and each fact whole (the text matrix cuts one over 32 characters with …)'
complete -c collate -l times -d 'Instead of the matrix, how long each measurement took in each suite run (its records\' first time to its last) and its share of the run, then the time between the tools (the run less the union of the spans, never negative) and, where spans overlap, the seconds covered by more than one; -f text or csv (each line also gives its run\'s run_seconds, between_seconds, between_share and overlap_seconds), --latest for each label\'s newest run'
complete -c collate -l history -d 'Instead of the matrix, each row of each label as its runs in order of time (a point per run: its statistic and 95% CI), with the runs where the level shifted (e-divisive means, a permutation test) and the facts that differ around each; -f text (sparklines), html or svg (a chart per row and label), json or csv; --filter, --metric, --stat, --rows, --cols (what a series is, default label) and --include-partial apply'
complete -c collate -l skip-invalid -d 'Skip lines that are not valid records (counted on stderr) instead of stopping'
complete -c collate -s h -l help -d 'Print help (see more with \'--help\')'
complete -c collate -s V -l version -d 'Print version'
