# Two "hosts" on this machine, for tests/multinode/test_netns.sh and
# bench/multinode/bench_netns.sh (sourced, bash): network namespaces $A and
# $B joined by a veth pair, 198.18.8.1 on A and 198.18.8.2 on B (RFC 2544's
# benchmarking range, which exists only inside the pair), an interface named
# onic0 on both sides; $tmp/nsrsh, a remote shell that runs a command on
# either host; $tmp/on_a, to run a command on A under A's host name. Everything
# is removed on exit. Exits 77 where namespaces cannot be made.
id=$$
A=onicA$id B=onicB$id
tmp=$(mktemp -d /tmp/onic-netns.XXXXXX)

cleanup() {
    for ns in $A $B; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    ip link del "va$id" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null 2>&1 || ! ip netns add "$A" 2>/dev/null; then
    echo "skip: cannot create network namespaces here (needs root and iproute2)"
    exit 77
fi
if ! ip netns add "$B" || ! ip link add "va$id" type veth peer name "vb$id" ||
   ! ip link set "va$id" netns "$A" || ! ip link set "vb$id" netns "$B"; then
    echo "skip: cannot join two network namespaces with a veth pair"
    exit 77
fi
ip -n "$A" link set "va$id" name onic0
ip -n "$B" link set "vb$id" name onic0
ip -n "$A" addr add 198.18.8.1/24 dev onic0
ip -n "$B" addr add 198.18.8.2/24 dev onic0
for ns in $A $B; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set onic0 up
done

# The remote shell: "nsrsh HOST COMMAND..." runs COMMAND in HOST's network
# namespace, under HOST's own host name (a UTS namespace): launchers tell
# nodes apart by name, as on a real cluster. With NETNS_PIN=1 set before
# sourcing (the benchmark), what runs on A is pinned to core 0 and on B to
# core 1.
cat > "$tmp/nsrsh" <<EOS
#!/bin/sh
host=\$1; shift
case "\$host" in
198.18.8.1) ns=$A cpu=0 ;;
198.18.8.2) ns=$B cpu=1 ;;
*) echo "nsrsh: unknown host \$host" >&2; exit 255 ;;
esac
pin=
[ "${NETNS_PIN:-0}" = 1 ] && pin="taskset -c \$cpu"
exec ip netns exec "\$ns" unshare --uts \$pin sh -c "hostname \$ns; \$*"
EOS
chmod +x "$tmp/nsrsh"


# "$tmp/on_a COMMAND...": run a command on host A, under its own host name.
cat > "$tmp/on_a" <<EOS
#!/bin/sh
exec ip netns exec "$A" unshare --uts sh -c 'hostname "\$0"; exec "\$@"' "$A" "\$@"
EOS
chmod +x "$tmp/on_a"
