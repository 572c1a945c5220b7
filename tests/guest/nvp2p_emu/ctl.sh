#!/bin/sh
# SPDX-License-Identifier: MIT
# Bad input to every control-device call; nothing may stay allocated.
. /tests/lib.sh
load_module nvp2p_emu || exit 1
/tests/ctl-test
rc=$?
[ "$(emu_stat allocations)" = 0 ] && [ "$(emu_stat mem_used)" = 0 ] || { diag "memory left allocated"; rc=1; }
rmmod nvp2p_emu || rc=1
exit $rc
