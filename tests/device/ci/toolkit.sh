#!/bin/sh
# The tests find the CUDA toolkit nvcc belongs to, however nvcc is reached:
# directly, through a symbolic link, or through a wrapper script in another
# directory (as /usr/local/bin/nvcc is on some machines), where the parent
# of nvcc's own directory holds no lib64 and -lcudart would not be found.
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
	NVCC=$T/$how/nvcc
	got=$(cuda_root)
	check_quiet "nvcc through a $how: toolkit $got" [ "$got" = "$real" ]
done
NVCC=$T/wrap/nvcc
echo 'int main(void) { return 0; }' >"$T/stub.c"
check_quiet "through the wrapper, the host compiler finds -lcudart" sh -c "
	${CC:-cc} -c '$T/stub.c' -o '$T/stub.o' &&
	g++ '$T/stub.o' -L'$(cuda_root)/lib64' -lcudart -o '$T/prog'"
tap_done
