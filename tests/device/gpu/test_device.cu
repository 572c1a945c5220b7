// test_device.cu - the device library on a real GPU (make -C device test-gpu).
//
//   test_device PTXDIR ALL_CALLS.ptx
//
// Prints TAP and ends with "N passed, N failed".  Covers: CUDA C calling
// hand-written PTX with every ABI parameter kind (abi_probe.ptx); vprintf,
// malloc, free and __assertfail called from PTX (the last two checked in a
// child process, since an assertion ends the context); wait / signal / ring
// against a CPU thread through mapped host memory; the seq_cst functions
// under contention; the PTX JIT-linked with nvJitLink, loaded and run; and
// line information and the seq_cst SASS of that cubin (nvdisasm).
#include <gdirect_device.h>
#include <gdirect_device_inline.cuh>
#include "abi_probe.h"
#include "gdirect_jitlink.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <nvJitLink.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>

static int passed, failed, skipped, test_no;

static void check(bool ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
}

#define CUDA_OK(call)                                                        \
	do {                                                                 \
		cudaError_t e_ = (call);                                     \
		if (e_ != cudaSuccess) {                                     \
			printf("# %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
			       cudaGetErrorString(e_));                      \
			check(false, "CUDA call failed, stopping");          \
			summary();                                           \
			exit(1);                                             \
		}                                                            \
	} while (0)

static void summary(void)
{
	printf("1..%d\n", test_no);
	if (skipped)
		printf("# %d skipped (not counted as passed)\n", skipped);
	printf("%d passed, %d failed\n", passed, failed);
	fflush(stdout);
}

template <typename T> static T *host_mapped(size_t n)
{
	void *p = nullptr;

	if (cudaHostAlloc(&p, n * sizeof(T), cudaHostAllocMapped) != cudaSuccess)
		return nullptr;
	memset(p, 0, n * sizeof(T));
	return (T *)p;
}

template <typename T> static T *dev_ptr(T *host)
{
	void *d = nullptr;

	cudaHostGetDevicePointer(&d, host, 0);
	return (T *)d;
}

static double now_s(void)
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

// Spin on a host word written by the GPU; false after timeout_s.
template <typename T>
static bool cpu_wait_eq(volatile T *p, T v, double timeout_s = 5.0)
{
	double end = now_s() + timeout_s;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
		if (now_s() > end)
			return false;
	return true;
}

/* ---------------------------------------------------------------- ABI */

struct probe_in {
	signed char s8;
	unsigned char u8;
	short s16;
	unsigned short u16;
	int ret_s8_arg;
	unsigned ret_u16_arg;
	int bool_arg;
	long long a64;
	unsigned long long b64;
	float f;
	double d;
	struct gdirect_probe_c3 c3;
	struct gdirect_probe_id id;
	struct gdirect_probe_v4 v4;
	union gdirect_probe_u u;
};

struct probe_out {
	int s8;
	unsigned u8;
	int s16;
	unsigned u16;
	int ret_s8;
	unsigned ret_u16;
	int ret_bool_t, ret_bool_f;
	long long s64;
	double fp;
	int ptr_old[3], ptr_new[3];
	long long agg;
	struct gdirect_probe_id agg_ret;
	int sum, printf_status;
};

__global__ void probe_kernel(const probe_in *in, probe_out *out, int *global_int)
{
	__shared__ int shared_int;
	int local_int = 9;
	volatile int *lp = &local_int;

	// Small integers come from memory (ld.s8 / ld.u8 ...), so the caller
	// must widen them itself before the call.
	out->s8 = gdirect_probe_s8(in->s8);
	out->u8 = gdirect_probe_u8(in->u8);
	out->s16 = gdirect_probe_s16(in->s16);
	out->u16 = gdirect_probe_u16(in->u16);
	out->ret_s8 = gdirect_probe_ret_s8(in->ret_s8_arg);
	out->ret_u16 = gdirect_probe_ret_u16(in->ret_u16_arg);
	out->ret_bool_t = gdirect_probe_ret_bool(in->bool_arg) ? 1 : 0;
	out->ret_bool_f = gdirect_probe_ret_bool(in->bool_arg - in->bool_arg) ? 1 : 0;
	out->s64 = gdirect_probe_s64(in->a64, in->b64);
	out->fp = gdirect_probe_fp(in->f, in->d);

	shared_int = 7;
	out->ptr_old[0] = gdirect_probe_ptr(global_int);
	out->ptr_old[1] = gdirect_probe_ptr(&shared_int);
	out->ptr_old[2] = gdirect_probe_ptr((int *)lp);
	out->ptr_new[0] = *global_int;
	out->ptr_new[1] = shared_int;
	out->ptr_new[2] = *lp;

	out->agg = gdirect_probe_agg(in->c3, in->id, in->v4, in->u);
	out->agg_ret = gdirect_probe_agg_ret(in->id.i, in->id.d);
	out->sum = gdirect_probe_syscalls(10, &out->printf_status);
}

static void test_abi(void)
{
	probe_in *in = host_mapped<probe_in>(1);
	probe_out *out = host_mapped<probe_out>(1);
	int *g;

	CUDA_OK(cudaMalloc(&g, sizeof(int)));
	int five = 5;
	CUDA_OK(cudaMemcpy(g, &five, sizeof(int), cudaMemcpyHostToDevice));
	in->s8 = -5;
	in->u8 = 250;
	in->s16 = -300;
	in->u16 = 65000;
	in->ret_s8_arg = 0x1ff;
	in->ret_u16_arg = 0x12345;
	in->bool_arg = 7;
	in->a64 = -(1LL << 40);
	in->b64 = 1ULL << 62;
	in->f = 1.5f;
	in->d = 0.25;
	in->c3 = { 1, -2, 3 };
	in->id = { 41, 5.75 };
	in->v4 = { 6, 7, 8, 9 };
	in->u.i = 10;
	probe_kernel<<<1, 1>>>(dev_ptr(in), dev_ptr(out), g);
	CUDA_OK(cudaDeviceSynchronize());

	check(out->s8 == -5, "signed char param arrives sign-extended (%d)", out->s8);
	check(out->u8 == 250, "unsigned char param arrives zero-extended (%u)", out->u8);
	check(out->s16 == -300, "short param arrives sign-extended (%d)", out->s16);
	check(out->u16 == 65000, "unsigned short param arrives zero-extended (%u)", out->u16);
	check(out->ret_s8 == -1, "signed char return value (%d)", out->ret_s8);
	check(out->ret_u16 == 0x2345, "unsigned short return value (%#x)", out->ret_u16);
	check(out->ret_bool_t == 1 && out->ret_bool_f == 0, "bool return value");
	check(out->s64 == -(1LL << 40) - (1LL << 61), "64-bit signed and unsigned params, 64-bit return");
	check(out->fp == 3.25, "float and double params, double return (%g)", out->fp);
	check(out->ptr_old[0] == 5 && out->ptr_new[0] == 16, "generic pointer to global memory");
	check(out->ptr_old[1] == 7 && out->ptr_new[1] == 22, "generic pointer to shared memory");
	check(out->ptr_old[2] == 9 && out->ptr_new[2] == 28, "generic pointer to local memory");
	long long want = 1 - 2 * 3 + 3 * 5 + 41 * 7 + 5 * 11 + 6 * 13 + 7 * 17 + 8 * 19 + 9 * 23 + 10 * 29;
	check(out->agg == want, "aggregates by value (align 1/8/16/4) (%lld, want %lld)", out->agg, want);
	check(out->agg_ret.i == 42 && out->agg_ret.d == 11.5, "aggregate return value");
	check(out->sum == 285, "malloc and free from PTX (sum %d)", out->sum);
	check(out->printf_status >= 0, "vprintf from PTX returns a status (%d)", out->printf_status);
	cudaFree(g);
	cudaFreeHost(in);
	cudaFreeHost(out);
}

/* --------------------------------------------- child-process checks */

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

static int child(const char *what)
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

static void show(const std::string &text)
{
	size_t i = 0;

	while (i < text.size()) {
		size_t nl = text.find('\n', i);
		if (nl == std::string::npos)
			nl = text.size();
		printf("# | %s\n", text.substr(i, nl - i).c_str());
		i = nl + 1;
	}
}

static void test_children(const char *self)
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

/* -------------------------------------------- wait / signal vs a CPU */

static inline __host__ __device__ uint32_t pp_hash(uint32_t i, uint32_t salt)
{
	return (i ^ salt) * 2654435761u;
}

// pingpong's mode may add PP_INLINE: the inline waits and signals of
// gdirect_device_inline.cuh instead of the library's calls.
#define PP_INLINE 0x10000u

// The CPU writes in[i % 64] before its release of h2d; the GPU checks it
// after the wait (the acquire), writes out[i % 64] and answers on d2h with
// a release; the CPU checks out[i % 64] after its acquire of d2h.  So both
// directions carry a payload that must arrive with the flag.
template <typename T>
__global__ void pingpong_kernel(T *h2d, T *d2h, const uint32_t *in, uint32_t *out,
				int n, T start, uint32_t mode, uint32_t backoff, int *bad)
{
	for (int i = 1; i <= n; i++) {
		T v = start + (T)i;
		int st;

		if (mode & PP_INLINE) {
			// gdirect_device_inline.cuh: spins, no timeout.
			bool geq = mode & GDIRECT_WAIT_GEQ;

			if (sizeof(T) == 4 && geq)
				gdirect_inline_wait_geq_u32((uint32_t *)h2d, (uint32_t)v);
			else if (sizeof(T) == 4)
				gdirect_inline_wait_eq_u32((uint32_t *)h2d, (uint32_t)v);
			else if (geq)
				gdirect_inline_wait_geq_u64((uint64_t *)h2d, (uint64_t)v);
			else
				gdirect_inline_wait_eq_u64((uint64_t *)h2d, (uint64_t)v);
			st = GDIRECT_DEV_OK;
		} else if (sizeof(T) == 4) {
			st = gdirect_wait_u32((uint32_t *)h2d, (uint32_t)v, mode, backoff, 2000000000ull);
		} else {
			st = gdirect_wait_u64((uint64_t *)h2d, (uint64_t)v, mode, backoff, 2000000000ull);
		}
		if (st != GDIRECT_DEV_OK) {
			*bad = i;
			return;
		}
		if (in[i % 64] != pp_hash(i, 2)) {
			*bad = -i;	// the payload did not come with the flag
			return;
		}
		// Payload first, then the release store of the flag.
		out[i % 64] = pp_hash(i, 1);
		if (mode & PP_INLINE) {
			if (sizeof(T) == 4)
				gdirect_inline_signal_u32((uint32_t *)d2h, (uint32_t)v);
			else
				gdirect_inline_signal_u64((uint64_t *)d2h, (uint64_t)v);
		} else if (sizeof(T) == 4) {
			gdirect_signal_u32((uint32_t *)d2h, (uint32_t)v);
		} else {
			gdirect_signal_u64((uint64_t *)d2h, (uint64_t)v);
		}
	}
}

template <typename T>
static void pingpong(const char *name, T start, uint32_t mode, uint32_t backoff)
{
	const int n = 2000;
	T *flags = host_mapped<T>(64);
	uint32_t *in = host_mapped<uint32_t>(64);
	uint32_t *out = host_mapped<uint32_t>(64);
	int *bad = host_mapped<int>(1);
	T *h2d = &flags[0], *d2h = &flags[32];	// separate cache lines
	int late = 0, stale = 0;

	*h2d = start;
	*d2h = start;
	*bad = 0;
	pingpong_kernel<T><<<1, 1>>>(dev_ptr(h2d), dev_ptr(d2h), dev_ptr(in), dev_ptr(out),
				     n, start, mode, backoff, dev_ptr(bad));
	for (int i = 1; i <= n; i++) {
		T v = start + (T)i;

		__atomic_store_n(&in[i % 64], pp_hash(i, 2), __ATOMIC_RELAXED);
		__atomic_store_n(h2d, v, __ATOMIC_RELEASE);
		if (!cpu_wait_eq<T>(d2h, v)) {
			late = i;
			break;
		}
		if (__atomic_load_n(&out[i % 64], __ATOMIC_RELAXED) != pp_hash(i, 1))
			stale++;
	}
	CUDA_OK(cudaDeviceSynchronize());
	check(!late && !*bad && !stale,
	      "%s: %d round trips with a CPU thread (late %d, gpu bad %d, stale payload %d)",
	      name, n, late, *bad, stale);
	cudaFreeHost(flags);
	cudaFreeHost(in);
	cudaFreeHost(out);
	cudaFreeHost(bad);
}

__global__ void wait_once_kernel(uint32_t *f32, uint64_t *f64, uint32_t v32,
				 uint64_t v64, uint32_t mode, uint64_t timeout,
				 int *status, unsigned long long *elapsed_ns)
{
	unsigned long long t0, t1;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	if (f32)
		*status = gdirect_wait_u32(f32, v32, mode, 256, timeout);
	else
		*status = gdirect_wait_u64(f64, v64, mode, 256, timeout);
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
	*elapsed_ns = t1 - t0;
}

static void test_wait_edges(void)
{
	uint32_t *f32 = host_mapped<uint32_t>(32);
	uint64_t *f64 = host_mapped<uint64_t>(16);
	int *st = host_mapped<int>(1);
	unsigned long long *el = host_mapped<unsigned long long>(1);

	// Timeout: nobody writes the flag.
	*f32 = 0;
	wait_once_kernel<<<1, 1>>>(dev_ptr(f32), nullptr, 1, 0, GDIRECT_WAIT_EQ,
				   2000000, dev_ptr(st), dev_ptr(el));
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_TIMEDOUT && *el >= 2000000 && *el < 1000000000ull,
	      "u32 wait times out after 2 ms (status %d, %.3f ms)", *st, *el / 1e6);

	// Cyclic greater-or-equal: 0xfffffff0 is "before" 0xfffffff8, and
	// 0x4 (wrapped) is after it.
	*f32 = 0xfffffff0u;
	wait_once_kernel<<<1, 1>>>(dev_ptr(f32), nullptr, 0xfffffff8u, 0,
				   GDIRECT_WAIT_GEQ, 2000000, dev_ptr(st), dev_ptr(el));
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_TIMEDOUT, "u32 GEQ: 0xfffffff0 does not satisfy 0xfffffff8");
	wait_once_kernel<<<1, 1>>>(dev_ptr(f32), nullptr, 0xfffffff8u, 0,
				   GDIRECT_WAIT_GEQ, 2000000000ull, dev_ptr(st), dev_ptr(el));
	usleep(2000);
	__atomic_store_n(f32, 4u, __ATOMIC_RELEASE);
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_OK, "u32 GEQ: wrapped value 4 satisfies 0xfffffff8 (waited %.3f ms)", *el / 1e6);

	*f64 = ~0ull - 1;
	wait_once_kernel<<<1, 1>>>(nullptr, dev_ptr(f64), 0, 3, GDIRECT_WAIT_GEQ,
				   2000000000ull, dev_ptr(st), dev_ptr(el));
	usleep(2000);
	__atomic_store_n(f64, 5ull, __ATOMIC_RELEASE);
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_OK, "u64 GEQ: wrapped value 5 satisfies 3 after 2^64-2");
	*f64 = 7;
	wait_once_kernel<<<1, 1>>>(nullptr, dev_ptr(f64), 0, 8, GDIRECT_WAIT_EQ,
				   1000000, dev_ptr(st), dev_ptr(el));
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_TIMEDOUT && *el >= 1000000, "u64 wait times out (%.3f ms)", *el / 1e6);
	cudaFreeHost(f32);
	cudaFreeHost(f64);
	cudaFreeHost(st);
	cudaFreeHost(el);
}

/* ------------------------------------------------------------ seq_cst */

__global__ void atomics_kernel(uint32_t *c32, uint64_t *c64, int iters)
{
	for (int i = 0; i < iters; i++) {
		gdirect_fetch_add_sc_u32(&c32[0], 1);
		gdirect_fetch_add_sc_u64(&c64[0], 3);
		uint32_t old = gdirect_load_sc_u32(&c32[1]);
		while (true) {	// CAS increment
			uint32_t seen = gdirect_cas_sc_u32(&c32[1], old, old + 1);
			if (seen == old)
				break;
			old = seen;
		}
		uint64_t o64 = gdirect_load_sc_u64(&c64[1]);
		while (true) {
			uint64_t seen = gdirect_cas_sc_u64(&c64[1], o64, o64 + 2);
			if (seen == o64)
				break;
			o64 = seen;
		}
		// Exchange: the values handed around are a permutation, so
		// their sum is kept in c32[3] / c64[3].
		uint32_t mine = blockIdx.x * blockDim.x + threadIdx.x + 1;
		uint32_t got = gdirect_exchange_sc_u32(&c32[2], mine);
		gdirect_fetch_add_sc_u32(&c32[3], got);
		uint64_t got64 = gdirect_exchange_sc_u64(&c64[2], mine);
		gdirect_fetch_add_sc_u64(&c64[3], got64);
		gdirect_fence_sc();
	}
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		gdirect_store_sc_u32(&c32[4], 0xabcdef01u);
		gdirect_store_sc_u64(&c64[4], 0x0123456789abcdefull);
		c32[5] = gdirect_load_sc_u32(&c32[4]);
		c64[5] = gdirect_load_sc_u64(&c64[4]);
	}
}

static void test_atomics(void)
{
	const int blocks = 32, threads = 128, iters = 16;
	const uint64_t n = (uint64_t)blocks * threads * iters;
	uint32_t *c32, h32[8];
	uint64_t *c64, h64[8];

	CUDA_OK(cudaMalloc(&c32, sizeof(h32)));
	CUDA_OK(cudaMalloc(&c64, sizeof(h64)));
	CUDA_OK(cudaMemset(c32, 0, sizeof(h32)));
	CUDA_OK(cudaMemset(c64, 0, sizeof(h64)));
	atomics_kernel<<<blocks, threads>>>(c32, c64, iters);
	CUDA_OK(cudaDeviceSynchronize());
	CUDA_OK(cudaMemcpy(h32, c32, sizeof(h32), cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(h64, c64, sizeof(h64), cudaMemcpyDeviceToHost));
	check(h32[0] == n && h64[0] == 3 * n, "fetch_add_sc u32/u64 under contention (%u, %llu; want %llu)",
	      h32[0], (unsigned long long)h64[0], (unsigned long long)n);
	check(h32[1] == n && h64[1] == 2 * n, "cas_sc u32/u64 increment loops (%u, %llu)",
	      h32[1], (unsigned long long)h64[1]);
	// Each exchange hands back what another put: the total handed back plus
	// what is left equals the total put in.
	uint64_t put = 0;
	for (uint64_t t = 1; t <= (uint64_t)blocks * threads; t++)
		put += t * iters;
	check((uint64_t)h32[3] + h32[2] == (uint32_t)put && h64[3] + h64[2] == put,
	      "exchange_sc u32/u64 lose and duplicate nothing");
	check(h32[5] == 0xabcdef01u && h64[5] == 0x0123456789abcdefull, "store_sc then load_sc");
	cudaFree(c32);
	cudaFree(c64);
}

/* --------------------------------------------------------------- ring */

static inline uint8_t pattern(uint64_t m, uint32_t j)
{
	return (uint8_t)(m * 131 + j * 7 + 1);
}

__global__ void ring_kernel(struct gdirect_ring ring, uint64_t n, uint64_t *consumed,
			    int *statuses, int *errors)
{
	__align__(8) uint8_t buf[72];

	for (uint64_t m = 0; m < n; m++) {
		// Odd messages take the byte path: unaligned dst, odd length.
		uint8_t *dst = (m & 1) ? buf + 1 : buf;
		uint32_t len = (m & 1) ? ring.slot_size - 8 - 3 : ring.slot_size - 8;
		int st = gdirect_ring_consume(ring, m, dst, len, 0, 2000000000ull);

		if (st != GDIRECT_DEV_OK) {
			statuses[0] = st;
			statuses[1] = (int)m;
			return;
		}
		for (uint32_t j = 0; j < len; j++)
			if (dst[j] != (uint8_t)(m * 131 + j * 7 + 1))
				atomicAdd(errors, 1);
		gdirect_signal_u64(consumed, m + 1);
	}
}

static void ring_produce(uint8_t *base, uint32_t slot_size, uint32_t nslots,
			 uint64_t m, uint32_t payload)
{
	uint8_t *slot = base + (m % nslots) * slot_size;

	for (uint32_t j = 0; j < payload; j++)
		slot[j] = pattern(m, j);
	__atomic_store_n((uint64_t *)(slot + slot_size - 8), m + 1, __ATOMIC_RELEASE);
}

__global__ void ring_once_kernel(struct gdirect_ring ring, uint64_t m, uint64_t timeout, int *status)
{
	__align__(8) uint8_t buf[64];

	*status = gdirect_ring_consume(ring, m, buf, 16, 0, timeout);
}

static void test_ring(void)
{
	const uint32_t slot_size = 72, nslots = 8, payload = slot_size - 8;
	const uint64_t n = 5000;
	uint8_t *base = host_mapped<uint8_t>(slot_size * nslots);
	uint64_t *consumed = host_mapped<uint64_t>(16);
	int *st = host_mapped<int>(4);
	int *errors = host_mapped<int>(1);
	struct gdirect_ring ring = { dev_ptr(base), slot_size, nslots };
	int stalled = 0;

	st[0] = 0;
	ring_kernel<<<1, 1>>>(ring, n, dev_ptr(consumed), dev_ptr(st), dev_ptr(errors));
	std::thread producer([&] {
		for (uint64_t m = 0; m < n; m++) {
			// Flow control: slot m % nslots is free once message
			// m - nslots was consumed.
			double end = now_s() + 5;
			while (m >= nslots &&
			       __atomic_load_n(consumed, __ATOMIC_ACQUIRE) < m - nslots + 1)
				if (now_s() > end) {
					stalled = (int)m;
					return;
				}
			ring_produce(base, slot_size, nslots, m, payload);
		}
	});
	producer.join();
	CUDA_OK(cudaDeviceSynchronize());
	check(!stalled && st[0] == 0 && *errors == 0 && *consumed == n,
	      "ring: %llu messages from a CPU thread, aligned and byte copies (status %d at %d, bad bytes %d, stalled %d)",
	      (unsigned long long)n, st[0], st[1], *errors, stalled);

	// Overrun: two slots, four messages written before the consumer looks.
	memset(base, 0, slot_size * nslots);
	struct gdirect_ring small = { dev_ptr(base), slot_size, 2 };
	for (uint64_t m = 0; m < 4; m++)
		ring_produce(base, slot_size, 2, m, payload);
	ring_once_kernel<<<1, 1>>>(small, 0, 1000000, dev_ptr(st));
	CUDA_OK(cudaDeviceSynchronize());
	check(st[0] == GDIRECT_DEV_OVERRUN, "ring: a reused slot is reported as overrun (%d)", st[0]);
	ring_once_kernel<<<1, 1>>>(small, 3, 1000000, dev_ptr(st));
	CUDA_OK(cudaDeviceSynchronize());
	check(st[0] == GDIRECT_DEV_OK, "ring: the latest message reads fine (%d)", st[0]);
	ring_once_kernel<<<1, 1>>>(small, 4, 1000000, dev_ptr(st));
	CUDA_OK(cudaDeviceSynchronize());
	check(st[0] == GDIRECT_DEV_TIMEDOUT, "ring: a message not yet written times out (%d)", st[0]);
	cudaFreeHost(base);
	cudaFreeHost(consumed);
	cudaFreeHost(st);
	cudaFreeHost(errors);
}

/* ------------------------------------------------- nvJitLink, nvdisasm */

static bool run_tool(const std::string &cmd, std::string &out)
{
	char line[512];
	FILE *p = popen((cmd + " 2>&1").c_str(), "r");

	out.clear();
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p))
		out += line;
	return pclose(p) == 0;
}

// One function's SASS out of nvdisasm's listing: from its section
// directive (.section .text.NAME,"ax",...) to the next section.
static std::string sass_of(const std::string &dis, const char *fn)
{
	std::string label = std::string(".text.") + fn + ",";
	size_t start = dis.find(label);

	if (start == std::string::npos)
		return std::string();
	size_t end = dis.find(".section", start + 1);
	return dis.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

static void test_jit(const char *ptxdir, const char *caller)
{
	static const char *lib[] = { "flag.ptx", "seq_cst.ptx", "ring.ptx" };
	struct gdirect_jit_input in[4];
	char *bufs[4] = {};
	char paths[3][1024];
	int major = 0, minor = 0;
	size_t i;

	CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
	CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
	char arch[16];
	snprintf(arch, sizeof(arch), "sm_%d%d", major, minor);
	for (i = 0; i < 4; i++) {
		const char *path = caller;
		size_t size = 0;

		if (i < 3) {
			snprintf(paths[i], sizeof(paths[i]), "%s/%s", ptxdir, lib[i]);
			path = paths[i];
		}
		bufs[i] = gdirect_jit_slurp(path, &size);
		if (!bufs[i]) {
			check(false, "nvJitLink: cannot read %s", path);
			return;
		}
		in[i] = { path, NVJITLINK_INPUT_PTX, bufs[i], size };
	}
	void *cubin = nullptr;
	size_t cubin_size = 0;
	char *log = nullptr;
	int rc = gdirect_jitlink(arch, in, 4, &cubin, &cubin_size, &log);
	if (rc)
		show(log);
	check(rc == 0, "nvJitLink links all_calls.ptx + library PTX for %s (%zu bytes)", arch, cubin_size);
	free(log);
	for (i = 0; i < 4; i++)
		free(bufs[i]);
	if (rc)
		return;

	// Load and run it: every function once, on prepared memory.
	CUmodule mod;
	CUfunction fn;
	CUresult r = cuModuleLoadData(&mod, cubin);
	check(r == CUDA_SUCCESS, "cuModuleLoadData of the JIT-linked cubin (%d)", (int)r);
	if (r == CUDA_SUCCESS) {
		uint32_t *f32;
		uint64_t *f64;
		unsigned char *buf;
		int *out;
		uint32_t h32[8] = { 1 };
		uint64_t h64[8] = { 1 };
		unsigned char hbuf[1024] = {};
		int hout[16];
		uint64_t one = 1;

		for (i = 0; i < 56; i++)
			hbuf[i] = (unsigned char)(i * 3 + 1);
		memcpy(hbuf + 56, &one, 8);	// slot 0 holds message 0
		CUDA_OK(cudaMalloc(&f32, sizeof(h32)));
		CUDA_OK(cudaMalloc(&f64, sizeof(h64)));
		CUDA_OK(cudaMalloc(&buf, sizeof(hbuf)));
		CUDA_OK(cudaMalloc(&out, sizeof(hout)));
		CUDA_OK(cudaMemcpy(f32, h32, sizeof(h32), cudaMemcpyHostToDevice));
		CUDA_OK(cudaMemcpy(f64, h64, sizeof(h64), cudaMemcpyHostToDevice));
		CUDA_OK(cudaMemcpy(buf, hbuf, sizeof(hbuf), cudaMemcpyHostToDevice));
		CUDA_OK(cudaMemset(out, 0xff, sizeof(hout)));
		void *args[] = { &f32, &f64, &buf, &out };
		r = cuModuleGetFunction(&fn, mod, "gdirect_all_calls");
		if (r == CUDA_SUCCESS)
			r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0, args, nullptr);
		if (r == CUDA_SUCCESS)
			r = cuCtxSynchronize();
		CUDA_OK(cudaMemcpy(hout, out, sizeof(hout), cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(h32, f32, sizeof(h32), cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(h64, f64, sizeof(h64), cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(hbuf, buf, sizeof(hbuf), cudaMemcpyDeviceToHost));
		bool ok = r == CUDA_SUCCESS && hout[0] == 0 && hout[1] == 0 &&
			  hout[2] == 1 && hout[3] == 1 && hout[4] == 0 &&
			  hout[5] == 0 && hout[6] == 0 && hout[7] == 0 &&
			  hout[8] == 0 && hout[9] == 0 && hout[10] == 0 &&
			  h32[1] == 2 && h64[1] == 2 && h32[2] == 3 && h64[2] == 3 &&
			  h32[3] == 1 && h64[3] == 1 && h32[4] == 5 && h64[4] == 5 &&
			  h32[5] == 6 && h64[5] == 6 && !memcmp(hbuf + 512, hbuf, 32);
		check(ok, "JIT-linked kernel calls every library function correctly (launch %d)", (int)r);
		cudaFree(f32);
		cudaFree(f64);
		cudaFree(buf);
		cudaFree(out);
		cuModuleUnload(mod);
	}

	// Line information and the seq_cst mapping, as the GPU runs it.
	char tmpl[] = "/tmp/gdirect-jit-XXXXXX";
	int fd = mkstemp(tmpl);
	bool wrote = fd >= 0 && write(fd, cubin, cubin_size) == (ssize_t)cubin_size;
	if (fd >= 0)
		close(fd);
	std::string out;
	if (!wrote || !run_tool("nvdisasm --version", out)) {
		printf("ok %d - line information and SASS # SKIP nvdisasm not found or no temp file\n",
		       ++test_no);
		skipped++;
	} else {
		run_tool(std::string("nvdisasm -g ") + tmpl, out);
		check(out.find("flag.ptx") != std::string::npos &&
			      out.find("ring.ptx") != std::string::npos &&
			      out.find("seq_cst.ptx") != std::string::npos,
		      "nvdisasm -g shows PTX line information (.loc) for each file");
		run_tool(std::string("nvdisasm ") + tmpl, out);
		std::string fence = sass_of(out, "gdirect_fence_sc");
		std::string load = sass_of(out, "gdirect_load_sc_u32");
		check(fence.find("MEMBAR.SC.SYS") != std::string::npos,
		      "fence.sc.sys is MEMBAR.SC.SYS in SASS");
		check(load.find("MEMBAR.SC.SYS") != std::string::npos &&
			      load.find("LD.E.STRONG.SYS") != std::string::npos,
		      "load_sc is MEMBAR.SC.SYS + LD.E.STRONG.SYS in SASS");
		if (load.find("MEMBAR.SC.SYS") == std::string::npos)
			show(load.empty() ? out.substr(0, 2000) : load);
	}
	unlink(tmpl);
	free(cubin);
}

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
	test_children(argv[0]);
	pingpong<uint32_t>("u32 EQ, spinning", 0, GDIRECT_WAIT_EQ, 0);
	pingpong<uint32_t>("u32 GEQ, back-off, across the 2^32 wrap", 0xffffff00u, GDIRECT_WAIT_GEQ, 1000);
	pingpong<uint64_t>("u64 EQ, spinning", 1ull << 40, GDIRECT_WAIT_EQ, 0);
	pingpong<uint64_t>("u64 GEQ, back-off", 0, GDIRECT_WAIT_GEQ, 1000);
	pingpong<uint32_t>("inline u32 EQ", 0, GDIRECT_WAIT_EQ | PP_INLINE, 0);
	pingpong<uint32_t>("inline u32 GEQ, across the 2^32 wrap", 0xffffff00u,
			   GDIRECT_WAIT_GEQ | PP_INLINE, 0);
	pingpong<uint64_t>("inline u64 EQ", 1ull << 40, GDIRECT_WAIT_EQ | PP_INLINE, 0);
	pingpong<uint64_t>("inline u64 GEQ, across the 2^64 wrap", ~0ull - 500,
			   GDIRECT_WAIT_GEQ | PP_INLINE, 0);
	test_wait_edges();
	test_atomics();
	test_ring();
	test_jit(argv[1], argv[2]);
	summary();
	return failed ? 1 : 0;
}
