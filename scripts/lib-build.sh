# SPDX-License-Identifier: MIT
# lib-build.sh - what the scripts that build a peer from its source share
# (emu/rdma-core/rdma-core-build.sh, tests/peers/perftest-build.sh,
# scripts/ucx-build.sh; POSIX sh, sourced).  The caller defines
# say MESSAGE (a progress line) and die MESSAGE (a failure: it exits 1,
# after removing its stamp where it keeps one).
#
#   apt_source CACHE SUITE PKG VER
#       Debian's source package PKG=VER from SUITE's deb-src into
#       CACHE/VER.tmp (made empty first), by `apt-get source
#       --download-only` through a private apt configuration under CACHE
#       (its sources, lists and archives): the system's apt sources are
#       never read or changed.  apt's messages go to stderr.  Status 0; 3 when CACHE cannot be written;
#       1 when apt-get update fails; 2 when apt-get source does.
#   apply_patches SRC FOLDER VER PATCH...
#       each PATCH applied to the tree SRC (-p1), saying so; one that does
#       not apply dies naming it (as FOLDER/NAME) and the version VER
#   log_start FILE
#       FILE, emptied, is $log from now on
#   run WHAT CMD...
#       a step: says WHAT, runs CMD with its output appended to $log, and
#       on failure shows the log's last 30 lines and dies naming the step
#       and the log.
#
# The scripts' stamps hash this file with the script itself, so that a
# change here rebuilds what it built.

apt_source() {
	as_cache=$1 as_suite=$2 as_pkg=$3 as_ver=$4
	mkdir -p "$as_cache/etc" "$as_cache/lists/partial" "$as_cache/archives/partial" ||
		return 3
	cat >"$as_cache/etc/$as_suite-src.sources" <<-EOT
	Types: deb-src
	URIs: http://deb.debian.org/debian
	Suites: $as_suite
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOT
	set -- -o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$as_cache/etc" \
		-o Dir::State::lists="$as_cache/lists" -o Dir::Cache::archives="$as_cache/archives" \
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root
	say "fetching Debian's $as_pkg $as_ver source package into $as_cache/$as_ver"
	apt-get "$@" update -qq >&2 || return 1
	rm -rf "$as_cache/$as_ver.tmp" && mkdir -p "$as_cache/$as_ver.tmp"
	(cd "$as_cache/$as_ver.tmp" && apt-get "$@" source --download-only -qq "$as_pkg=$as_ver") >&2 ||
		return 2
}

apply_patches() {
	ap_src=$1 ap_folder=$2 ap_ver=$3
	shift 3
	for ap_p in "$@"; do
		say "applying $ap_folder/$(basename "$ap_p")"
		patch -d "$ap_src" -p1 --quiet --forward <"$ap_p" ||
			die "$ap_folder/$(basename "$ap_p") does not apply to $ap_ver"
	done
}

log_start() {
	log=$1
	: >"$log"
}

run() {
	what=$1; shift
	say "$what"
	if ! "$@" >>"$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "$what failed (whole log: $log)"
	fi
}
