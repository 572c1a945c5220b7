#!/bin/sh
# SPDX-License-Identifier: MIT
# libgdirect over gdirect.ko loaded use_persistent=1, where pins are never
# revoked: kernel invalidation alone cannot see a free, so a context with
# only that mode is refused with a sentence saying why (the library reads
# default_persistent from gdirect.ko's info); with hooks added it works.
. /tests/lib.sh
plan 4
if [ ! -e /modules/gdirect.ko ]; then
	for i in 1 2 3 4; do skip "persistent check $i" "no gdirect.ko in /modules"; done
	exit 0
fi
load_module nvp2p_emu bar1_size_mb=64 bar1_reserve_mb=8
check "gdirect.ko loads with use_persistent=1" load_module gdirect use_persistent=1
check "GDIRECT_INVALIDATION=kernel: the context is refused" sh -c \
	"! GDIRECT_INVALIDATION=kernel lib-hold 65536 1 </dev/null >/tmp/p.out 2>/tmp/p.err"
echo "# $(cat /tmp/p.err)"
check "saying why (use_persistent=Y, add hooks or buffer_id)" \
	grep -q 'use_persistent=Y.*add hooks or buffer_id' /tmp/p.err
check "GDIRECT_INVALIDATION=kernel,hooks registers" sh -c \
	"GDIRECT_INVALIDATION=kernel,hooks lib-hold 65536 1 </dev/null | grep -q '^registered '"
unload_module gdirect
unload_module nvp2p_emu
tap_done
