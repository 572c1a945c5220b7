/* SPDX-License-Identifier: MIT */
/*
 * copy_x86.c - SSE, AVX2, AVX-512 and MOVDIR64B copies for BAR mappings.
 *
 * Each function is compiled for its instruction set with a target
 * attribute, so the library as a whole runs on any x86-64 and picks at run
 * time (copy.c).  The mapping side is aligned to the vector width first:
 * aligned stores fill whole write-combining lines, and streaming loads
 * (MOVNTDQA, the only way to read WC memory a line at a time) need it.
 */
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "copy.h"

/* Scalar head/tail, byte by byte through volatile so the compiler does not
 * turn it into a call or wider accesses to the mapping. */
static inline void bytes(void *dst, const void *src, size_t n)
{
	volatile unsigned char *d = dst;
	const volatile unsigned char *s = src;

	while (n--)
		*d++ = *s++;
}

static inline size_t head(const void *map, size_t align, size_t n)
{
	size_t h = (align - ((uintptr_t)map & (align - 1))) & (align - 1);

	return h < n ? h : n;
}

/* ---- SSE (SSE4.1 for streaming loads, else plain loads) --------------- */

static int sse_ok(void)
{
	return 1;	/* SSE2 is baseline on x86-64 */
}

__attribute__((target("sse2")))
static void sse_to(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t h = head(d, 16, n);

	bytes(d, s, h);
	d += h; s += h; n -= h;
	for (; n >= 64; d += 64, s += 64, n -= 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));

		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	for (; n >= 16; d += 16, s += 16, n -= 16)
		_mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
	bytes(d, s, n);
	_mm_sfence();
}

__attribute__((target("sse4.1")))
static void sse41_from(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t h = head(s, 16, n);

	_mm_mfence();
	bytes(d, s, h);
	d += h; s += h; n -= h;
	for (; n >= 64; d += 64, s += 64, n -= 64) {
		__m128i a = _mm_stream_load_si128((__m128i *)s);
		__m128i b = _mm_stream_load_si128((__m128i *)(s + 16));
		__m128i c = _mm_stream_load_si128((__m128i *)(s + 32));
		__m128i e = _mm_stream_load_si128((__m128i *)(s + 48));

		_mm_storeu_si128((__m128i *)d, a);
		_mm_storeu_si128((__m128i *)(d + 16), b);
		_mm_storeu_si128((__m128i *)(d + 32), c);
		_mm_storeu_si128((__m128i *)(d + 48), e);
	}
	for (; n >= 16; d += 16, s += 16, n -= 16)
		_mm_storeu_si128((__m128i *)d, _mm_stream_load_si128((__m128i *)s));
	bytes(d, s, n);
}

__attribute__((target("sse2")))
static void sse2_from(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t h = head(s, 16, n);

	_mm_mfence();
	bytes(d, s, h);
	d += h; s += h; n -= h;
	for (; n >= 16; d += 16, s += 16, n -= 16)
		_mm_storeu_si128((__m128i *)d, _mm_load_si128((const __m128i *)s));
	bytes(d, s, n);
}

static void sse_from(void *dst, const void *src, size_t n)
{
	if (__builtin_cpu_supports("sse4.1"))
		sse41_from(dst, src, n);
	else
		sse2_from(dst, src, n);
}

const struct gdl_copy_impl gdl_copy_sse = { "sse", sse_ok, sse_to, sse_from };

/* ---- AVX2 ----------------------------------------------------------- */

static int avx2_ok(void)
{
	return __builtin_cpu_supports("avx2");
}

__attribute__((target("avx2")))
static void avx2_to(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t h = head(d, 32, n);

	bytes(d, s, h);
	d += h; s += h; n -= h;
	for (; n >= 128; d += 128, s += 128, n -= 128) {
		__m256i a = _mm256_loadu_si256((const __m256i *)s);
		__m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
		__m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
		__m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));

		_mm256_stream_si256((__m256i *)d, a);
		_mm256_stream_si256((__m256i *)(d + 32), b);
		_mm256_stream_si256((__m256i *)(d + 64), c);
		_mm256_stream_si256((__m256i *)(d + 96), e);
	}
	for (; n >= 32; d += 32, s += 32, n -= 32)
		_mm256_stream_si256((__m256i *)d,
				    _mm256_loadu_si256((const __m256i *)s));
	bytes(d, s, n);
	_mm_sfence();
}

__attribute__((target("avx2")))
static void avx2_from(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t h = head(s, 32, n);

	_mm_mfence();
	bytes(d, s, h);
	d += h; s += h; n -= h;
	for (; n >= 128; d += 128, s += 128, n -= 128) {
		__m256i a = _mm256_stream_load_si256((const __m256i *)s);
		__m256i b = _mm256_stream_load_si256((const __m256i *)(s + 32));
		__m256i c = _mm256_stream_load_si256((const __m256i *)(s + 64));
		__m256i e = _mm256_stream_load_si256((const __m256i *)(s + 96));

		_mm256_storeu_si256((__m256i *)d, a);
		_mm256_storeu_si256((__m256i *)(d + 32), b);
		_mm256_storeu_si256((__m256i *)(d + 64), c);
		_mm256_storeu_si256((__m256i *)(d + 96), e);
	}
	for (; n >= 32; d += 32, s += 32, n -= 32)
		_mm256_storeu_si256((__m256i *)d,
				    _mm256_stream_load_si256((const __m256i *)s));
	bytes(d, s, n);
	/* Leave the upper YMM state clean for SSE code that follows. */
	_mm256_zeroupper();
}

const struct gdl_copy_impl gdl_copy_avx2 = {
	"avx2", avx2_ok, avx2_to, avx2_from,
};

/* ---- AVX-512 ---------------------------------------------------------- */

static int avx512_ok(void)
{
	return __builtin_cpu_supports("avx512f");
}

__attribute__((target("avx512f")))
static void avx512_to(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t h = head(d, 64, n);

	bytes(d, s, h);
	d += h; s += h; n -= h;
	for (; n >= 64; d += 64, s += 64, n -= 64)
		_mm512_stream_si512((void *)d, _mm512_loadu_si512((const void *)s));
	bytes(d, s, n);
	_mm_sfence();
}

__attribute__((target("avx512f")))
static void avx512_from(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t h = head(s, 64, n);

	_mm_mfence();
	bytes(d, s, h);
	d += h; s += h; n -= h;
	for (; n >= 64; d += 64, s += 64, n -= 64)
		_mm512_storeu_si512((void *)d,
				    _mm512_stream_load_si512((void *)s));
	bytes(d, s, n);
	_mm256_zeroupper();
}

const struct gdl_copy_impl gdl_copy_avx512 = {
	"avx512", avx512_ok, avx512_to, avx512_from,
};

/* ---- MOVDIR64B (stores); AVX2 or SSE streaming loads ------------------ */

static int movdir64b_ok(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (c >> 28) & 1;	/* CPUID.(EAX=7,ECX=0):ECX[28] */
}

__attribute__((target("movdir64b")))
static void movdir64b_to(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t h = head(d, 64, n);

	bytes(d, s, h);
	d += h; s += h; n -= h;
	/* One 64-byte atomic direct store per line: a full PCIe write. */
	for (; n >= 64; d += 64, s += 64, n -= 64)
		_movdir64b(d, s);
	bytes(d, s, n);
	_mm_sfence();
}

static void movdir64b_from(void *dst, const void *src, size_t n)
{
	if (avx2_ok())
		avx2_from(dst, src, n);
	else
		sse_from(dst, src, n);
}

const struct gdl_copy_impl gdl_copy_movdir64b = {
	"movdir64b", movdir64b_ok, movdir64b_to, movdir64b_from,
};
#else
typedef int gdl_copy_x86_unused;
#endif
