complete -c pingrt -s c -l count -d 'Probes to send; 0: until the deadline or Ctrl-C. With -w: replies to wait for' -r
complete -c pingrt -s i -l interval -d 'Time between probes; a bare number is seconds (0.2 = 200ms). Below 200ms only for root' -r
complete -c pingrt -s W -l timeout -d 'How long each probe waits for its reply (default 10s; 0: for ever); a bare number is seconds' -r
complete -c pingrt -s w -l deadline -d 'Stop after this long whatever was sent or received; a bare number is seconds' -r
complete -c pingrt -s s -l size -d 'Payload bytes after the 8-byte ICMP header (default 56, as ping)' -r
complete -c pingrt -s t -l ttl -d 'IPv4 time to live or IPv6 hop limit of the requests' -r
complete -c pingrt -s I -l interface -d 'Source address, or interface name to send from (SO_BINDTODEVICE)' -r
complete -c pingrt -l socket -d 'Socket kind: raw (needs CAP_NET_RAW), dgram (net.ipv4.ping_group_range) or auto' -r -f -a "auto\t''
raw\t''
dgram\t''"
complete -c pingrt -l tx-stamp -d 'Send time: kernel (the driver\'s software stamp, else the device queue\'s, else user), user (time before sendto, as ping); auto: kernel, but user with --flood' -r -f -a "auto\t''
kernel\t''
user\t''"
complete -c pingrt -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c pingrt -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c pingrt -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c pingrt -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c pingrt -s 4 -d 'Use IPv4 (ICMP) only'
complete -c pingrt -s 6 -d 'Use IPv6 (ICMPv6) only'
complete -c pingrt -s f -l flood -d 'Send the next probe as soon as the reply came, or every 10ms (with -i: every interval); root only below -i 0.2'
complete -c pingrt -s D -l timestamps -d 'Start each probe\'s line with the time it is printed, [UNIX seconds.microseconds], as ping -D'
complete -c pingrt -s O -l report-outstanding -d 'Say "no answer yet for icmp_seq=N" when the next probe goes out before probe N\'s reply came, as ping -O'
complete -c pingrt -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c pingrt -s n -d 'Accepted for ping compatibility: pingrt never looks names up in reverse'
complete -c pingrt -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c pingrt -s h -l help -d 'Print help (see more with \'--help\')'
complete -c pingrt -s V -l version -d 'Print version'
