#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/find-cuda.sh finds the CUDA toolkit nvcc belongs to, however nvcc
# is reached: directly, through a symbolic link, or through a wrapper script
# in another directory (as /usr/local/bin/nvcc is on some machines), where
# the parent of nvcc's own directory holds no lib64 and -lcudart would not
# be found; and it refuses a CUDA_HOME with no nvcc rather than look
# elsewhere.
. "$(dirname "$0")/common.sh"
need_nvcc
scratch
real=$CUDA_ROOT

check_quiet "the toolkit holds ptxas and libcudart" sh -c "
	[ -x '$real/bin/ptxas' ] && ls '$real'/lib64/libcudart.so* >/dev/null"

mkdir "$T/wrap" "$T/link"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$real/bin/nvcc" >"$T/wrap/nvcc"
chmod +x "$T/wrap/nvcc"
ln -s "$real/bin/nvcc" "$T/link/nvcc"
for how in wrap link; do
	got=$(env -u CUDA_HOME PATH="$T/$how:$PATH" sh "$FIND_CUDA" root)
	check_quiet "nvcc on PATH through a $how: toolkit $got" [ "$got" = "$real" ]
	check_quiet "nvcc on PATH through a $how is the one found" \
		[ "$(env -u CUDA_HOME PATH="$T/$how:$PATH" sh "$FIND_CUDA" nvcc)" = "$T/$how/nvcc" ]
done
check_quiet "CUDA_HOME names the toolkit" [ "$(CUDA_HOME=$real sh "$FIND_CUDA" nvcc)" = "$real/bin/nvcc" ]
check_fails "a CUDA_HOME without nvcc is an error, not a fallback" "has no bin/nvcc" \
	env CUDA_HOME="$T" sh "$FIND_CUDA" nvcc
echo 'int main(void) { return 0; }' >"$T/stub.c"
check_quiet "through the wrapper, the host compiler finds -lcudart" sh -c "
	${CC:-cc} -c '$T/stub.c' -o '$T/stub.o' &&
	g++ '$T/stub.o' -L'$(env -u CUDA_HOME PATH="$T/wrap:$PATH" sh "$FIND_CUDA" root)/lib64' -lcudart -o '$T/prog'"
tap_done
