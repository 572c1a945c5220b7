# SPDX-License-Identifier: MIT
# xfer-pair.sh - ucx-xfer's server and client as two processes of one
# machine over loopback: sourced (POSIX sh, busybox too) by ucx-ipc.sh
# in the guest (/tests/xfer-pair.sh) and by tests/device/ucx/ucx-gpu.sh on a
# GPU machine.  The caller sets, before the first xfer_pair:
#
#   xfer_bin      the ucx-xfer program
#   xfer_logs     the folder of the logs
#   xfer_ext      the logs' ending (".log", ".txt")
#   xfer_timeout  seconds each side may run (timeout)
#   xfer_grace    seconds the server may take to end after the client
#   port          the last port used: each pair takes the next one
#
# xfer_pair NAME ENV...: the server on the next port, then, once it
# listens, the client to 127.0.0.1, both under env ENV; their output in
# xfer_logs/NAME.server and NAME.client (with xfer_ext), their exit codes
# in $src and $crc.  A server still running after the grace is stopped (a
# client that died leaves it waiting for a peer that is gone).
#
# xfer_wait_listening LOG PORT PID: wait until the ucx-xfer server PID
# printed that it listens on PORT in LOG (it does so after cuInit, its
# buffers and UCX's setup, which a loaded machine may take seconds over),
# at most 120 s; 1 if it ended or did not listen in time.  A client
# started on a clock instead is refused when the server is late.
xfer_wait_listening() {
	xfer_w=0
	until grep -q "^# listening on port $2\$" "$1" 2>/dev/null; do
		kill -0 "$3" 2>/dev/null || return 1
		xfer_w=$((xfer_w + 1))
		[ "$xfer_w" -le 1200 ] || return 1
		sleep 0.1
	done
}

xfer_pair() {
	xfer_name=$1; shift
	port=$((port + 1))
	env "$@" timeout "$xfer_timeout" "$xfer_bin" server $port \
		>"$xfer_logs/$xfer_name.server$xfer_ext" 2>&1 &
	spid=$!
	xfer_wait_listening "$xfer_logs/$xfer_name.server$xfer_ext" $port $spid ||
		echo "# $xfer_name: the server did not listen on port $port (its log: $xfer_logs/$xfer_name.server$xfer_ext)"
	env "$@" timeout "$xfer_timeout" "$xfer_bin" client 127.0.0.1 $port \
		>"$xfer_logs/$xfer_name.client$xfer_ext" 2>&1
	crc=$?
	xfer_k=0
	while kill -0 "$spid" 2>/dev/null && [ $xfer_k -lt "$xfer_grace" ]; do
		sleep 1; xfer_k=$((xfer_k + 1))
	done
	kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
}
