// SPDX-License-Identifier: MIT
// gpu.cu - the device library on a real GPU (make test-gpu), its families
// in gpu/.
//
//   device-gpu PTXDIR ALL_CALLS.ptx
//
// Prints TAP and ends with "N passed, N failed".  Covers: CUDA C calling
// hand-written PTX with every ABI parameter kind (abi_probe.ptx); vprintf,
// malloc, free and __assertfail called from PTX (the last two checked in a
// child process, since an assertion ends the context); wait / signal / ring
// against a CPU thread through mapped host memory; the seq_cst functions
// under contention; the PTX JIT-linked with nvJitLink, loaded and run; and
// line information and the seq_cst SASS of that cubin (nvdisasm).
//
// One file per family; gpu_test.h lists them.
#include "gpu_test.h"

#include <cuda.h>

int main(int argc, char **argv)
{
	setvbuf(stdout, nullptr, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "--child"))
		return child(argv[2]);
	if (argc < 3) {
		fprintf(stderr, "usage: %s PTXDIR ALL_CALLS.ptx\n", argv[0]);
		return 2;
	}
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("1..0 # SKIP no CUDA device\n0 passed, 0 failed\n");
		return 77;
	}
	cudaDeviceProp prop;
	int drv = 0;
	CUDA_OK(cudaGetDeviceProperties(&prop, 0));
	cudaDriverGetVersion(&drv);
	printf("# %s, sm_%d%d, CUDA driver API %d\n", prop.name, prop.major, prop.minor, drv);
	CUDA_OK(cudaFree(0));
	cuInit(0);

	test_abi();
	test_syscalls(argv[0]);
	test_wait();
	test_seq_cst();
	test_ring();
	test_jit(argv[1], argv[2]);
	return summary();
}
