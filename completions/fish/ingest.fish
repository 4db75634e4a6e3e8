# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_ingest_global_optspecs
    string join \n max-input= q/quiet o/output= json label= name= tag= h/help V/version
end

function __fish_ingest_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_ingest_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_ingest_using_subcommand
    set -l cmd (__fish_ingest_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c ingest -n "__fish_ingest_needs_command" -l max-input -d 'Refuse a source larger than SIZE (4k = 4096, 2G), the most ingest holds in memory' -r
complete -c ingest -n "__fish_ingest_needs_command" -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c ingest -n "__fish_ingest_needs_command" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c ingest -n "__fish_ingest_needs_command" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c ingest -n "__fish_ingest_needs_command" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c ingest -n "__fish_ingest_needs_command" -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c ingest -n "__fish_ingest_needs_command" -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c ingest -n "__fish_ingest_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ingest -n "__fish_ingest_needs_command" -s V -l version -d 'Print version'
complete -c ingest -n "__fish_ingest_needs_command" -a "iperf3" -d 'iperf3 -J or --json-stream output'
complete -c ingest -n "__fish_ingest_needs_command" -a "fio" -d 'fio --output-format=json or json+ output'
complete -c ingest -n "__fish_ingest_needs_command" -a "hyperfine" -d 'hyperfine --export-json output'
complete -c ingest -n "__fish_ingest_needs_command" -a "ping" -d 'ping text (iputils, BSD, busybox)'
complete -c ingest -n "__fish_ingest_needs_command" -a "fping" -d 'fping -C, -c or -e text'
complete -c ingest -n "__fish_ingest_needs_command" -a "figures" -d 'KEY=VALUE lines, a sample each, of the tool --tool names'
complete -c ingest -n "__fish_ingest_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ingest -n "__fish_ingest_using_subcommand iperf3" -l max-input -d 'Refuse a source larger than SIZE (4k = 4096, 2G), the most ingest holds in memory' -r
complete -c ingest -n "__fish_ingest_using_subcommand iperf3" -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c ingest -n "__fish_ingest_using_subcommand iperf3" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c ingest -n "__fish_ingest_using_subcommand iperf3" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c ingest -n "__fish_ingest_using_subcommand iperf3" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c ingest -n "__fish_ingest_using_subcommand iperf3" -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c ingest -n "__fish_ingest_using_subcommand iperf3" -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c ingest -n "__fish_ingest_using_subcommand iperf3" -s h -l help -d 'Print help'
complete -c ingest -n "__fish_ingest_using_subcommand fio" -l max-input -d 'Refuse a source larger than SIZE (4k = 4096, 2G), the most ingest holds in memory' -r
complete -c ingest -n "__fish_ingest_using_subcommand fio" -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c ingest -n "__fish_ingest_using_subcommand fio" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c ingest -n "__fish_ingest_using_subcommand fio" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c ingest -n "__fish_ingest_using_subcommand fio" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c ingest -n "__fish_ingest_using_subcommand fio" -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c ingest -n "__fish_ingest_using_subcommand fio" -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c ingest -n "__fish_ingest_using_subcommand fio" -s h -l help -d 'Print help'
complete -c ingest -n "__fish_ingest_using_subcommand hyperfine" -l max-input -d 'Refuse a source larger than SIZE (4k = 4096, 2G), the most ingest holds in memory' -r
complete -c ingest -n "__fish_ingest_using_subcommand hyperfine" -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c ingest -n "__fish_ingest_using_subcommand hyperfine" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c ingest -n "__fish_ingest_using_subcommand hyperfine" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c ingest -n "__fish_ingest_using_subcommand hyperfine" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c ingest -n "__fish_ingest_using_subcommand hyperfine" -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c ingest -n "__fish_ingest_using_subcommand hyperfine" -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c ingest -n "__fish_ingest_using_subcommand hyperfine" -s h -l help -d 'Print help'
complete -c ingest -n "__fish_ingest_using_subcommand ping" -l max-input -d 'Refuse a source larger than SIZE (4k = 4096, 2G), the most ingest holds in memory' -r
complete -c ingest -n "__fish_ingest_using_subcommand ping" -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c ingest -n "__fish_ingest_using_subcommand ping" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c ingest -n "__fish_ingest_using_subcommand ping" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c ingest -n "__fish_ingest_using_subcommand ping" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c ingest -n "__fish_ingest_using_subcommand ping" -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c ingest -n "__fish_ingest_using_subcommand ping" -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c ingest -n "__fish_ingest_using_subcommand ping" -s h -l help -d 'Print help'
complete -c ingest -n "__fish_ingest_using_subcommand fping" -l max-input -d 'Refuse a source larger than SIZE (4k = 4096, 2G), the most ingest holds in memory' -r
complete -c ingest -n "__fish_ingest_using_subcommand fping" -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c ingest -n "__fish_ingest_using_subcommand fping" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c ingest -n "__fish_ingest_using_subcommand fping" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c ingest -n "__fish_ingest_using_subcommand fping" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c ingest -n "__fish_ingest_using_subcommand fping" -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c ingest -n "__fish_ingest_using_subcommand fping" -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c ingest -n "__fish_ingest_using_subcommand fping" -s h -l help -d 'Print help'
complete -c ingest -n "__fish_ingest_using_subcommand figures" -l max-input -d 'Refuse a source larger than SIZE (4k = 4096, 2G), the most ingest holds in memory' -r
complete -c ingest -n "__fish_ingest_using_subcommand figures" -s o -l output -d 'Append the records to FILE (- is stdout); a terminal still gets the human lines' -r
complete -c ingest -n "__fish_ingest_using_subcommand figures" -l label -d 'Environment label, the matrix column; levels separated by / (default: $BENCH_LABEL, else the host name)' -r
complete -c ingest -n "__fish_ingest_using_subcommand figures" -l name -d 'What is measured, the matrix row (default: derived from the command)' -r
complete -c ingest -n "__fish_ingest_using_subcommand figures" -l tag -d 'A further dimension for collate (repeatable), e.g. --tag disk=lvm' -r
complete -c ingest -n "__fish_ingest_using_subcommand figures" -l tool -d 'The tool that made the figures: the records\' tool' -r
complete -c ingest -n "__fish_ingest_using_subcommand figures" -l tool-version -d 'Its version (default: unknown)' -r
complete -c ingest -n "__fish_ingest_using_subcommand figures" -s q -l quiet -d 'No human lines on stderr, even on a terminal'
complete -c ingest -n "__fish_ingest_using_subcommand figures" -l json -d 'Records on stdout even when it is a terminal (no human lines then)'
complete -c ingest -n "__fish_ingest_using_subcommand figures" -s h -l help -d 'Print help'
complete -c ingest -n "__fish_ingest_using_subcommand help; and not __fish_seen_subcommand_from iperf3 fio hyperfine ping fping figures help" -f -a "iperf3" -d 'iperf3 -J or --json-stream output'
complete -c ingest -n "__fish_ingest_using_subcommand help; and not __fish_seen_subcommand_from iperf3 fio hyperfine ping fping figures help" -f -a "fio" -d 'fio --output-format=json or json+ output'
complete -c ingest -n "__fish_ingest_using_subcommand help; and not __fish_seen_subcommand_from iperf3 fio hyperfine ping fping figures help" -f -a "hyperfine" -d 'hyperfine --export-json output'
complete -c ingest -n "__fish_ingest_using_subcommand help; and not __fish_seen_subcommand_from iperf3 fio hyperfine ping fping figures help" -f -a "ping" -d 'ping text (iputils, BSD, busybox)'
complete -c ingest -n "__fish_ingest_using_subcommand help; and not __fish_seen_subcommand_from iperf3 fio hyperfine ping fping figures help" -f -a "fping" -d 'fping -C, -c or -e text'
complete -c ingest -n "__fish_ingest_using_subcommand help; and not __fish_seen_subcommand_from iperf3 fio hyperfine ping fping figures help" -f -a "figures" -d 'KEY=VALUE lines, a sample each, of the tool --tool names'
complete -c ingest -n "__fish_ingest_using_subcommand help; and not __fish_seen_subcommand_from iperf3 fio hyperfine ping fping figures help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
