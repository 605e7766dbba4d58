#!/bin/sh
# scripts/testhosts: namespaces, veth on a bridge, addresses, loopback,
# multicast route, hosts file; up and down idempotent.
. "$(dirname "$0")/lib.sh"
why=$(netns_why)
[ -z "$why" ] || skip_all "$why"
TH=$SRC/scripts/testhosts
ip netns list 2>/dev/null | grep -q '^ibc-h' && skip_all "test hosts exist already (in use by another test)"
"$TH" up 3 >/dev/null
is "$?" 0 "up 3"
HOSTS_UP=1
"$TH" up 3 >/dev/null
is "$?" 0 "up 3 again (idempotent)"
is "$(ip netns list | grep -c '^ibc-h[123]\b')" 3 "three namespaces"
is "$(ip -n ibc-h2 -4 -o addr show dev eth0 | awk '{print $4}')" 10.77.0.2/24 "ibc-h2 has 10.77.0.2"
like "$(ip -n ibc-h3 link show lo)" "UP" "loopback up"
like "$(ip -n ibc-h1 route show 224.0.0.0/4)" "224.0.0.0/4 dev eth0" "multicast route"
like "$(ip link show ibc-v2)" "master ibc-br0" "veth on the bridge"
like "$(cat /run/ibchar/testhosts.hosts)" "10.77.0.3 ibc-h3" "hosts file lists the hosts"
# a TCP connection between two hosts through the bridge, via the launcher itself
out=$("$LAUNCH" -n 2 --hosts ibc-h1,ibc-h3 --rsh 'ip netns exec {host}' -- sh -c 'echo $IBC_LAUNCH_HOST' | sort | tr '\n' ' ')
is "$out" "ibc-h1 ibc-h3 " "hosts reach the launcher on the bridge"
"$TH" down
is "$?" 0 "down"
HOSTS_UP=0
is "$(ip netns list | grep -c '^ibc-h')" 0 "no namespace left"
ip link show ibc-br0 >/dev/null 2>&1
ok "$([ $? != 0 ]; echo $?)" "bridge removed"
"$TH" down
is "$?" 0 "down again (idempotent)"
"$TH" up 0 >/dev/null 2>&1
ok "$([ $? != 0 ]; echo $?)" "up 0 rejected"
done_testing
