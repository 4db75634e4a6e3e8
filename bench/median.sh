# bench/median.sh: the median every bench script takes, written once; sourced by them and by
# bench/run. MEDIAN_AWK is the awk function, for the scripts' own awk programs (prepend it to
# the program text, which works in every awk); median is the shell's.

# median(list): the median of the numbers in the space-separated `list` ("nan" for none); the
# mean of the middle two for an even count.
MEDIAN_AWK='
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	if (n == 0) return "nan"
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
'

# median [FILE]: the median of the numbers in FILE (or on stdin), one a line.
median() {
	awk "$MEDIAN_AWK"'$1 ~ /^[-+0-9.eE]+$/ { l = l " " $1 } END { print median(l) }' ${1+"$1"}
}
