#!/bin/bash
# Across two hosts made of network namespaces and a veth pair
# (tests/multinode/netns_lib.sh), over libfabric's tcp provider: the 8-byte
# ping-pong latency and message rate of onic (ofi transport, launched by
# Hydra), of raw libfabric (fi_pingpong, same provider), and of MPICH and
# Open MPI running bench/mpi/p2p.c, each launched the same way, one process
# per host (host A's pinned to core 0, B's to core 1), in one run. Prints a
# Markdown table.
#   bench/multinode/bench_netns.sh [BUILD_DIR] [REPS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
reps=${2:-5}
# One process per host, pinned: host A's on core 0, host B's on core 1.
NETNS_PIN=1
source "$here/../../tests/multinode/netns_lib.sh"
export FI_PROVIDER=tcp FI_TCP_IFACE=onic0

src=$here/../mpi/p2p.c
"$build/onicc" -O2 "$src" -o "$tmp/p2p-onic" || exit 1
have_mpich=0 have_ompi=0
mpicc.mpich -O2 "$src" -o "$tmp/p2p-mpich" 2>/dev/null && have_mpich=1
mpicc.openmpi -O2 "$src" -o "$tmp/p2p-ompi" 2>/dev/null && have_ompi=1

hosts="-hosts 198.18.8.1:1,198.18.8.2:1"
hydra="mpiexec.hydra -launcher rsh -launcher-exec $tmp/nsrsh -iface onic0 $hosts -n 2"
ompi="mpirun.openmpi --allow-run-as-root --bind-to none --mca plm_rsh_agent $tmp/nsrsh
      --mca oob_tcp_if_include onic0 --mca btl tcp,self --mca btl_tcp_if_include onic0
      --mca pml ob1 -x FI_PROVIDER -x FI_TCP_IFACE --host 198.18.8.1:1,198.18.8.2:1 -n 2"

# "MODE,SIZE,MEDIAN,MIN,MAX" lines: the median at 8 bytes.
p2p8() { grep "^$1,8," | head -1 | cut -d, -f3; }

# Raw libfabric: fi_pingpong server on B, client on A, 8 bytes, RDM.
fi_lat=""
if command -v fi_pingpong >/dev/null; then
    ip netns exec "$B" timeout 60 taskset -c 1 fi_pingpong -p tcp -e rdm -S 8 -I 20000 >/dev/null 2>&1 &
    sleep 1
    out=$(ip netns exec "$A" timeout 60 taskset -c 0 fi_pingpong -p tcp -e rdm -S 8 -I 20000 198.18.8.2 2>&1)
    wait
    # columns: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
    fi_lat=$(echo "$out" | awk '$1 == "8" {print $7; exit}')
    fi_rate=$(echo "$out" | awk '$1 == "8" {print $8; exit}')
fi

row() { printf "| %-28s | %12s | %16s |\n" "$1" "$2" "$3"; }
onic_lat=$(timeout 300 "$tmp/on_a" $hydra "$tmp/p2p-onic" latency "$reps" | p2p8 latency)
onic_rate=$(timeout 300 "$tmp/on_a" $hydra "$tmp/p2p-onic" rate "$reps" | p2p8 rate)
if [ $have_mpich = 1 ]; then
    # Both hosts are one machine underneath: MPICH would find the other
    # process in its shared memory; NOLOCAL and UCX_TLS make it use the
    # network (this MPICH is ch4:ucx).
    mpich_lat=$(timeout 300 "$tmp/on_a" $hydra -genv MPIR_CVAR_NOLOCAL 1 -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES onic0 "$tmp/p2p-mpich" latency "$reps" | p2p8 latency)
    mpich_rate=$(timeout 300 "$tmp/on_a" $hydra -genv MPIR_CVAR_NOLOCAL 1 -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES onic0 "$tmp/p2p-mpich" rate "$reps" | p2p8 rate)
fi
if [ $have_ompi = 1 ]; then
    ompi_lat=$(timeout 300 "$tmp/on_a" $ompi "$tmp/p2p-ompi" latency "$reps" 2>/dev/null | p2p8 latency)
    ompi_rate=$(timeout 300 "$tmp/on_a" $ompi "$tmp/p2p-ompi" rate "$reps" 2>/dev/null | p2p8 rate)
fi

echo "8-byte messages between two network namespaces over a veth pair, libfabric tcp provider"
echo
row "what" "latency (us)" "rate (M msg/s)"
row "---" "---" "---"
row "fi_pingpong (raw libfabric)" "${fi_lat:--}" "${fi_rate:--} (ping-pong)"
row "onic (ofi, tcp)" "${onic_lat:--}" "${onic_rate:--}"
[ $have_mpich = 1 ] && row "MPICH (Hydra)" "${mpich_lat:--}" "${mpich_rate:--}"
[ $have_ompi = 1 ] && row "Open MPI (mpirun, btl tcp)" "${ompi_lat:--}" "${ompi_rate:--}"
if [ -n "$fi_lat" ] && [ -n "$onic_lat" ]; then
    echo
    echo "onic latency / fi_pingpong latency: $(awk -v a="$onic_lat" -v b="$fi_lat" 'BEGIN{printf "%.2f", a/b}')"
fi
