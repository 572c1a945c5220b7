/* SPDX-License-Identifier: MIT */
/*
 * lib-hold - guest helper: register GPU memory through libgdirect, look it
 * up again, say so, and hold the registration until standard input closes,
 * so that a test can look at a live libgdirect context from outside
 * (gdirect stat, with GDIRECT_PUBLISH_STATS=1 in the environment).
 *
 *   lib-hold SIZE LOOKUPS   prints "registered ADDR HITS" once done
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda.h>
#include <gdirect.h>

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoull(argv[1], NULL, 0) : 65536;
	int lookups = argc > 2 ? atoi(argv[2]) : 1;
	struct gdirect_stats st;
	struct gdirect_reg *r, *again;
	struct gdirect_ctx *g;
	CUdeviceptr d;
	CUcontext cu;
	CUdevice dev;
	char buf[64];

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&cu, dev) || cuCtxSetCurrent(cu) ||
	    cuMemAlloc(&d, size)) {
		fprintf(stderr, "lib-hold: CUDA setup failed\n");
		return 1;
	}
	if (gdirect_ctx_create(NULL, &g)) {	/* defaults + environment */
		fprintf(stderr, "lib-hold: %s\n", gdirect_errmsg());
		return 1;
	}
	if (gdirect_reg_get(g, (void *)d, size, 0, &r)) {
		fprintf(stderr, "lib-hold: %s\n", gdirect_errmsg());
		return 1;
	}
	for (int i = 1; i < lookups; i++) {
		if (gdirect_reg_get(g, (void *)d, size, 0, &again)) {
			fprintf(stderr, "lib-hold: %s\n", gdirect_errmsg());
			return 1;
		}
		gdirect_reg_put(again);
	}
	gdirect_stats(g, &st);
	printf("registered 0x%llx %llu\n", (unsigned long long)d,
	       (unsigned long long)st.hits);
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	gdirect_reg_put(r);
	gdirect_ctx_destroy(g);
	cuMemFree(d);
	cuDevicePrimaryCtxRelease(dev);
	return 0;
}
