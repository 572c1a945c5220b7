// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * knobs.c - counters and fault-injection knobs of the emulated GPU
 *
 * One table, printer and parser for both front-ends: debugfs.c publishes
 * them under /sys/kernel/debug/nvp2p_emu/, procfs.c (the proprietary
 * flavour) under /proc/driver/nvp2p_emu/, with these names and formats
 * (emu/include/emu_knob.h and tests/harness/lib.sh read them):
 *
 *   allocations  pins  dma_maps  callbacks   live counts / callbacks fired
 *   dmabufs  dmabuf_maps                     dma-bufs exported and not yet
 *                                            released / sg tables the
 *                                            exporter has mapped, live
 *   imports  imports_total                   IPC imports (cuIpcOpenMemHandle):
 *                                            live / made since the module loaded
 *   maps_returning                           dma_map_pages calls that made a
 *                                            mapping and have not yet returned
 *   maps_entering                            dma_map_pages calls held before
 *                                            the API lock (map_entry_delay_ms)
 *   unmaps_in_flight  stale_unmaps           dma_unmap_pages calls running /
 *                                            made on a table no longer live
 *   misuse                                   calls on a page table no longer
 *                                            live or of the wrong kind, which
 *                                            NVIDIA's driver would turn into a
 *                                            use-after-free (emu_misuse())
 *   map_misuse                               of them, dma_map_pages calls on
 *                                            a table no longer live
 *   callbacks_in_flight                      free callbacks in their delay or
 *                                            running
 *   unfreed_tables                           Tegra: tables put or revoked but
 *                                            not yet freed by their driver
 *   leftover_dma_maps                        Tegra: mappings a driver left
 *                                            mapped when its callback returned
 *                                            (L4T would leak them)
 *   htod_bytes  dtoh_bytes                   bytes the CUDA copy calls moved
 *                                            from / to host memory since the
 *                                            module loaded: GPU data staged
 *                                            through the host.  A NIC's copies
 *                                            of GPU memory (GPUDirect RDMA) and
 *                                            BAR mappings are not counted
 *   dma_max_run_kb                           Tegra: longest hw_len run (0: any)
 *   coherent                                 desktop: the module parameter,
 *                                            writable: 1 makes later pins
 *                                            those of a coherent platform
 *   bar1_total  bar1_reserved  bar1_used     BAR1 budget in bytes
 *   mem_total  mem_used                      GPU memory in bytes
 *   pin_latency_us  callback_delay_ms        the module parameters, writable;
 *   unmap_delay_ms  map_return_delay_ms      a delay in progress ends when its
 *   map_entry_delay_ms                       knob is lowered (emu_hold)
 *   dmabuf_fence_ms                          writable, debug (dma-buf flavours):
 *                                            N > 0 gives each dma-buf exported
 *                                            meanwhile a pending clear, a
 *                                            kernel fence signalled N ms later
 *                                            (dmabuf.c)
 *   expect_misuse                            writable: that many misuse calls
 *                                            are made on purpose by a test and
 *                                            are logged without a WARN
 *   cuda_version                             writable: the CUDA driver API
 *                                            version libcuda emulates, 13000
 *                                            or 13030 (else EINVAL), read by
 *                                            each process's cuInit
 *   fail_next          "COUNT ERRNO": the next COUNT get_pages calls fail
 *   fail_next_dma_map  "COUNT ERRNO": the next COUNT dma_map_pages calls fail
 *
 * The proprietary flavour links this file: no GPL-only symbol here
 * (scripts/check-gpl-imports.sh checks the module).
 */
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "emu.h"

enum emu_knob_kind {
	EMU_U64,	/* a u64 field of struct emu_dev, read-only */
	EMU_ATOMIC,	/* an atomic_t field of struct emu_dev, read-only */
	EMU_ATOMIC64,	/* an atomic64_t field of struct emu_dev, read-only */
	EMU_U32,	/* a global unsigned int, writable */
	EMU_BOOL,	/* a global bool, writable: 0 or 1 (kstrtobool) */
	EMU_MEM_USED,	/* emu->mem_used, read under the lock */
	EMU_FAULT,	/* a struct emu_fault field: "COUNT ERRNO", writable */
	EMU_CUDA_VERSION, /* emu_cuda_version, writable with its own check */
};

struct emu_knob {
	const char *name;
	enum emu_knob_kind kind;
	size_t off;			/* into struct emu_dev */
	unsigned int *u32;		/* EMU_U32 */
	bool *b;			/* EMU_BOOL */
};

#define EMU_FIELD(n, k, f) { n, k, offsetof(struct emu_dev, f), NULL, NULL }
#define EMU_PARAM(n, v) { n, EMU_U32, 0, &(v), NULL }
#define EMU_PARAM_BOOL(n, v) { n, EMU_BOOL, 0, NULL, &(v) }

static const struct emu_knob emu_knobs[] = {
	EMU_FIELD("allocations", EMU_U64, nr_allocs),
	EMU_FIELD("imports", EMU_U64, nr_imports),
	EMU_FIELD("imports_total", EMU_U64, nr_imports_total),
	EMU_FIELD("pins", EMU_U64, nr_pins),
	EMU_FIELD("dma_maps", EMU_U64, nr_dma_maps),
	EMU_FIELD("dmabufs", EMU_U64, nr_dmabufs),
	EMU_FIELD("dmabuf_maps", EMU_ATOMIC, nr_dmabuf_maps),
	EMU_FIELD("callbacks", EMU_U64, nr_callbacks),
	EMU_FIELD("maps_returning", EMU_ATOMIC, maps_returning),
	EMU_FIELD("maps_entering", EMU_ATOMIC, maps_entering),
	EMU_FIELD("unmaps_in_flight", EMU_ATOMIC, unmaps_in_flight),
	EMU_FIELD("callbacks_in_flight", EMU_ATOMIC, callbacks_in_flight),
	EMU_FIELD("stale_unmaps", EMU_U64, nr_stale_unmaps),
	EMU_FIELD("misuse", EMU_ATOMIC, nr_misuse),
	EMU_FIELD("map_misuse", EMU_ATOMIC, nr_map_misuse),
	EMU_FIELD("unfreed_tables", EMU_U64, nr_unfreed_tables),
	EMU_FIELD("leftover_dma_maps", EMU_U64, nr_leftover_dma_maps),
	EMU_FIELD("htod_bytes", EMU_ATOMIC64, htod_bytes),
	EMU_FIELD("dtoh_bytes", EMU_ATOMIC64, dtoh_bytes),
#ifdef NVP2P_EMU_TEGRA
	EMU_PARAM("dma_max_run_kb", emu_dma_max_run_kb),
#else
	EMU_PARAM_BOOL("coherent", emu_coherent),
#endif
	EMU_FIELD("bar1_total", EMU_U64, bar1_size),
	EMU_FIELD("bar1_reserved", EMU_U64, bar1_reserved),
	EMU_FIELD("bar1_used", EMU_U64, bar1_used),
	EMU_FIELD("mem_total", EMU_U64, mem_size),
	EMU_FIELD("mem_used", EMU_MEM_USED, mem_used),
	EMU_PARAM("pin_latency_us", emu_pin_latency_us),
	EMU_PARAM("callback_delay_ms", emu_callback_delay_ms),
	EMU_PARAM("unmap_delay_ms", emu_unmap_delay_ms),
	EMU_PARAM("map_return_delay_ms", emu_map_return_delay_ms),
	EMU_PARAM("map_entry_delay_ms", emu_map_entry_delay_ms),
	EMU_PARAM("expect_misuse", emu_expect_misuse),
#ifdef EMU_DMABUF
	EMU_PARAM("dmabuf_fence_ms", emu_dmabuf_fence_ms),
#endif
	{ "cuda_version", EMU_CUDA_VERSION, 0, &emu_cuda_version },
	EMU_FIELD("fail_next", EMU_FAULT, fail_pin),
	EMU_FIELD("fail_next_dma_map", EMU_FAULT, fail_dma),
};

/* The i-th knob, NULL past the last. */
const struct emu_knob *emu_knob_at(size_t i)
{
	return i < ARRAY_SIZE(emu_knobs) ? &emu_knobs[i] : NULL;
}

const char *emu_knob_name(const struct emu_knob *k)
{
	return k->name;
}

bool emu_knob_writable(const struct emu_knob *k)
{
	return k->kind == EMU_U32 || k->kind == EMU_BOOL ||
	       k->kind == EMU_FAULT || k->kind == EMU_CUDA_VERSION;
}

/* single_open()'s show: the knob in m->private, one line. */
int emu_knob_show(struct seq_file *m, void *v)
{
	const struct emu_knob *k = m->private;
	void *field = (char *)emu + k->off;
	struct emu_fault *f = field;
	u64 val;

	switch (k->kind) {
	case EMU_U64:
		seq_printf(m, "%llu\n", READ_ONCE(*(u64 *)field));
		break;
	case EMU_ATOMIC:
		seq_printf(m, "%d\n", atomic_read((atomic_t *)field));
		break;
	case EMU_ATOMIC64:
		seq_printf(m, "%lld\n", (long long)atomic64_read((atomic64_t *)field));
		break;
	case EMU_U32:
	case EMU_CUDA_VERSION:
		seq_printf(m, "%u\n", READ_ONCE(*k->u32));
		break;
	case EMU_BOOL:
		seq_printf(m, "%d\n", READ_ONCE(*k->b));
		break;
	case EMU_MEM_USED:
		mutex_lock(&emu->lock);
		val = emu->mem_used;
		mutex_unlock(&emu->lock);
		seq_printf(m, "%llu\n", val);
		break;
	case EMU_FAULT:
		mutex_lock(&emu->lock);
		seq_printf(m, "%u %d\n", f->count, f->err);
		mutex_unlock(&emu->lock);
		break;
	}
	return 0;
}

/*
 * A write to knob @k: a number for a parameter, 0 or 1 (y, n...) for a
 * bool, "COUNT ERRNO" for a fault; len, or -EINVAL for bad input, -EPERM for a counter.
 */
ssize_t emu_knob_write(const struct emu_knob *k, const char __user *ubuf,
		       size_t len)
{
	struct emu_fault *f = (void *)((char *)emu + k->off);
	unsigned int count;
	bool on;
	int err;
	char buf[32];

	if (k->kind == EMU_U32) {
		err = kstrtouint_from_user(ubuf, len, 0, &count);
		if (err)
			return err;
		WRITE_ONCE(*k->u32, count);
		return len;
	}
	if (k->kind == EMU_CUDA_VERSION) {
		err = kstrtouint_from_user(ubuf, len, 10, &count);
		if (!err)
			err = emu_cuda_version_set(count);
		return err ? err : len;
	}
	if (k->kind == EMU_BOOL) {
		err = kstrtobool_from_user(ubuf, len, &on);
		if (err)
			return err;
		WRITE_ONCE(*k->b, on);
		return len;
	}
	if (k->kind != EMU_FAULT)
		return -EPERM;
	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %d", &count, &err) != 2 || err <= 0 ||
	    err >= MAX_ERRNO)
		return -EINVAL;
	mutex_lock(&emu->lock);
	f->count = count;
	f->err = err;
	mutex_unlock(&emu->lock);
	return len;
}
