#!/bin/sh
# SPDX-License-Identifier: MIT
# test.sh BUILD - what `make test` runs: install what the lanes need, build,
# then every lane (tests/harness/run-tests.sh).
#
# GDIRECT_TEST_LANES says what happens when this machine cannot install a
# lane's needs:
#   all        every lane must run: a missing need that cannot be installed
#              fails make test (the default, and what CI runs)
#   available  the lanes whose needs are missing are skipped, one line each
#              with the reason, counted as skipped; the rest run
# On a machine with an NVIDIA driver (a GPU server: typically no package
# archive, no qemu, no module loading) the default is `available`, since
# the emulated machine's lanes are not what such a machine is for.
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)

case "${GDIRECT_TEST_LANES:-}" in
"")        if "$top/scripts/deps.sh" nvidia-present; then lanes=available; else lanes=all; fi ;;
all|available) lanes=$GDIRECT_TEST_LANES ;;
*) echo "test.sh: GDIRECT_TEST_LANES='$GDIRECT_TEST_LANES': expected 'all' or 'available'" >&2
   exit 2 ;;
esac

if ! "$top/scripts/deps.sh" test; then
	if [ "$lanes" = all ]; then
		echo "make test: the lanes' needs could not be installed (above);" \
			"GDIRECT_TEST_LANES=available runs only the lanes this machine can" >&2
		exit 1
	fi
	echo "make test: not everything could be installed (above): the lanes" \
		"that need it are skipped, each saying why"
	"$top/scripts/deps.sh" --check userspace || exit 1
fi

make --no-print-directory -C "$top" userspace TESTBED=1 BUILD="$build"
if "$top/scripts/deps.sh" --check modules 2>/dev/null; then
	make --no-print-directory -C "$top" testbed BUILD="$build"
elif [ "$lanes" = all ]; then
	"$top/scripts/deps.sh" --check modules
	exit 1
else
	echo "make test: the kernel modules are not built: no kernel headers" \
		"for an emulated guest here (scripts/deps.sh --check modules says which)"
fi
GDIRECT_TEST_LANES=$lanes exec "$top/tests/harness/run-tests.sh" "$build"
