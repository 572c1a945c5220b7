/* SPDX-License-Identifier: MIT */
/*
 * gdirect-example: write host data into GPU memory through the BAR and read
 * it back, with the registration cache doing the pinning.
 *
 *   cc gdirect-example.c -lgdirect -lcuda
 *   LD_PRELOAD=libgdirect_interpose.so ./a.out   # frees invalidate the cache
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <gdirect.h>

int main(void)
{
	static const char msg[] = "hello, GPU, through the BAR";
	char back[sizeof(msg)] = "";
	struct gdirect_ctx *g;
	struct gdirect_ptr_info info;
	struct gdirect_stats st;
	CUdevice dev;
	CUcontext cu;
	CUdeviceptr d;
	int rc;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&cu, dev) || cuCtxSetCurrent(cu) ||
	    cuMemAlloc(&d, 1 << 20)) {
		fprintf(stderr, "no usable CUDA device\n");
		return 1;
	}
	rc = gdirect_ctx_create(NULL, &g);	/* defaults + environment */
	if (rc) {
		fprintf(stderr, "gdirect_ctx_create: %s\n", gdirect_errmsg());
		return 1;
	}
	gdirect_classify(g, (void *)d, &info);
	printf("%#llx: %s memory on device %d\n", (unsigned long long)d,
	       info.type == GDIRECT_MEM_DEVICE ? "device" : "other", info.device);

	/* The first copy pins (and sets SYNC_MEMOPS); the next ones hit. */
	rc = gdirect_copy_to_gpu(g, (char *)d + 4097, msg, sizeof(msg));
	if (rc == -ENODEV) {
		/* No gdirect.ko: fall back to the CUDA copy path. */
		printf("no pinning device (%s): CUDA copies instead\n",
		       gdirect_errmsg());
		cuMemcpyHtoD((CUdeviceptr)((char *)d + 4097), msg, sizeof(msg));
		cuMemcpyDtoH(back, (CUdeviceptr)((char *)d + 4097), sizeof(back));
	} else if (rc == 0) {
		rc = gdirect_copy_from_gpu(g, back, (char *)d + 4097, sizeof(back));
	}
	if (rc && rc != -ENODEV) {
		fprintf(stderr, "copy: %s\n", gdirect_errmsg());
		return 1;
	}
	printf("read back: \"%s\" (copies: %s)\n", back, gdirect_copy_impl());

	gdirect_stats(g, &st);
	printf("hits %llu, misses %llu, bytes pinned %llu\n",
	       (unsigned long long)st.hits, (unsigned long long)st.misses,
	       (unsigned long long)st.bytes_pinned);
	cuMemFree(d);
	gdirect_ctx_destroy(g);
	return strcmp(back, msg) != 0;
}
