// SPDX-License-Identifier: MIT
/*
 * ipc-neighbours.c - what a cuIpcOpenMemHandle importer reaches beyond the
 * exported allocation: through the driver API and from a GPU kernel.
 * Build on a GPU host: gcc -I$CUDA/include ipc-neighbours.c -lcuda.
 * tests/reference/gpu-logs/ipc-neighbours-2026-11-27-h200.txt is its output.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s_; cuGetErrorName(r_, &s_); printf("%s -> %d %s\n", #x, r_, s_); } } while (0)
#define SZ (64 * 1024)
#define N 8

static const char ptx[] =
".version 8.0\n.target sm_90\n.address_size 64\n"
".visible .entry rd(.param .u64 src, .param .u64 dst)\n{\n"
".reg .u64 %a<3>;\n.reg .u32 %v;\n"
"ld.param.u64 %a1, [src];\nld.param.u64 %a2, [dst];\n"
"ld.global.u32 %v, [%a1];\nst.global.u32 [%a2], %v;\nret;\n}\n";

int main(void)
{
	int pfd[2], qfd[2];
	setvbuf(stdout, NULL, _IONBF, 0);
	pipe(pfd); pipe(qfd);
	pid_t pid = fork();
	if (pid == 0) {
		CUipcMemHandle h; CUdevice d; CUcontext c; CUdeviceptr p = 0;
		read(pfd[0], &h, sizeof(h));
		CK(cuInit(0)); CK(cuDeviceGet(&d, 0)); CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
		CUresult r = cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
		printf("import: %d p=%#llx\n", r, (unsigned long long)p);
		CUdeviceptr base; size_t size;
		CK(cuMemGetAddressRange(&base, &size, p));
		printf("importer address range: base=%#llx (p%+lld) size=%zu\n", (unsigned long long)base, (long long)(base - p), size);
		unsigned long long rs = 0, rz = 0;
		CK(cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p));
		CK(cuPointerGetAttribute(&rz, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p));
		printf("RANGE_START p%+lld RANGE_SIZE %llu\n", (long long)(rs - p), rz);
		unsigned v;
		for (long off = -3L * SZ; off <= 4L * SZ; off += SZ) {
			v = 0;
			CUresult e = cuMemcpyDtoH(&v, p + off, 4);
			const char *s = ""; if (e) cuGetErrorName(e, &s);
			printf("read at p%+ld: rc=%d %s value=%#x\n", off, e, s, v);
			if (e) { cuCtxSynchronize(); }
		}
		/* A kernel-free probe: cuMemsetD32 beyond the range. */
		CUresult e = cuMemsetD32(p + SZ, 0xdeadbeef, 1);
		printf("memset at p+64K: rc=%d\n", e);
		cuCtxSynchronize();
		/* A GPU kernel reading beyond the range: are neighbours mapped in this process's GPU page tables? */
		{
			CUmodule m; CUfunction f; CUdeviceptr out;
			CK(cuModuleLoadData(&m, ptx)); CK(cuModuleGetFunction(&f, m, "rd")); CK(cuMemAlloc(&out, 4));
			long offs[] = {0, 65536, 131072, -65536, 2L*1024*1024};
			for (int i = 0; i < 5; i++) {
				CUdeviceptr src = p + offs[i];
				void *args[] = {&src, &out};
				CUresult e1 = cuLaunchKernel(f, 1,1,1, 1,1,1, 0, 0, args, 0);
				CUresult e2 = cuCtxSynchronize();
				unsigned w = 0; CUresult e3 = cuMemcpyDtoH(&w, out, 4);
				printf("kernel read at p%+ld: launch=%d sync=%d copy=%d value=%#x\n", offs[i], e1, e2, e3, w);
				if (e2) break; /* the context is dead after a fault */
			}
		}
		char ok = 1; write(qfd[1], &ok, 1);
		_exit(0);
	}
	CUdevice d; CUcontext c; CUdeviceptr a[N];
	CK(cuInit(0)); CK(cuDeviceGet(&d, 0)); CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
	for (int i = 0; i < N; i++) {
		CK(cuMemAlloc(&a[i], SZ));
		CK(cuMemsetD32(a[i], 0x11110000u + i, SZ / 4));
		CUdeviceptr b; size_t s; CK(cuMemGetAddressRange(&b, &s, a[i]));
		printf("exporter alloc %d: %#llx (a0%+lld) range size %zu\n", i, (unsigned long long)a[i], (long long)(a[i] - a[0]), s);
	}
	cuCtxSynchronize();
	CUipcMemHandle h;
	CK(cuIpcGetMemHandle(&h, a[3]));
	write(pfd[1], &h, sizeof(h));
	char ok; read(qfd[0], &ok, 1);
	unsigned v; CK(cuMemcpyDtoH(&v, a[4], 4));
	printf("exporter's alloc 4 word 0 after importer memset: %#x\n", v);
	waitpid(pid, NULL, 0);
	return 0;
}
