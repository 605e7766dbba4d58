#!/bin/sh
# Malformed tree frames on a live link: a fake node agent (started through a
# template remote shell) greets the launcher, then misbehaves.  The launcher
# must reject the frame, fail the job with a clear message and clean up.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not found"
printf '127.0.0.1 fakehost1\n' > "$TMP/hosts"
export IBC_HOSTS_FILE="$TMP/hosts"

cat > "$TMP/fake-agent" <<'EOS'
#!/usr/bin/env python3
# usage: fake-agent HOST SELF --agent ADDR:PORT:IDX:TOKEN  (FAKE_MODE selects the misdeed)
import os, socket, struct, sys, time
addr, port, idx, token = sys.argv[4].split(':')
mode = os.environ['FAKE_MODE']
s = socket.create_connection((addr, int(port)))
def frame(typ, payload=b'', src=0, seq=0, aux=0, magic=0x4943, ver=1, length=None):
    n = len(payload) if length is None else length
    return struct.pack('<HBBIIIII', magic, ver, typ, n, src, 0, seq, aux) + payload
if mode == 'badtoken':
    s.sendall(frame(1, src=int(idx), seq=int(token) ^ 1, aux=1)); s.recv(100); sys.exit(0)
s.sendall(frame(1, src=int(idx), seq=int(token), aux=1))
hdr = s.recv(24, socket.MSG_WAITALL)
need = struct.unpack('<I', hdr[4:8])[0]
while need > 0:
    need -= len(s.recv(need))
bad = {
    'badmagic': frame(9, b'x', magic=0x1234),
    'badversion': frame(9, b'x', ver=7),
    'badtype': frame(99),
    'oversize': frame(9, length=0xffffffff),
    'truncated': frame(9, b'line')[:10],
    'badpayload': frame(3, b'\x01\x00'),
}[mode]
s.sendall(bad)
if mode == 'truncated':
    s.close()
    sys.exit(0)
s.settimeout(10)
s.recv(100)  # TERMINATE or the link closed: leave like a real agent
EOS
chmod +x "$TMP/fake-agent"

# fake <mode> <want status> <regex>
fake() {
	t0=$(now)
	FAKE_MODE=$1 "$LAUNCH" -n 1 --hosts fakehost1 --rsh "$TMP/fake-agent {host}" --timeout ${4:-20} \
		-- true "$MARK" >"$TMP/out" 2>"$TMP/err"
	is "$?" "$2" "$1: exit status $2"
	like "$(cat "$TMP/err")" "$3" "$1: message"
	ok "$(elapsed_lt "$t0" 8; echo $?)" "$1: ended quickly"
	sleep 0.2
	is "$(pgrep -f fake-agent | wc -l | tr -d ' ')$(agents_left)" 00 "$1: nothing left running"
}
fake badmagic 1 "malformed frame from fakehost1"
fake badversion 1 "malformed frame from fakehost1"
fake badtype 1 "malformed frame from fakehost1"
fake oversize 1 "malformed frame from fakehost1"
fake truncated 1 "lost the node agent on fakehost1"
fake badpayload 1 "malformed COLL_UP"
fake badtoken 1 "bad greeting"
done_testing
