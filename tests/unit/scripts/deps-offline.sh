#!/bin/sh
# SPDX-License-Identifier: MIT
# deps-offline.sh SOURCE - scripts/deps.sh on a machine whose package
# archive cannot be reached: one clear message, not one error per package.
#
# deps.sh runs as root (a fake id) with a PATH of the few tools it uses
# and a fake apt: `apt-get update` warns that the archive failed and exits
# 0, as apt does; `apt-cache policy` knows no package; `apt-get install`
# prints apt's "Unable to locate package" per package, and records that
# it was called.  Then the same with an archive that answers but lacks one
# package.
set -u
src=$(cd "$1" && pwd -P)
. "$src/tests/include/tap.sh"
distro=$(. /etc/os-release 2>/dev/null && echo "${ID:-}")
case $distro in
debian|ubuntu) ;;
*) skip_all "deps.sh installs only on Debian and Ubuntu; this is '$distro'" ;;
esac
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir "$d/bin"
for t in sh sed grep head wc ls sort tail cat tr cut; do
	p=$(command -v "$t") && ln -s "$p" "$d/bin/$t"
done
printf '#!/bin/sh\necho 0\n' >"$d/bin/id"
cat >"$d/bin/apt-get" <<'EOS'
#!/bin/sh
case " $* " in
*" update "*)
	echo "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving 'deb.debian.org'"
	echo "W: Some index files failed to download. They have been ignored, or old ones used instead."
	exit 0 ;;
*" install "*)
	echo install >>"$FAKE_APT_LOG"
	for p; do case $p in -*) ;; install) ;; *) echo "E: Unable to locate package $p" >&2 ;; esac; done
	exit 100 ;;
esac
EOS
printf '#!/bin/sh\n[ -n "${FAKE_KNOWN:-}" ] || exit 0\nfor p; do case " $FAKE_KNOWN " in *" $p "*) echo "$p:"; echo "  Candidate: 1.0";; esac; done\n' >"$d/bin/apt-cache"
chmod +x "$d/bin/"*
export FAKE_APT_LOG="$d/apt.log"

plan 6
PATH=$d/bin "$src/scripts/deps.sh" userspace >"$d/out" 2>&1
r=$?
diag "$(cat "$d/out")"
check_rc $((r == 0)) "deps.sh fails when nothing can be installed (rc $r)"
check "it says once that no package archive is reachable" \
	test "$(grep -c 'no package archive is reachable' "$d/out")" = 1
check "it quotes apt's reason" grep -q "Temporary failure resolving" "$d/out"
check "it never asks apt-get install, so no 'Unable to locate package'" \
	test ! -e "$d/apt.log" -a "$(grep -c 'Unable to locate' "$d/out")" = 0

# An archive that answers, without python3: that package is named.
cat >"$d/bin/apt-get" <<'EOS'
#!/bin/sh
case " $* " in *" install "*) echo install >>"$FAKE_APT_LOG"; exit 100 ;; esac
exit 0
EOS
FAKE_KNOWN="build-essential meson ninja-build" PATH=$d/bin \
	"$src/scripts/deps.sh" userspace >"$d/out2" 2>&1
r=$?
diag "$(cat "$d/out2")"
check_rc $((r == 0)) "with a package the archive lacks, deps.sh fails (rc $r)"
check "it names that package, not an unreachable archive" \
	sh -c "grep -q 'have no: python3' '$d/out2' && ! grep -q 'not reachable\|no package archive' '$d/out2'"
tap_done
