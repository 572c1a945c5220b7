#!/bin/sh
# SPDX-License-Identifier: MIT
# gdrcopy-lane.sh BUILD RESULTS KERNEL - the peers lane of make test:
# gdrcopy 2.6, unchanged, in every pairing with gdirect on the emulated
# machine (docs/gdrcopy.md).
#
# 1. tests/peers/peers.sh finds gdrcopy-2.6.tar.gz (checked by sha256);
# 2. tests/peers/gdrcopy-build.sh builds it by its own Makefiles against
#    the guest kernel and the emulated CUDA (cached in BUILD/peers/);
# 3. one emulated machine, started by gdirect-emu as any user's CI would
#    start it (page table 2.0, BUILD/kmod/v2, KERNEL; gdrcopy's build shown
#    with --with), runs the pairings a to d, then e (no kernel module, the
#    dma-buf backend) with NVIDIA's libgdrapi and with ours, in sequence,
#    one program each (tests/peers/gdrcopy-guest.sh), the modules loaded
#    and unloaded between them; its TAP is results/peers.tap, the
#    machine's consoles are in results/peers-emu/;
# 4. one line per pairing:
#      peers[gdrcopy-2.6 PAIRING]: N passed, N failed, N waived
#    (waived: gdrcopy's own waivers and tests/peers/gdrcopy-2.6.waivers,
#    never passes), and last "N passed, N failed, N skipped" for
#    run-tests.sh's totals (waived counted as skipped).
# PEERS_GDRCOPY_PAIRINGS="b e-ours" runs only those pairings (unset or
# empty: all; a name not in the list above is an error, exit 2).
# Exit status 77, with the reason on stdout, when the tarball is neither
# in the peers folder nor downloadable; 1 when gdrcopy does not build.
set -u
build=$(cd "$1" && pwd); results=$2; kernel=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$(basename "$kernel" | sed 's/^vmlinuz-//')
t0=$(date +%s)
all="a b c d e-nvidia e-ours"
pairings=${PEERS_GDRCOPY_PAIRINGS:-$all}
for p in $pairings; do
	case " $all " in *" $p "*) ;; *)
		echo "peers: PEERS_GDRCOPY_PAIRINGS=\"$PEERS_GDRCOPY_PAIRINGS\": '$p' is not one of: $all"
		exit 2 ;;
	esac
done

tarball=$("$top/tests/peers/peers.sh" find gdrcopy-2.6.tar.gz \
	"$build/peers/cache" 2>"$results/peers-find.log")
rc=$?
if [ "$rc" != 0 ]; then
	cat "$results/peers-find.log"
	exit "$rc"
fi
if ! "$top/tests/peers/gdrcopy-build.sh" "$build" "$tarball" "$kver" \
	>"$results/peers-gdrcopy-build.log" 2>&1; then
	tail -n 15 "$results/peers-gdrcopy-build.log" | sed 's/^/  /'
	echo "peers[gdrcopy-2.6]: gdrcopy 2.6 does not build here (results/peers-gdrcopy-build.log)"
	exit 1
fi

# What the guest gets: gdrcopy's build with the waivers and the two
# scripts beside it, in one folder that gdirect-emu shows in the guest at
# its own path (--with), and a program that runs the pairings in turn,
# each between the harness's BEGIN and END lines, so that run.py counts
# its TAP as it counts any guest test's.
stage=$build/peers/gdrcopy-2.6/stage
rm -rf "$stage"
mkdir -p "$stage"
cp -RP "$build/peers/gdrcopy-2.6/out"/. "$stage/"
cp "$top/tests/peers/gdrcopy-2.6.waivers" "$top/tests/peers/gdrcopy-guest.sh" \
	"$top/tests/peers/gdrcopy-guest-lib.sh" "$stage/"
cat >"$stage/pairings.sh" <<'EOS'
#!/bin/sh
# pairings.sh PAIRING... - gdrcopy-guest.sh for each PAIRING, in turn.
here=$(cd "$(dirname "$0")" && pwd)
status=0
for p; do
	echo "gdirect-guest: BEGIN peers-gdrcopy-$p.sh" >/dev/kmsg
	echo "=== BEGIN peers-gdrcopy-$p.sh"
	sh "$here/gdrcopy-guest.sh" "$p"
	rc=$?
	echo "=== END peers-gdrcopy-$p.sh $rc"
	echo "gdirect-guest: END peers-gdrcopy-$p.sh" >/dev/kmsg
	[ "$rc" = 0 ] || status=1
done
exit $status
EOS
# The pairings load and unload the modules themselves (--no-modules).
# shellcheck disable=SC2086 # the pairings, one word each
"$top/emu/cli/gdirect-emu" run --build "$build" --kernel "$kver" --no-modules \
	--with "$stage" --timeout "${PEERS_TIMEOUT_S:-3000}" --results "$results/peers-emu" \
	-- sh "$stage/pairings.sh" $pairings >"$results/peers.tap" 2>"$results/peers-emu.log"
emu_rc=$?
python3 - "$top/tests/harness" "$results/peers.tap" "$emu_rc" \
	>"$results/guest-peers.summary" <<'EOS'
import sys
sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True
from run import TestResult  # noqa: E402
cur, done = None, []
with open(sys.argv[2], errors="replace") as f:
    for line in f:
        line = line.rstrip("\n")
        if line.startswith("=== BEGIN "):
            cur = TestResult(line[10:].strip())
        elif line.startswith("=== END ") and cur:
            cur.finish(int(line.split()[-1]))
            done.append(cur)
            cur = None
        elif cur:
            cur.feed(line)
for r in done:
    print(f"guest[peers] {r.name}: {r.passed} passed, {r.failed} failed, "
          f"{r.skipped} skipped")
failed = sum(r.failed for r in done)
if cur is not None:
    print(f"guest[peers] {cur.name}: did not finish (guest hung or died)")
    failed += 1
if not done:
    print("guest[peers]: no pairing ran")
    failed += 1
rc = int(sys.argv[3])
# pairings.sh exits 0 or 1, and its TAP says why; any other status is
# gdirect-emu's own (its man page: 123 a kernel report, 124 a hang, 125 a
# machine that would not start, 2 a wrong command line).
if rc not in (0, 1):
    print(f"guest[peers]: gdirect-emu exited {rc} (results/peers-emu.log)")
    failed += 1
print(f"{sum(r.passed for r in done)} passed, {failed} failed, "
      f"{sum(r.skipped for r in done)} skipped")
EOS
# The guest's lines, the pairings named.
p=0 f=0 s=0
while IFS= read -r l; do
	case $l in
	"guest[peers] peers-gdrcopy-"*)
		x=${l#guest\[peers\] peers-gdrcopy-}; x=${x%%.sh:*}
		case $x in
		a) what="a: NVIDIA gdrdrv.ko + NVIDIA libgdrapi" ;;
		b) what="b: gdirect.ko + NVIDIA libgdrapi" ;;
		c) what="c: NVIDIA gdrdrv.ko + our libgdrapi" ;;
		d) what="d: gdirect.ko + our libgdrapi" ;;
		e-nvidia) what="e: no module, dma-buf + NVIDIA libgdrapi" ;;
		e-ours) what="e: no module, dma-buf + our libgdrapi" ;;
		*) what=$x ;;
		esac
		rest=${l#*.sh: }
		echo "peers[gdrcopy-2.6 $what]: $rest" | sed 's/ skipped/ waived/' ;;
	[0-9]*" passed, "*" failed, "*" skipped")
		# The closing line's words, split on purpose.
		# shellcheck disable=SC2086
		set -- $l; p=$1 f=$3 s=$5 ;;
	*) echo "$l" ;;
	esac
done <"$results/guest-peers.summary"
# Each failure and each use of the waiver list, with its pairing.
awk '/^=== BEGIN peers-gdrcopy-/ { p = substr($3, 15); sub(/\.sh$/, "", p); next }
	/^not ok/ || /# SKIP waived \(gdrcopy-2.6.waivers\)/ { print "  " p ": " $0 }' \
	"$results/peers.tap" 2>/dev/null
# What gdirect-emu said of the machine: reports in the kernel log (each
# with the pairing that was running: the BEGIN and END lines in the
# console), a hang, a machine that would not start.
sed 's/^/  /' "$results/peers-emu.log" 2>/dev/null
echo "peers: $(($(date +%s) - t0)) s"
echo "$p passed, $f failed, $s skipped"
