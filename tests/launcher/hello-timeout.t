#!/bin/sh
# A connection to an agent's port that never sends a whole HELLO is closed
# after IBC_LAUNCH_HELLO_TIMEOUT, not kept until the job ends; the job's own
# agents, which say HELLO at once, are not affected.
. "$(dirname "$0")/lib.sh"
command -v perl >/dev/null || skip_all "no perl"

printf '127.0.0.1 fakehost1 fakehost2\n' > "$TMP/hosts"
export IBC_HOSTS_FILE="$TMP/hosts"
# a remote shell that logs the command (it holds the launcher's port) and runs it here
cat > "$TMP/rsh" <<'SH'
#!/bin/sh
shift
echo "$@" >> "${0%/*}/rsh.log"
exec "$@"
SH
chmod +x "$TMP/rsh"

# probe <bytes to send>: connects to the launcher's port, sends them, then
# waits up to 30 s for the other side to close; prints "closed" or "open"
probe() {
	perl -MIO::Socket::INET -e '
		my ($port, $send) = @ARGV;
		my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port) or die "connect: $!";
		print $s $send if length $send;
		$s->flush;
		my $buf; my $rin = ""; vec($rin, fileno($s), 1) = 1;
		my $n = select(my $r = $rin, undef, undef, 30);
		print $n > 0 && !sysread($s, $buf, 1) ? "closed" : "open";
	' "$1" "$2"
}

# run <label> <bytes>: a job of 2 hosts whose rank 0 waits for the test to say
# stop; the probe must be closed before that, and the job must still end well
run() {
	rm -f "$TMP/rsh.log"
	IBC_LAUNCH_HELLO_TIMEOUT=1 "$LAUNCH" -n 2 --hosts fakehost1,fakehost2 --rsh "$TMP/rsh {host}" --timeout 60 \
		-- sh -c "[ \$PMI_RANK = 0 ] && while [ ! -e $TMP/stop ]; do sleep 0.2; done; exit 0" "$MARK" \
		>"$TMP/out" 2>"$TMP/err" &
	lpid=$!
	i=0
	while [ ! -s "$TMP/rsh.log" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	port=$(sed -n 's/.*--agent [^:]*:\([0-9]*\):.*/\1/p' "$TMP/rsh.log" | head -1)
	got=$(probe "$port" "$2")
	touch "$TMP/stop"
	wait $lpid
	st=$?
	rm -f "$TMP/stop"
	is "$got" closed "$1: closed by the agent while the job still ran"
	is "$st" 0 "$1: the job itself ended well"
	like "$(cat "$TMP/err")" "sent no HELLO within 1 s" "$1: the agent says why"
}

run "a connection that sends nothing" ""
run "a connection that sends half a frame header" "CI"
sleep 0.2
is "$(leftovers)$(agents_left)" 00 "nothing left running"
done_testing
