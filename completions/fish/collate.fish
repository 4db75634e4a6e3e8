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
complete -c collate -l transpose -d 'Swap rows and columns (text, dokuwiki, markdown, html, json)'
complete -c collate -l no-ci -d 'Do not show the ± confidence interval'
complete -c collate -l include-partial -d 'Count the values of runs that did not finish (summary not ok, or none), marked *'
complete -c collate -l latest -d 'Keep only each cell\'s newest run (by the records\' time)'
complete -c collate -l verbose -d 'Under the text matrix, each note\'s detail too: which runs were left out and why, which runs differ, which rows a column\'s newest run lacks (html shows it folded, the other formats always)'
complete -c collate -l times -d 'Instead of the matrix, how long each measurement took in each suite run (its records\' first time to its last) and its share of the run; -f text or csv, --latest for each label\'s newest run'
complete -c collate -l skip-invalid -d 'Skip lines that are not valid records (counted on stderr) instead of stopping'
complete -c collate -s h -l help -d 'Print help (see more with \'--help\')'
complete -c collate -s V -l version -d 'Print version'
