// SPDX-License-Identifier: MIT
// syscalls.cu - vprintf, malloc, free and __assertfail called from PTX.
// vprintf and the assertion are checked in a child process (an assertion
// ends the CUDA context), whose output is read back.
#include "gpu_test.h"
#include "abi_probe.h"

__global__ void printf_kernel(uint32_t *flag, int *status)
{
	int st = -1;

	gdirect_probe_syscalls(10, &st);
	// A timeout with GDIRECT_WAIT_REPORT prints through vprintf too.
	*status = gdirect_wait_u32(flag, 1, GDIRECT_WAIT_EQ | GDIRECT_WAIT_REPORT, 0, 1000000);
}

__global__ void assert_kernel(void *buf, int *status)
{
	struct gdirect_ring bad = { buf, 64, 3 };	// 3: not a power of two
	char dst[8];

	*status = gdirect_ring_consume(bad, 0, dst, 8, 0, 1000);
}

int child(const char *what)
{
	int *st;
	uint32_t *flag;

	CUDA_OK(cudaMalloc(&st, sizeof(int)));
	CUDA_OK(cudaMalloc(&flag, 4096));
	CUDA_OK(cudaMemset(flag, 0, 4096));
	if (!strcmp(what, "printf"))
		printf_kernel<<<1, 1>>>(flag, st);
	else
		assert_kernel<<<1, 1>>>(flag, st);
	cudaError_t e = cudaDeviceSynchronize();
	printf("child result: %s\n", cudaGetErrorName(e));
	return 0;
}

static std::string run_child(const char *self, const char *what)
{
	std::string cmd = std::string(self) + " --child " + what + " 2>&1";
	std::string text;
	char line[512];
	FILE *p = popen(cmd.c_str(), "r");

	if (!p)
		return text;
	while (fgets(line, sizeof(line), p))
		text += line;
	pclose(p);
	return text;
}

void test_syscalls(const char *self)
{
	std::string out = run_child(self, "printf");

	show(out);
	check(out.find("gdirect probe: n=10 sum=285") != std::string::npos,
	      "vprintf from PTX prints its line");
	check(out.find("gdirect: wait timed out on") != std::string::npos &&
		      out.find("flag 0, want 1") != std::string::npos,
	      "a timed-out wait with GDIRECT_WAIT_REPORT prints a line");

	out = run_child(self, "assert");
	show(out);
	check(out.find("cudaErrorAssert") != std::string::npos,
	      "__assertfail from PTX stops the kernel with cudaErrorAssert");
	check(out.find("nslots must be a power of two") != std::string::npos &&
		      out.find("ring.ptx") != std::string::npos,
	      "the assertion names its message and file");
}
