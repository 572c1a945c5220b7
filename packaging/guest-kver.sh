#!/bin/sh
# SPDX-License-Identifier: MIT
# guest-kver.sh - the release of the newest Debian -amd64 kernel headers in
# /usr/src (e.g. 6.1.0-57-amd64), or nothing: the guest kernel that the
# gdirect-emu package's machine is built for and depends on.  One answer
# for packaging/debian/rules, packaging/deb.sh and the deb lane.
ls -1d /usr/src/linux-headers-*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -n1
