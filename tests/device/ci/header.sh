#!/bin/sh
# SPDX-License-Identifier: MIT
# gdirect_device.h is plain C (it compiles as C11 with warnings as errors),
# declares exactly the functions the PTX defines, one per line, and
# tests/callers/all_calls.cu calls each (so link.sh checks every prototype).
. "$(dirname "$0")/common.sh"
scratch

h=$DEVICE_DIR/include/gdirect_device.h
echo '#include <gdirect_device.h>' >"$T/h.c"
check_quiet "header compiles as C11 -Wall -Wextra -Werror -pedantic" \
	${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic -I"$DEVICE_DIR/include" -c "$T/h.c" -o "$T/h.o"

sed -n 's/^GDIRECT_DEVICE_FN .*[ *]\(gdirect_[a-z0-9_]*\)(.*);$/\1/p' "$h" | sort >"$T/declared"
sed -n 's/^\.visible \.func.*[ )]\(gdirect_[a-z0-9_]*\)(.*$/\1/p' "$DEVICE_DIR"/ptx/*.ptx | sort >"$T/defined"
check_quiet "every declaration is one line and matches a PTX definition" \
	sh -c "[ -s '$T/declared' ] && diff -u '$T/defined' '$T/declared' &&
	       [ \$(grep -c '^GDIRECT_DEVICE_FN' '$h') -eq \$(wc -l <'$T/declared') ]"
check_quiet "all_calls.cu calls every declared function" sh -c "
	for f in \$(cat '$T/declared'); do
		grep -q \"\$f(\" '$DEVICE_TESTS/callers/all_calls.cu' || { echo \"not called: \$f\"; exit 1; }
	done"
tap_done
