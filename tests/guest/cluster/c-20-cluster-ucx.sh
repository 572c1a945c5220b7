#!/bin/sh
# c-20-cluster-ucx.sh - UCX between the two nodes (docs/cluster.md).
#
# ucx-xfer runs server on node 0 and client on node 1, once per wire
# transport: rc_verbs over Soft-RoCE (rxe0; wired up through RDMA-CM) and
# tcp over eth0.  Tagged send/receive, put and get at each size, the data
# checked on the node that received it; each run must also show that UCX
# carried the data on the transport asked for (its endpoint configuration).
# GPU buffers need a UCX built with CUDA (make ucx): where ucx_info lists no
# cuda_copy transport, that part is a SKIP that says so.  Node 1 prints the
# figures table at the end.
. /tests/lib.sh
. /tests/cluster-lib.sh
sizes=${XFER_SIZES:-1,64,4096,65536,1048576,4194304}
nsizes=$(echo "$sizes" | tr ',' '\n' | grep -c .)
per=$((3 * nsizes + 2))
wires="rc_verbs tcp"
plan $((2 * per + 1))
if ! in_cluster; then
	k=0; while [ $k -lt $((2 * per + 1)) ]; do k=$((k + 1)); skip "cluster UCX check $k" "not booted by tests/harness/cluster.py"; done
	exit 0
fi
if ! command -v ucx-xfer >/dev/null; then
	k=0; while [ $k -lt $((2 * per + 1)) ]; do k=$((k + 1)); skip "cluster UCX check $k" "ucx-xfer not built (no UCX headers: libucx-dev)"; done
	exit 0
fi
cluster_up || echo "# cluster_up failed"
figures=/tmp/figures
: >"$figures"

# relay LABEL FILE COUNT: the program's TAP results as ours, labelled; the
# missing ones (it died) as failures.
relay() {
	got=0
	while IFS= read -r l; do
		case "$l" in
		"ok "*) got=$((got + 1)); ok "$1: ${l#* - }" ;;
		"not ok "*) got=$((got + 1)); not_ok "$1: ${l#* - }" ;;
		"# FIGURE "*) echo "$1 ${l#\# FIGURE }" >>"$figures"; echo "$l" ;;
		"#"*) echo "$l" ;;
		1..*) ;;
		*) echo "# $l" ;;
		esac
	done <"$2"
	while [ "$got" -lt "$3" ]; do got=$((got + 1)); not_ok "$1: result $got missing (ucx-xfer did not finish)"; done
}

port=14000
for wire in $wires; do
	case $wire in
	rc_verbs) env="UCX_TLS=rc_verbs,self UCX_NET_DEVICES=rxe0:1" want="rc_verbs/rxe0:1" ;;
	tcp)      env="UCX_TLS=tcp,self UCX_NET_DEVICES=eth0" want="tcp/eth0" ;;
	esac
	mem=host
	label="$wire $mem"
	port=$((port + 1))
	log=/tmp/xfer-$wire-$mem.log
	echo "# $label: $env"
	barrier "ucx-$wire-$mem" || true
	if [ "$node" = 0 ]; then
		env $env XFER_SIZES=$sizes timeout 300 ucx-xfer server $port >"$log" 2>&1; rc=$?
	else
		# The server listens within a second of the barrier.
		sleep 2
		env $env XFER_SIZES=$sizes timeout 300 ucx-xfer client "$peer" $port >"$log" 2>&1; rc=$?
	fi
	relay "$label" "$log" $((3 * nsizes))
	check "$label: ucx-xfer exits 0" test "$rc" = 0
	# UCX's endpoint configuration: a connection-manager lane and data
	# lanes, every one of them on the transport asked for.
	check "$label: UCX carried the data on $want (its endpoint lanes)" sh -c \
		"grep -q 'lane\[[0-9]*\]: .*$want' '$log' && ! grep 'lane\[[0-9]*\]:' '$log' | grep -v -e ': cm ' -e '$want'"
done

if ucx_info -d 2>/dev/null | grep -q 'Transport: cuda_copy'; then
	not_ok "GPU buffers: this UCX has cuda_copy, but GPU runs are not written yet"
else
	skip "GPU buffers on both nodes" "this UCX has no cuda_copy transport (Debian's libucx0 is built without CUDA; make ucx builds one)"
fi

if [ "$node" = 1 ] && [ -s "$figures" ]; then
	echo "# figures (client side; MB/s, latency in microseconds):"
	awk '{ key = $3 " " $4; if (!(key in seen)) { seen[key] = 1; order[n++] = key }
	       c = $1 " " $2; if (!(c in cols)) { cols[c] = 1; col[nc++] = c }
	       v[key, c] = sprintf("%10.3f %12.1f", $5, $6) }
	     END { hdr = sprintf("%-4s %8s", "op", "bytes")
	           for (i = 0; i < nc; i++) hdr = hdr sprintf(" | %23s", col[i] " MB/s, us")
	           print "# " hdr
	           for (k = 0; k < n; k++) { split(order[k], p, " ")
	             line = sprintf("%-4s %8s", p[1], p[2])
	             for (i = 0; i < nc; i++) line = line " | " v[order[k], col[i]]
	             print "# " line } }' "$figures"
fi
barrier ucx-done || true
