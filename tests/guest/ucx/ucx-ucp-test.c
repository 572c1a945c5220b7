// SPDX-License-Identifier: MIT
/*
 * ucx-ucp-test.c - UCX's UCP moving data between two GPU buffers, in one
 * process (an endpoint to its own worker), on the emulated GPU.
 *
 * For each size, 1 B to 4 MiB: a tagged send from a GPU buffer into a
 * receive posted on another GPU buffer; the destination bytes are read back
 * twice, through cuMemcpyDtoH and through the BAR (libgdrapi: pin, map,
 * gdr_copy_from_mapping).  No RMA: UCX 1.13 has no lane that reaches GPU
 * memory from an endpoint to its own process (cuda_ipc wants another
 * process) and emulates put and get with CPU copies (ucp/rma/rma_sw.c),
 * which GPU memory does not allow, on a real GPU as here.
 *
 * That UCX saw GPU memory, not host memory: ucp_mem_query() of the mapped
 * buffer must report UCS_MEMORY_TYPE_CUDA, and mapping it must have pinned
 * it through gdr_copy (the emulator's pin counter rises); UCX treating the
 * pointer as host memory fails both.
 *
 * UCX's CUDA memory hooks, in the mode the environment leaves (unset:
 * UCX's default, bistro, then reloc): a cuMemAlloc and a cuMemFree of ours
 * must reach a UCM memory-type event handler, with the address, the size
 * and UCS_MEMORY_TYPE_CUDA.  The body runs in a child; the parent
 * then checks 0 pins and 0 BAR1 bytes are left.
 *
 * Built by scripts/ucx-build.sh against the UCX prefix; run by
 * ucx-ucp.sh, which sets the library path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <gdrapi.h>
#include <ucm/api/ucm.h>
#include <ucp/api/ucp.h>

#include "emu_knob.h"
#include "guest_harness.h"

#define MAXSZ (4UL << 20)

/* What UCM's memory-type events reported (UCX's CUDA memory hooks). */
static uintptr_t ev_alloc_addr, ev_free_addr;
static size_t ev_alloc_size;
static int ev_free;

/*
 * UCM reports allocations with an unknown memory type (UCS_MEMORY_TYPE_LAST:
 * UCX's CUDA memory domain detects it) and frees of device memory as CUDA.
 */
static void on_mem_type(ucm_event_type_t type, ucm_event_t *ev, void *arg)
{
	(void)arg;
	if (type == UCM_EVENT_MEM_TYPE_ALLOC &&
	    (ev->mem_type.mem_type == UCS_MEMORY_TYPE_LAST ||
	     ev->mem_type.mem_type == UCS_MEMORY_TYPE_CUDA)) {
		ev_alloc_addr = (uintptr_t)ev->mem_type.address;
		ev_alloc_size = ev->mem_type.size;
	} else if (type == UCM_EVENT_MEM_TYPE_FREE &&
		   ev->mem_type.mem_type == UCS_MEMORY_TYPE_CUDA &&
		   (uintptr_t)ev->mem_type.address == ev_free_addr) {
		ev_free++;
	}
}

/* UCX's hooks see a cuMemAlloc and a cuMemFree of this program. */
static void check_hooks(void)
{
	const char *mode = getenv("UCX_MEM_CUDA_HOOK_MODE");
	CUdeviceptr d = 0;
	CUresult r;

	if (!tap_ok(ucm_set_event_handler(UCM_EVENT_MEM_TYPE_ALLOC | UCM_EVENT_MEM_TYPE_FREE,
				      0, on_mem_type, NULL) == UCS_OK,
		"UCX's CUDA memory hooks installed (UCX_MEM_CUDA_HOOK_MODE %s)",
		mode ? mode : "unset: bistro, reloc"))
		return;
	if (!tap_ok(cuMemAlloc(&d, MAXSZ) == CUDA_SUCCESS, "cuMemAlloc under the hooks"))
		return;
	tap_ok(ev_alloc_addr == d && ev_alloc_size == MAXSZ,
	   "the hooks saw cuMemAlloc (event %#lx %zu B, want %#llx %lu B)",
	   (unsigned long)ev_alloc_addr, ev_alloc_size, (unsigned long long)d, MAXSZ);
	ev_free_addr = d;
	r = cuMemFree(d);
	tap_ok(r == CUDA_SUCCESS && ev_free >= 1,
	       "the hooks saw cuMemFree of the buffer (cuMemFree %d, %d events)", (int)r, ev_free);
	ucm_unset_event_handler(UCM_EVENT_MEM_TYPE_ALLOC | UCM_EVENT_MEM_TYPE_FREE,
				on_mem_type, NULL);
}

/* Wait for a UCP request to complete; its status. */
static ucs_status_t wait_req(ucp_worker_h w, ucs_status_ptr_t r)
{
	ucs_status_t st;

	if (r == NULL)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(r))
		return UCS_PTR_STATUS(r);
	while ((st = ucp_request_check_status(r)) == UCS_INPROGRESS)
		ucp_worker_progress(w);
	ucp_request_free(r);
	return st;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

/* The bytes of GPU buffer d, read through the BAR with libgdrapi. */
static int read_bar(gdr_t g, CUdeviceptr d, size_t n, void *out)
{
	gdr_mh_t mh;
	gdr_info_t info;
	void *va = NULL;
	size_t len = (n + GPU_PAGE_SIZE - 1) & GPU_PAGE_MASK;
	int rc;

	rc = gdr_pin_buffer(g, d, len, 0, 0, &mh);
	if (rc) {
		printf("# gdr_pin_buffer: %d\n", rc);
		return rc;
	}
	rc = gdr_map(g, mh, &va, len);
	if (!rc)
		rc = gdr_get_info(g, mh, &info);
	if (!rc)
		rc = gdr_copy_from_mapping(mh, out, (char *)va + (d - info.va), n);
	if (va)
		gdr_unmap(g, mh, va, len);
	gdr_unpin_buffer(g, mh);
	if (rc)
		printf("# gdr map/copy: %d\n", rc);
	return rc;
}

/* dst (GPU) holds want[0..n): through cuMemcpyDtoH and through the BAR. */
static void check_gpu(gdr_t g, CUdeviceptr dst, const unsigned char *want,
		      size_t n, unsigned char *tmp, const char *what)
{
	memset(tmp, 0, n);
	tap_ok(cuMemcpyDtoH(tmp, dst, n) == CUDA_SUCCESS && memcmp(tmp, want, n) == 0,
	   "%s %zu B: receiving GPU holds the data (cuMemcpyDtoH)", what, n);
	memset(tmp, 0, n);
	tap_ok(read_bar(g, dst, n, tmp) == 0 && memcmp(tmp, want, n) == 0,
	   "%s %zu B: receiving GPU holds the data (BAR, libgdrapi)", what, n);
}

static void body(void)
{
	static const size_t sizes[] = { 1, 8, 4096, 65536, MAXSZ };
	ucp_params_t cp = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA,
	};
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	ucp_context_h ctx;
	ucp_worker_h w;
	ucp_address_t *addr;
	size_t addr_len, rkey_len;
	ucp_ep_h ep;
	ucp_ep_params_t ep_params = { 0 };
	ucp_mem_map_params_t mp = { 0 };
	ucp_mem_attr_t attr = { 0 };
	ucp_mem_h memh;
	ucp_rkey_h rkey;
	void *rkey_buf;
	CUdevice dev;
	CUcontext cuctx;
	CUdeviceptr src, dst;
	unsigned char *want = malloc(MAXSZ), *tmp = malloc(MAXSZ);
	uint64_t pins0, pins1;
	ucs_status_t st;
	gdr_t g;

	if (!tap_ok(want && tmp, "host buffers"))
		return;
	if (!tap_ok(cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&dev, 0) == CUDA_SUCCESS &&
		cuDevicePrimaryCtxRetain(&cuctx, dev) == CUDA_SUCCESS &&
		cuCtxSetCurrent(cuctx) == CUDA_SUCCESS, "CUDA primary context"))
		return;
	if (!tap_ok(cuMemAlloc(&src, MAXSZ) == CUDA_SUCCESS &&
		cuMemAlloc(&dst, MAXSZ) == CUDA_SUCCESS, "two 4 MiB GPU buffers"))
		return;
	g = gdr_open();
	if (!tap_ok(g != NULL, "gdr_open"))
		return;
	if (!tap_ok(ucp_init(&cp, NULL, &ctx) == UCS_OK, "ucp_init (TAG, RMA)"))
		return;
	if (!tap_ok(ucp_worker_create(ctx, &wp, &w) == UCS_OK &&
		ucp_worker_get_address(w, &addr, &addr_len) == UCS_OK, "worker"))
		return;
	ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
	ep_params.address = addr;
	if (!tap_ok(ucp_ep_create(w, &ep_params, &ep) == UCS_OK, "endpoint to the worker itself"))
		return;

	check_hooks();

	/* Mapping the GPU buffer: UCX must see GPU memory. */
	pins0 = emu_stat_u64("pins");
	mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	mp.address = (void *)(uintptr_t)dst;
	mp.length = MAXSZ;
	if (!tap_ok(ucp_mem_map(ctx, &mp, &memh) == UCS_OK, "ucp_mem_map of a GPU buffer"))
		return;
	attr.field_mask = UCP_MEM_ATTR_FIELD_MEM_TYPE;
	attr.mem_type = UCS_MEMORY_TYPE_UNKNOWN;
	st = ucp_mem_query(memh, &attr);
	tap_ok(st == UCS_OK && attr.mem_type == UCS_MEMORY_TYPE_CUDA,
	   "UCX detected the buffer as CUDA memory (mem_type %d, want %d)",
	   (int)attr.mem_type, (int)UCS_MEMORY_TYPE_CUDA);
	pins1 = emu_stat_u64("pins");
	tap_ok(pins1 != UINT64_MAX && pins1 > pins0,
	   "gdr_copy pinned the GPU buffer on ucp_mem_map (emulator pins %llu -> %llu)",
	   (unsigned long long)pins0, (unsigned long long)pins1);
	if (!tap_ok(ucp_rkey_pack(ctx, memh, &rkey_buf, &rkey_len) == UCS_OK &&
		ucp_ep_rkey_unpack(ep, rkey_buf, &rkey) == UCS_OK, "rkey of the GPU buffer packed and unpacked"))
		return;
	ucp_rkey_buffer_release(rkey_buf);

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		ucp_request_param_t rp = { 0 };
		ucs_status_ptr_t sr, rr;

		/* tag: src (GPU) -> dst (GPU, mapped), receive posted first */
		fill(want, n, (unsigned)(i * 3 + 2));
		cuMemcpyHtoD(src, want, n);
		cuMemsetD8(dst, 0, MAXSZ);
		rr = ucp_tag_recv_nbx(w, (void *)(uintptr_t)dst, n, 0x60 + i, ~0ULL, &rp);
		sr = ucp_tag_send_nbx(ep, (void *)(uintptr_t)src, n, 0x60 + i, &rp);
		tap_ok(wait_req(w, sr) == UCS_OK, "tag send %zu B GPU -> GPU completes", n);
		tap_ok(wait_req(w, rr) == UCS_OK, "tag receive %zu B completes", n);
		check_gpu(g, dst, want, n, tmp, "tag");
	}

	ucp_rkey_destroy(rkey);
	tap_ok(ucp_mem_unmap(ctx, memh) == UCS_OK, "ucp_mem_unmap");
	{
		ucp_request_param_t rp = { 0 };

		st = wait_req(w, ucp_ep_close_nbx(ep, &rp));
		tap_ok(st == UCS_OK, "endpoint closed (flushed): %s", ucs_status_string(st));
	}
	ucp_worker_release_address(w, addr);
	ucp_worker_destroy(w);
	ucp_cleanup(ctx);
	tap_ok(gdr_close(g) == 0, "gdr_close");
	tap_ok(cuMemFree(src) == CUDA_SUCCESS && cuMemFree(dst) == CUDA_SUCCESS,
	   "GPU buffers freed");
	cuDevicePrimaryCtxRelease(dev);
	free(want);
	free(tmp);
}

int main(void)
{
	int status, quiet, emu_ours, gd_ours = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	emu_ours = guest_module_load("nvp2p_emu", NULL);
	if (emu_ours >= 0)
		gd_ours = guest_module_load("gdirect", NULL);
	if (emu_ours < 0 || gd_ours < 0)
		goto skip;
	status = guest_run_body(body);
	tap_ok(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "test process ended normally (status %#x)", status);
	/* Unpins may trail the child's exit: up to 5 s. */
	quiet = emu_wait_quiet(5000, NULL);
	tap_ok(quiet,
	   "0 pins and 0 BAR1 bytes used afterwards (pins %llu, bar1_used %llu)",
	   (unsigned long long)emu_stat_u64("pins"),
	   (unsigned long long)emu_stat_u64("bar1_used"));
	if (gd_ours == 1)
		tap_ok(guest_sh("rmmod gdirect") == 0, "gdirect unloads");
	if (emu_ours == 1)
		tap_ok(guest_sh("rmmod nvp2p_emu") == 0, "nvp2p_emu unloads");
	return tap_done();
skip:
	if (gd_ours == 1)
		guest_sh("rmmod gdirect");
	if (emu_ours == 1)
		guest_sh("rmmod nvp2p_emu");
	tap_skip("UCP with GPU buffers", "modules could not be loaded");
	return tap_done();
}
