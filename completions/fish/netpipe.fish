# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_netpipe_global_optspecs
    string join \n l p= s= k w= d N n v window= no-delay 4 6 connect-timeout= idle-timeout= quiet label= name= tag= o/output= json h/help V/version
end

function __fish_netpipe_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_netpipe_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_netpipe_using_subcommand
    set -l cmd (__fish_netpipe_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c netpipe -n "__fish_netpipe_needs_command" -s p -d 'With -l: the port to listen on; else the local source port (nc -p)' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -s s -d 'Local address to bind (nc -s); with -l, the address to listen on' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -s w -d 'Connect and idle timeout (nc -w), e.g. 5 or 500ms' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -l window -d 'Socket send and receive buffers, e.g. 4M (default: the kernel\'s autotuning)' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -l connect-timeout -d 'Give up a connect after this long, e.g. 3 or 500ms (default: the kernel\'s)' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -l idle-timeout -d 'End a connection on which nothing arrives for this long (default: wait forever, like nc)' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -s o -l output -d 'Append the records to FILE instead of stderr (- is stdout, which carries the payload: avoid)' -r
complete -c netpipe -n "__fish_netpipe_needs_command" -s l -d 'Listen for a connection and write what arrives to stdout (nc -l)'
complete -c netpipe -n "__fish_netpipe_needs_command" -s k -d 'With -l: accept one connection after another (nc -k); stdin goes to the first'
complete -c netpipe -n "__fish_netpipe_needs_command" -s d -d 'Do not read stdin (nc -d): only receive'
complete -c netpipe -n "__fish_netpipe_needs_command" -s N -d 'Accepted for nc compatibility: netpipe always half-closes after stdin EOF'
complete -c netpipe -n "__fish_netpipe_needs_command" -s n -d 'Accepted for nc compatibility (numeric addresses are never looked up anyway)'
complete -c netpipe -n "__fish_netpipe_needs_command" -s v -d 'Accepted for nc compatibility: the human summary shows when stderr is a terminal'
complete -c netpipe -n "__fish_netpipe_needs_command" -l no-delay -d 'Disable Nagle\'s algorithm (TCP_NODELAY)'
complete -c netpipe -n "__fish_netpipe_needs_command" -s 4 -d 'IPv4 only'
complete -c netpipe -n "__fish_netpipe_needs_command" -s 6 -d 'IPv6 only'
complete -c netpipe -n "__fish_netpipe_needs_command" -l quiet -d 'No human summary on stderr, even on a terminal'
complete -c netpipe -n "__fish_netpipe_needs_command" -l json -d 'Records on stderr even when it is a terminal (stdout carries the payload)'
complete -c netpipe -n "__fish_netpipe_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netpipe -n "__fish_netpipe_needs_command" -s V -l version -d 'Print version'
complete -c netpipe -n "__fish_netpipe_needs_command" -a "send" -d 'Send generated data (zeros or random) and measure (the source, like iperf3 -c)'
complete -c netpipe -n "__fish_netpipe_needs_command" -a "recv" -d 'Receive and discard without copying, and measure (the sink, like iperf3 -s)'
complete -c netpipe -n "__fish_netpipe_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l listen -d 'Listen for the peer on PORT (all addresses) or ADDR:PORT' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l connect -d 'Connect to the peer at HOST:PORT ([V6ADDR]:PORT for IPv6)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l bytes -d 'Move SIZE bytes in all (4k = 4096, 5G, 1.5GiB; 5GB = 5e9; not 0), then close (default: until EOF / Ctrl-C)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s t -l time -d 'Move data for this long after the warm-up, e.g. 10 or 10s (default: until EOF / Ctrl-C)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s i -l interval -d 'Write an interval record this often, e.g. 1 or 500ms (default: none)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s P -l parallel -d 'Streams: a connecting side opens N; a listener takes N per session (default: 1 to connect; a listener takes all that join)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l token -d 'A listener takes only netpipe clients that give this TOKEN (16 to 48 printable characters: a shorter one can be guessed; e.g. 128 random bits in hex). Others are refused (told which listener refused them: its pid), logged on stderr and counted as refused_count, and each refusal makes the next connection from the same address wait longer (100 ms, doubling, at most 5 s); other addresses are served at once. A client gives it after its hello; with --udp the sender\'s start datagram and a connecting receiver\'s hello carry it, and a datagram without it is a stray. Default: the NETPIPE_TOKEN environment variable, which ps does not show (--token is on the command line, which any local user reads)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s O -l omit -d 'Leave the first DURATION (TCP slow start) out of the result, e.g. 2' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l window -d 'Socket send and receive buffers, e.g. 4M (default: the kernel\'s autotuning)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s C -l congestion -d 'TCP congestion control, e.g. cubic or bbr (see /proc/sys/net/ipv4/tcp_available_congestion_control)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s M -l mss -d 'TCP maximum segment size (TCP_MAXSEG), e.g. 1400' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s B -l bind -d 'Local address (ADDR or ADDR:PORT) to connect from' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s b -l bs -d 'Bytes per send or receive call [default: 1M to send with copy or sendfile (the memfd\'s size); 64k with splice (the pipe size, at most 1M), 4M to receive]' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l rate -d 'With --udp: send at RATE bits per second, paced evenly, e.g. 100M (k, M, G are 1000-based, as iperf3 -b) [default: 1M]' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l send-method -d 'copy: send() from a 1M buffer (iperf3 copies from 128k); sendfile: sendfile() from a memfd holding the pattern, no copy (like iperf3 -Z); splice: tee+splice the buffer\'s pages into the socket, no copy (both fall back to copy)' -r -f -a "sendfile\t''
splice\t''
copy\t''"
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l pattern -d 'Data to send: zero bytes, or random (incompressible)' -r -f -a "zero\t''
random\t''"
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l connect-timeout -d 'Give up a connect after this long, e.g. 3 or 500ms (default: the kernel\'s)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l idle-timeout -d 'End a stream on which nothing moves for this long; 0 waits forever [default: 30]' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l bidir -d 'With --connect: both directions at once, as many streams each way (-P), one figure per direction (the summary\'s reverse_ values); the netpipe listener takes the other role on the reverse streams'
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l udp -d 'UDP datagrams instead of a TCP stream: the receiver reports loss_ratio, jitter_s (RFC 3550), reordered and duplicate datagrams, and stray_count: datagrams from others than the sender (the first address whose start datagram proves the --token, or any start without one), or not netpipe\'s, ignored; -b is the datagram size [default: 1460]'
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l no-delay -d 'Disable Nagle\'s algorithm (TCP_NODELAY)'
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l keep-open -d 'With --listen: serve clients until Ctrl-C, several at once, each its own session (a netpipe client\'s -P streams together); a bad or vanished client holds up no other'
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s 4 -d 'IPv4 only'
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s 6 -d 'IPv6 only'
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c netpipe -n "__fish_netpipe_using_subcommand send" -s h -l help -d 'Print help'
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l listen -d 'Listen for the peer on PORT (all addresses) or ADDR:PORT' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l connect -d 'Connect to the peer at HOST:PORT ([V6ADDR]:PORT for IPv6)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l bytes -d 'Move SIZE bytes in all (4k = 4096, 5G, 1.5GiB; 5GB = 5e9; not 0), then close (default: until EOF / Ctrl-C)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s t -l time -d 'Move data for this long after the warm-up, e.g. 10 or 10s (default: until EOF / Ctrl-C)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s i -l interval -d 'Write an interval record this often, e.g. 1 or 500ms (default: none)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s P -l parallel -d 'Streams: a connecting side opens N; a listener takes N per session (default: 1 to connect; a listener takes all that join)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l token -d 'A listener takes only netpipe clients that give this TOKEN (16 to 48 printable characters: a shorter one can be guessed; e.g. 128 random bits in hex). Others are refused (told which listener refused them: its pid), logged on stderr and counted as refused_count, and each refusal makes the next connection from the same address wait longer (100 ms, doubling, at most 5 s); other addresses are served at once. A client gives it after its hello; with --udp the sender\'s start datagram and a connecting receiver\'s hello carry it, and a datagram without it is a stray. Default: the NETPIPE_TOKEN environment variable, which ps does not show (--token is on the command line, which any local user reads)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s O -l omit -d 'Leave the first DURATION (TCP slow start) out of the result, e.g. 2' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l window -d 'Socket send and receive buffers, e.g. 4M (default: the kernel\'s autotuning)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s C -l congestion -d 'TCP congestion control, e.g. cubic or bbr (see /proc/sys/net/ipv4/tcp_available_congestion_control)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s M -l mss -d 'TCP maximum segment size (TCP_MAXSEG), e.g. 1400' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s B -l bind -d 'Local address (ADDR or ADDR:PORT) to connect from' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s b -l bs -d 'Bytes per send or receive call [default: 1M to send with copy or sendfile (the memfd\'s size); 64k with splice (the pipe size, at most 1M), 4M to receive]' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l connect-timeout -d 'Give up a connect after this long, e.g. 3 or 500ms (default: the kernel\'s)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l idle-timeout -d 'End a stream on which nothing moves for this long; 0 waits forever [default: 30]' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l bidir -d 'With --connect: both directions at once, as many streams each way (-P), one figure per direction (the summary\'s reverse_ values); the netpipe listener takes the other role on the reverse streams'
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l udp -d 'UDP datagrams instead of a TCP stream: the receiver reports loss_ratio, jitter_s (RFC 3550), reordered and duplicate datagrams, and stray_count: datagrams from others than the sender (the first address whose start datagram proves the --token, or any start without one), or not netpipe\'s, ignored; -b is the datagram size [default: 1460]'
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l no-delay -d 'Disable Nagle\'s algorithm (TCP_NODELAY)'
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l keep-open -d 'With --listen: serve clients until Ctrl-C, several at once, each its own session (a netpipe client\'s -P streams together); a bad or vanished client holds up no other'
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s 4 -d 'IPv4 only'
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s 6 -d 'IPv6 only'
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c netpipe -n "__fish_netpipe_using_subcommand recv" -s h -l help -d 'Print help'
complete -c netpipe -n "__fish_netpipe_using_subcommand help; and not __fish_seen_subcommand_from send recv help" -f -a "send" -d 'Send generated data (zeros or random) and measure (the source, like iperf3 -c)'
complete -c netpipe -n "__fish_netpipe_using_subcommand help; and not __fish_seen_subcommand_from send recv help" -f -a "recv" -d 'Receive and discard without copying, and measure (the sink, like iperf3 -s)'
complete -c netpipe -n "__fish_netpipe_using_subcommand help; and not __fish_seen_subcommand_from send recv help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
