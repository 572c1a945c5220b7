#!/bin/sh
# SPDX-License-Identifier: MIT
# dkms-bpo.sh SOURCE BUILD - dkms.sh against the newest kernel Debian 12
# offers (bookworm-backports), whose headers scripts/deps.sh kernel-bpo
# unpacks privately (docs/testing.md).  Skipped, saying why, when they
# cannot be fetched.
set -u
top=$1
if ! rel=$("$top/scripts/deps.sh" kernel-bpo); then
	echo "1..0 # SKIP the bookworm-backports kernel headers could not be fetched (scripts/deps.sh kernel-bpo)"
	exit 0
fi
KVER=$rel KDIR=${BPO_ROOT:-/var/cache/gdirect-bpo}/root/usr/src/linux-headers-$rel \
	exec "$top/tests/unit/packaging/dkms.sh" "$@"
