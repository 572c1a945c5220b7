// SPDX-License-Identifier: MIT
// roundtrip.cu - GPU flag round trip through host memory, several ways, in
// one run (make bench-gpu).
//
// A CPU thread stores i into a flag in mapped host memory; the GPU waits for
// it and stores i into a second flag; the CPU spins until it sees i.  One
// round trip = CPU store to CPU seeing the answer, timed on the CPU.  The
// GPU side is, in turn:
//   ptx        gdirect_wait_u32 (EQ, spinning) + gdirect_signal_u32, our PTX
//   ptx-to     the same with a timeout armed (reads %globaltimer per poll)
//   inline     gdirect_inline_wait_eq_u32 + gdirect_inline_signal_u32
//              (gdirect_device_inline.cuh): the same instructions, inlined
//   libcu++    cuda::atomic_ref<uint32_t, cuda::thread_scope_system>:
//              load(acquire) spin + store(release), inlined in the kernel
//   cxx-call   the same libcu++ code in two __noinline__ functions: what a
//              call costs, since our PTX is always reached through one
//   cxx-ws     the same libcu++ code in one __noinline__ function, wait then
//              store
//   memops     cuStreamWaitValue32(GEQ) + cuStreamWriteValue32 on a stream,
//              no kernel (both queued before the clock starts)
//   x-norep    candidate (bench/device/wait_lean.ptx): gdirect_wait_u32 less the
//              vprintf report, so with no stack frame
//   x-eq       candidate: a frame-free EQ spin wait, two parameters, no
//              status, + gdirect_signal_u32 (the shape of cxx-call)
//   x-ws       candidate: the same wait and the release store in one call
//              (the shape of cxx-ws)
// Kernels of the same shape have the same loop; every kernel is launched the
// same way and timed by the same host code.
// The methods take turns, repeat after repeat, so drift hits all alike; the
// figure reported is the median over repeats of each repeat's median.
// Every round trip of a method, over all its repeats, also goes into its
// distribution: percentiles in the summary and, given a file, quantiles
// for bench/plot.sh to draw.
//
//   roundtrip [--target] [iterations-per-repeat [repeats [distribution-file]]]
//
// Each of our methods is reported against libcu++ as the ratio of the
// medians and its spread over the repeats (the smallest and largest of the
// per-repeat ratios).  A verdict against the target (ratio <= 1) is printed
// only with --target, which make bench-gpu passes: a difference within the
// spread is noise, and the demo must not read it as a failure.
#include <gdirect_device.h>
#include <gdirect_device_inline.cuh>

#include <cuda.h>
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                             \
	do {                                                                 \
		cudaError_t e_ = (x);                                        \
		if (e_ != cudaSuccess) {                                     \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, \
				#x, cudaGetErrorString(e_));                 \
			exit(1);                                             \
		}                                                            \
	} while (0)
#define CHECK_CU(x)                                                          \
	do {                                                                 \
		CUresult r_ = (x);                                           \
		if (r_ != CUDA_SUCCESS) {                                    \
			const char *s_ = "?";                                \
			cuGetErrorName(r_, &s_);                             \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, \
				#x, s_);                                     \
			exit(1);                                             \
		}                                                            \
	} while (0)

__global__ void ptx_kernel(uint32_t *h2d, uint32_t *d2h, int n, uint64_t timeout)
{
	for (int i = 1; i <= n; i++) {
		if (gdirect_wait_u32(h2d, (uint32_t)i, GDIRECT_WAIT_EQ, 0, timeout))
			return;		// timed out: the CPU side reports it
		gdirect_signal_u32(d2h, (uint32_t)i);
	}
}

__global__ void inline_kernel(uint32_t *h2d, uint32_t *d2h, int n)
{
	for (int i = 1; i <= n; i++) {
		gdirect_inline_wait_eq_u32(h2d, (uint32_t)i);
		gdirect_inline_signal_u32(d2h, (uint32_t)i);
	}
}

extern "C" __device__ int gdirect_bench_wait_norep(const uint32_t *flag, uint32_t value, uint32_t mode, uint32_t backoff_ns, uint64_t timeout_ns);
extern "C" __device__ void gdirect_bench_wait_eq_u32(const uint32_t *flag, uint32_t value);
extern "C" __device__ void gdirect_bench_wait_eq_signal_u32(const uint32_t *flag, uint32_t value, uint32_t *ack, uint32_t ack_value);

__global__ void norep_kernel(uint32_t *h2d, uint32_t *d2h, int n, uint64_t timeout)
{
	for (int i = 1; i <= n; i++) {
		if (gdirect_bench_wait_norep(h2d, (uint32_t)i, GDIRECT_WAIT_EQ, 0, timeout))
			return;
		gdirect_signal_u32(d2h, (uint32_t)i);
	}
}

__global__ void x_eq_kernel(uint32_t *h2d, uint32_t *d2h, int n)
{
	for (int i = 1; i <= n; i++) {
		gdirect_bench_wait_eq_u32(h2d, (uint32_t)i);
		gdirect_signal_u32(d2h, (uint32_t)i);
	}
}

__global__ void x_ws_kernel(uint32_t *h2d, uint32_t *d2h, int n)
{
	for (int i = 1; i <= n; i++)
		gdirect_bench_wait_eq_signal_u32(h2d, (uint32_t)i, d2h, (uint32_t)i);
}

__device__ __noinline__ void cxx_wait(uint32_t *flag, uint32_t v)
{
	cuda::atomic_ref<uint32_t, cuda::thread_scope_system> a(*flag);

	while (a.load(cuda::memory_order_acquire) != v)
		;
}

__device__ __noinline__ void cxx_signal(uint32_t *flag, uint32_t v)
{
	cuda::atomic_ref<uint32_t, cuda::thread_scope_system> a(*flag);

	a.store(v, cuda::memory_order_release);
}

__global__ void cxx_call_kernel(uint32_t *h2d, uint32_t *d2h, int n)
{
	for (int i = 1; i <= n; i++) {
		cxx_wait(h2d, (uint32_t)i);
		cxx_signal(d2h, (uint32_t)i);
	}
}

__device__ __noinline__ void cxx_wait_signal(uint32_t *flag, uint32_t v, uint32_t *ack, uint32_t av)
{
	cuda::atomic_ref<uint32_t, cuda::thread_scope_system> in(*flag);
	cuda::atomic_ref<uint32_t, cuda::thread_scope_system> out(*ack);

	while (in.load(cuda::memory_order_acquire) != v)
		;
	out.store(av, cuda::memory_order_release);
}

__global__ void cxx_ws_kernel(uint32_t *h2d, uint32_t *d2h, int n)
{
	for (int i = 1; i <= n; i++)
		cxx_wait_signal(h2d, (uint32_t)i, d2h, (uint32_t)i);
}

__global__ void libcxx_kernel(uint32_t *h2d, uint32_t *d2h, int n)
{
	cuda::atomic_ref<uint32_t, cuda::thread_scope_system> in(*h2d);
	cuda::atomic_ref<uint32_t, cuda::thread_scope_system> out(*d2h);

	for (int i = 1; i <= n; i++) {
		while (in.load(cuda::memory_order_acquire) != (uint32_t)i)
			;
		out.store((uint32_t)i, cuda::memory_order_release);
	}
}

static inline uint64_t now_ns(void)
{
	return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

enum method { PTX, PTX_TIMEOUT, X_EQ, X_WS, LIBCXX, CXX_CALL, CXX_WS, MEMOPS, X_NOREP,
	      INLINE, NMETHODS };
static const char *const names[NMETHODS] = { "ptx", "ptx-to", "x-eq", "x-ws", "libcu++",
					     "cxx-call", "cxx-ws", "memops", "x-norep",
					     "inline" };

struct flags {
	uint32_t *h2d, *d2h;		// host addresses
	uint32_t *dh2d, *dd2h;		// device addresses of the same
};

// One repeat of one method: n round trips, times in ns appended to out.
static void run(enum method m, const flags &f, int n, CUstream s,
		std::vector<double> &out)
{
	const int warm = 50;

	__atomic_store_n(f.h2d, 0u, __ATOMIC_SEQ_CST);
	__atomic_store_n(f.d2h, 0u, __ATOMIC_SEQ_CST);
	if (m == PTX)
		ptx_kernel<<<1, 1, 0, (cudaStream_t)s>>>(f.dh2d, f.dd2h, n, 0);
	else if (m == PTX_TIMEOUT)
		ptx_kernel<<<1, 1, 0, (cudaStream_t)s>>>(f.dh2d, f.dd2h, n, 10000000000ull);
	else if (m == LIBCXX)
		libcxx_kernel<<<1, 1, 0, (cudaStream_t)s>>>(f.dh2d, f.dd2h, n);
	else if (m == CXX_CALL)
		cxx_call_kernel<<<1, 1, 0, (cudaStream_t)s>>>(f.dh2d, f.dd2h, n);
	else if (m == X_EQ)
		x_eq_kernel<<<1, 1, 0, (cudaStream_t)s>>>(f.dh2d, f.dd2h, n);
	else if (m == X_WS)
		x_ws_kernel<<<1, 1, 0, (cudaStream_t)s>>>(f.dh2d, f.dd2h, n);
	else if (m == CXX_WS)
		cxx_ws_kernel<<<1, 1, 0, (cudaStream_t)s>>>(f.dh2d, f.dd2h, n);
	else if (m == X_NOREP)
		norep_kernel<<<1, 1, 0, (cudaStream_t)s>>>(f.dh2d, f.dd2h, n, 0);
	else if (m == INLINE)
		inline_kernel<<<1, 1, 0, (cudaStream_t)s>>>(f.dh2d, f.dd2h, n);
	CHECK(cudaGetLastError());
	for (int i = 1; i <= n; i++) {
		if (m == MEMOPS) {
			CHECK_CU(cuStreamWaitValue32(s, (CUdeviceptr)f.dh2d, (cuuint32_t)i,
						     CU_STREAM_WAIT_VALUE_GEQ));
			CHECK_CU(cuStreamWriteValue32(s, (CUdeviceptr)f.dd2h, (cuuint32_t)i,
						      CU_STREAM_WRITE_VALUE_DEFAULT));
		}
		uint64_t t0 = now_ns(), deadline = t0 + 5000000000ull;
		__atomic_store_n(f.h2d, (uint32_t)i, __ATOMIC_RELEASE);
		while (__atomic_load_n(f.d2h, __ATOMIC_ACQUIRE) != (uint32_t)i) {
			if (now_ns() > deadline) {
				fprintf(stderr, "%s: no answer to round trip %d\n", names[m], i);
				exit(1);
			}
		}
		uint64_t t1 = now_ns();
		if (i > warm)
			out.push_back((double)(t1 - t0));
	}
	CHECK(cudaStreamSynchronize((cudaStream_t)s));
}

// The value at fraction p of sorted (0: smallest, 1: largest).
static double at_fraction(const std::vector<double> &sorted, double p)
{
	return sorted[(size_t)(p * (double)(sorted.size() - 1) + 0.5)];
}

static double pct(std::vector<double> v, double p)
{
	std::sort(v.begin(), v.end());
	return at_fraction(v, p);
}

// A ratio printed with three decimals, or as many more as it takes for the
// printed figure to fall on the same side of 1 as the ratio itself
// (1.0004 is "1.0004", never "1.000" next to a verdict of "NOT met").
static void fmt_ratio(char *buf, size_t n, double ratio)
{
	for (int prec = 3; prec <= 15; prec++) {
		snprintf(buf, n, "%.*f", prec, ratio);
		double shown = strtod(buf, nullptr);
		if (ratio == 1.0 || ((shown > 1.0) == (ratio > 1.0) && shown != 1.0))
			return;
	}
	snprintf(buf, n, "%.17g", ratio);
}

// A positive count from the command line, or exit 2 saying what is wrong:
// "1e4", "20k" or "-3" is a mistake to report, not a silent default.
static int count_arg(const char *what, const char *s, int min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > 100000000) {
		fprintf(stderr, "roundtrip: %s '%s': want a whole number from %d "
			"to 100000000\n", what, s, min);
		exit(2);
	}
	return (int)v;
}

// The quantiles written for each method: fine steps in the body, finer in
// the tail, where the methods differ in what a plot can show.
static std::vector<double> dist_fractions()
{
	std::vector<double> q;

	for (int i = 0; i < 198; i++)
		q.push_back(i * 0.005);
	for (int i = 0; i < 18; i++)
		q.push_back(0.99 + i * 0.0005);
	for (double f : { 0.999, 0.9995, 0.9999, 1.0 })
		q.push_back(f);
	return q;
}

// Each method's pooled round trips (sorted) as quantile blocks (gnuplot's
// index: two blank lines between methods), fraction and microseconds.
static void write_dist(const char *path, const std::vector<double> *all, int n,
		       int repeats, const char *head)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "roundtrip: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fprintf(f, "# roundtrip distribution: %s\n# %d round trips per repeat "
		"(first 50 dropped), %d repeats, pooled per method\n"
		"# columns: quantile (fraction), round trip (us)\n", head, n,
		repeats);
	for (int m = 0; m < NMETHODS; m++) {
		fprintf(f, "%s# method %s, %zu round trips\n", m ? "\n\n" : "",
			names[m], all[m].size());
		for (double q : dist_fractions())
			fprintf(f, "%.4f %.4f\n", q, at_fraction(all[m], q) / 1e3);
	}
	if (fclose(f)) {
		fprintf(stderr, "roundtrip: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	bool target = argc > 1 && !strcmp(argv[1], "--target");

	if (target) {
		argv++;
		argc--;
	}
	if (argc > 4 || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: roundtrip [--target] [iterations-per-repeat "
			"[repeats [distribution-file]]]\n");
		return 2;
	}
	int n = argc > 1 ? count_arg("iterations per repeat", argv[1], 51) : 20000;
	int repeats = argc > 2 ? count_arg("repeats", argv[2], 1) : 9;
	const char *dist = argc > 3 ? argv[3] : nullptr;
	cudaDeviceProp prop;
	int drv = 0;
	char date[64];
	time_t t = time(nullptr);

	setvbuf(stdout, nullptr, _IOLBF, 0);
	CHECK(cudaGetDeviceProperties(&prop, 0));
	CHECK(cudaDriverGetVersion(&drv));
	CHECK(cudaFree(0));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&t));
	char head[512];
	snprintf(head, sizeof(head), "%s (sm_%d%d), CUDA driver API %d, %s",
		 prop.name, prop.major, prop.minor, drv, date);
	printf("# roundtrip: %s\n", head);
	printf("# %d round trips per repeat (first 50 dropped), %d repeats, methods in turn\n",
	       n, repeats);

	uint32_t *mem;
	CHECK(cudaHostAlloc(&mem, 4096, cudaHostAllocMapped));
	memset(mem, 0, 4096);
	flags f;
	f.h2d = mem;
	f.d2h = mem + 32;	// its own 128-byte line
	CHECK(cudaHostGetDevicePointer((void **)&f.dh2d, f.h2d, 0));
	CHECK(cudaHostGetDevicePointer((void **)&f.dd2h, f.d2h, 0));
	CUstream s;
	CHECK_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

	std::vector<double> med[NMETHODS], p99[NMETHODS], mn[NMETHODS];
	std::vector<double> all[NMETHODS];	// every round trip, pooled
	for (int m = 0; m < NMETHODS; m++)
		all[m].reserve((size_t)(n - 50) * (size_t)repeats);
	for (int r = 0; r < repeats; r++) {
		for (int k = 0; k < NMETHODS; k++) {
			enum method m = (enum method)((k + r) % NMETHODS);
			std::vector<double> v;

			v.reserve(n);
			run(m, f, n, s, v);
			med[m].push_back(pct(v, 0.5));
			p99[m].push_back(pct(v, 0.99));
			mn[m].push_back(pct(v, 0.0));
			all[m].insert(all[m].end(), v.begin(), v.end());
		}
	}
	for (int m = 0; m < NMETHODS; m++)	// once, for every figure below
		std::sort(all[m].begin(), all[m].end());

	printf("%-8s %10s %10s %10s %10s %12s   (us; median over repeats of per-repeat figures;"
	       " ratio: median / libcu++'s median)\n",
	       "method", "median", "best-med", "p99", "min", "ratio");
	for (int m = 0; m < NMETHODS; m++) {
		char rs[32];

		fmt_ratio(rs, sizeof(rs), pct(med[m], 0.5) / pct(med[LIBCXX], 0.5));
		printf("%-8s %10.3f %10.3f %10.3f %10.3f %12s\n", names[m],
		       pct(med[m], 0.5) / 1e3, pct(med[m], 0.0) / 1e3,
		       pct(p99[m], 0.5) / 1e3, pct(mn[m], 0.0) / 1e3, rs);
	}
	printf("%-8s %10s %10s %10s %10s %10s   (us; every round trip of all "
	       "repeats pooled)\n", "method", "p50", "p90", "p99", "p99.9", "max");
	for (int m = 0; m < NMETHODS; m++) {
		const std::vector<double> &v = all[m];

		printf("%-8s %10.3f %10.3f %10.3f %10.3f %10.3f\n", names[m],
		       at_fraction(v, 0.5) / 1e3, at_fraction(v, 0.9) / 1e3,
		       at_fraction(v, 0.99) / 1e3, at_fraction(v, 0.999) / 1e3,
		       at_fraction(v, 1.0) / 1e3);
	}
	for (int m = 0; m < NMETHODS; m++) {
		printf("per-repeat medians %-9s", names[m]);
		for (double v : med[m])
			printf(" %.3f", v / 1e3);
		printf("\n");
	}
	// Each of ours against libcu++ inlined: the ratio of the medians, and
	// in how many repeats ours was at or below libcu++ in the same repeat.
	const enum method ours[] = { PTX, PTX_TIMEOUT, INLINE, X_EQ, X_WS, X_NOREP };
	for (enum method m : ours) {
		double ratio = pct(med[m], 0.5) / pct(med[LIBCXX], 0.5);
		double lo = 0, hi = 0;
		int le = 0;
		char rs[32], los[32], his[32];

		for (int r = 0; r < repeats; r++) {
			double rr = med[m][r] / med[LIBCXX][r];

			le += med[m][r] <= med[LIBCXX][r];
			lo = r ? std::min(lo, rr) : rr;
			hi = r ? std::max(hi, rr) : rr;
		}
		fmt_ratio(rs, sizeof(rs), ratio);
		fmt_ratio(los, sizeof(los), lo);
		fmt_ratio(his, sizeof(his), hi);
		printf("%-7s / libcu++ median ratio: %s, per repeat %s to %s, at or"
		       " below in %d of %d repeats", names[m], rs, los, his, le,
		       repeats);
		if (target)
			printf(" (target <= 1: %s)", ratio <= 1.0 ? "met" : "NOT met");
		printf("\n");
	}
	if (dist)
		write_dist(dist, all, n, repeats, head);
	cuStreamDestroy(s);
	cudaFreeHost(mem);
	return 0;
}
