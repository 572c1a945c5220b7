#!/bin/sh
# SPDX-License-Identifier: MIT
# report.sh BENCH LIBCUDA NIC - rcache_bench's hit scenario, in its quick
# form, writes a complete report: every row of the hit table, the floor
# table with each floor the sum of its parts, every random-hit target with
# its verdict (and, for one thread, the floor), and, where the benchmark
# has the NIC-registration cache (NIC is "nic"; "no-nic" where libgdirect
# has no verbs API), every row of the NIC hit's table with its ratios the
# quotients of its figures and a verdict per trace, else the sentence
# saying it was not measured; and its options are parsed strictly.
# Checks the report's shape and arithmetic, never a timing.  TAP.
set -u
bench=${1:?usage: report.sh BENCH LIBCUDA NIC}
lib=${2:?usage: report.sh BENCH LIBCUDA NIC}
nic=${3:?usage: report.sh BENCH LIBCUDA NIC}
src=$(cd "$(dirname "$0")/../../.." && pwd)
. "$src/tests/include/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plan 9

GDIRECT_LIBCUDA=$lib "$bench" --quick --only 1 --repeats 1 --md "$tmp/r.md" \
	>"$tmp/out" 2>"$tmp/err"
r=$?
check_rc $r "rcache_bench --quick --only 1 --repeats 1 exits 0"
[ $r = 0 ] || diag "$(tail -20 "$tmp/err")"

# Hit table: 3 traces x 3 sizes x 2 thread counts, 9 columns, numbers.
rows=$(grep -cE '^\| (random|locality|reuse) \| [0-9]+ \| [12] \|( [0-9]+\.[0-9]+ \|){6}$' "$tmp/r.md")
[ "$rows" = 18 ]
check_rc $? "hit table: 18 complete rows (found $rows)"

# Floor table: regions, reuse, slot, status, floor, random, ratio, need.
python3 - "$tmp/r.md" >"$tmp/floor" 2>&1 <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"less the L1 load .*? \(([0-9.]+) ns\)", text, re.S)
if not m:
    sys.exit("no L1 load figure in the floor paragraph")
l1 = float(m.group(1))
rows = re.findall(r"^\| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| "
                  r"([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|$",
                  text, re.M)
if len(rows) != 3:
    sys.exit("floor table: %d rows, want 3" % len(rows))
for r in rows:
    n, reuse, slot, st, floor, rnd, ratio, need = r[0], *map(float, r[1:])
    if min(reuse, slot, st, floor, rnd, need) <= 0:
        sys.exit("%s regions: a figure is not positive: %s" % (n, r))
    # Each printed to 0.1: the sum may be off by rounding, 0.25 at most.
    if abs(reuse + slot + st - l1 - floor) > 0.25:
        sys.exit("%s regions: floor %.1f is not %.1f + %.1f + %.1f - %.1f"
                 % (n, floor, reuse, slot, st, l1))
    if abs(rnd / floor - ratio) > 0.01 + 0.06 / floor * max(1, ratio):
        sys.exit("%s regions: ratio %.2f is not %.1f / %.1f"
                 % (n, ratio, rnd, floor))
print("3 rows, L1 %.1f ns" % l1)
PY
check_rc $? "floor table: 3 rows, each floor the reuse hit plus the slot and status loads less L1 ($(tail -1 "$tmp/floor"))"

rows=$(grep -c '^- Random hits at least 3x faster than ucs_rcache at [0-9]* regions, 1 thread .*: [0-9.]*, \(met\|missed\) .*; 3x needs at most [0-9.]* ns, the serial floor is [0-9.]* ns' "$tmp/r.md")
[ "$rows" = 3 ]
check_rc $? "targets: each size's one-thread random-hit verdict with its floor (found $rows)"
rows=$(grep -c '^- Random hits at least 3x faster than ucs_rcache at [0-9]* regions, 2 threads .*: [0-9.]*, \(met\|missed\) ' "$tmp/r.md")
[ "$rows" = 3 ]
check_rc $? "targets: each size's two-thread random-hit verdict (found $rows)"

# NIC hit table: trace, regions, threads, ops, BAR, NIC, UCX, NIC/BAR, its
# CPU form, NIC/UCX; 3 traces x 3 sizes x 1 and 2 threads.
if [ "$nic" = nic ]; then
	python3 - "$tmp/r.md" >"$tmp/nic" 2>&1 <<'PY'
import re, sys
text = open(sys.argv[1]).read()
head = "| trace | regions | threads | NIC ops |"
if head not in text:
    sys.exit("no NIC table (its header %r)" % head)
text = text[text.index(head):].split("\n\n")[0]
rows = re.findall(r"^\| (random|locality|reuse) \| (\d+) \| ([12]) \| (\d+) \| "
                  r"([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| "
                  r"([0-9.]+) \| ([0-9.]+) \|$", text, re.M)
if len(rows) != 18 or len({(r[0], r[1], r[2]) for r in rows}) != 18 or \
        len({r[1] for r in rows}) != 3:
    sys.exit("NIC table: %d rows, want 18 (3 traces, 3 sizes, 1 and 2 "
             "threads)" % len(rows))
for r in rows:
    tr, n, ops = r[0], "%s regions, %s thread(s)" % (r[1], r[2]), int(r[3])
    bar, nic, ucx, nb, nbc, nu = map(float, r[4:])
    if min(ops, bar, nic, ucx, nb, nbc, nu) <= 0:
        sys.exit("%s, %s: a figure is not positive: %s" % (tr, n, r))
    # Figures printed to 0.1, ratios to 0.01.
    for got, num, den, what in ((nb, nic, bar, "NIC/BAR"),
                                (nu, nic, ucx, "NIC/UCX")):
        if abs(num / den - got) > 0.01 + 0.06 / den * max(1, got):
            sys.exit("%s, %s: %s %.2f is not %.1f / %.1f"
                     % (tr, n, what, got, num, den))
print("18 rows")
PY
	check_rc $? "NIC hit table: 18 rows, NIC/BAR and NIC/UCX the quotients of the row's figures ($(tail -1 "$tmp/nic"))"
	rows=$(grep -c '^- The NIC-registration hit at most 1.2x the BAR hit, \(random\|locality\|reuse\) trace, 1 thread (NIC/BAR): [0-9.]* / [0-9.]* / [0-9.]* at [0-9]* / [0-9]* / [0-9]* regions, \(met\|missed\)\.$' "$tmp/r.md")
	[ "$rows" = 3 ]
	check_rc $? "targets: the NIC hit's verdict for each trace (found $rows)"
else
	grep -q '^The NIC-registration hit was not measured: libgdirect was built without libibverbs' "$tmp/r.md"
	check_rc $? "without libgdirect's verbs API: the report says the NIC hit was not measured"
	! grep -q 'NIC-registration hit at most' "$tmp/r.md"
	check_rc $? "without libgdirect's verbs API: no NIC verdict"
fi

bad=0
for a in "--repeats 7x" "--repeats 0" "--repeats 65" "--only 7" "--only ,"; do
	# shellcheck disable=SC2086
	GDIRECT_LIBCUDA=$lib "$bench" $a >/dev/null 2>"$tmp/e"
	r=$?
	if [ $r != 2 ] || ! grep -q -- "${a%% *}" "$tmp/e"; then
		diag "$a: rc $r, said: $(cat "$tmp/e")"
		bad=1
	fi
done
check_rc $bad "a mistyped --repeats or --only is refused with its name, before any work"

"$bench" --quick --only 1 --repeats 1 >/dev/null 2>"$tmp/e"
r=$?
[ $r = 2 ] && grep -q GDIRECT_LIBCUDA "$tmp/e"
check_rc $? "without GDIRECT_LIBCUDA: refused, and says so (rc $r)"
tap_done
