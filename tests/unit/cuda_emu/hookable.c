// SPDX-License-Identifier: MIT
/*
 * hookable.c - can UCX's memory hooks patch our allocation and free
 * entry points?
 *
 *	cuda-emu-hookable LIBRARY...
 *
 * UCX's default hook mode ("bistro", ucm) overwrites the first 5 bytes of
 * an entry point with a near jump, or 13 bytes with an absolute one when
 * the hook is more than 2 GiB away, after copying the instructions there
 * into a trampoline.  Its copier (UCX 1.13, src/ucm/bistro/bistro_x86_64.c)
 * knows only these instructions and refuses the function otherwise:
 *
 *	[41] 50+r		push %reg
 *	48 81 ec imm32		sub $imm32, %rsp
 *	48 89 e5		mov %rsp, %rbp
 *	48 89 modrm sib disp	mov %reg, disp(SIB) (disp8 or disp32)
 *	b8+r imm32		mov $imm32, %reg
 *	81 3d disp32 imm32	cmpl $imm32, disp32(%rip) (rewritten)
 *
 * This test decodes the first 13 bytes of every entry point UCX 1.13's
 * ucm hooks (driver and runtime) that each LIBRARY exports, with the same
 * rules, and fails for one that UCX could not patch.  It first checks the
 * decoder on prologues it must refuse (endbr64, sub $imm8, a RIP-relative
 * load), so that a decoder accepting everything cannot pass.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PATCH_MAX 13	/* the absolute jump: movabs $hook, %r11; jmp *%r11 */

/* Length of the instruction at p that UCX can relocate, 0 if none. */
static size_t relocatable(const uint8_t *p)
{
	const uint8_t *q = p;
	uint8_t rex = 0, op, modrm, mod;

	op = *q++;
	if ((op & 0xf0) == 0x40) {
		rex = op;
		op = *q++;
	}
	if ((rex == 0 || rex == 0x41) && (op & 0xf0) == 0x50 && op < 0x58)
		return (size_t)(q - p);
	if (rex == 0x48 && op == 0x81) {
		if (*q++ == 0xec)
			return (size_t)(q - p) + 4;
		return 0;
	}
	if (rex == 0x48 && op == 0x89) {
		modrm = *q++;
		mod = modrm >> 6;
		if (modrm == 0xe5)
			return (size_t)(q - p);
		if (mod != 3 && (modrm & 7) == 4) {
			q++;			/* SIB */
			if (mod == 1)
				return (size_t)(q - p) + 1;
			if (mod == 2)
				return (size_t)(q - p) + 4;
		}
		return 0;
	}
	if (rex == 0 && (op & 0xf8) == 0xb8)
		return (size_t)(q - p) + 4;
	if (rex == 0 && op == 0x81 && *q == 0x3d)
		return (size_t)(q - p) + 1 + 4 + 4;
	return 0;
}

/* The first PATCH_MAX bytes at code decode into relocatable instructions. */
static bool patchable(const uint8_t *code, char *why, size_t len)
{
	size_t off = 0;

	while (off < PATCH_MAX) {
		size_t n = relocatable(code + off);

		if (!n) {
			snprintf(why, len, "byte %zu (%02x %02x %02x %02x) is not relocatable",
				 off, code[off], code[off + 1], code[off + 2], code[off + 3]);
			return false;
		}
		off += n;
	}
	return true;
}

/* UCX 1.13's ucm_cuda_driver_funcs and ucm_cuda_runtime_funcs. */
static const char *const hooked[] = {
	"cuMemAlloc", "cuMemAlloc_v2", "cuMemAllocManaged", "cuMemAllocPitch",
	"cuMemAllocPitch_v2", "cuMemFree", "cuMemFree_v2", "cuMemFreeHost",
	"cuMemFreeHost_v2",
	/* later UCX versions also hook the VMM map and unmap */
	"cuMemMap", "cuMemUnmap",
	"cudaFree", "cudaFreeHost", "cudaMalloc", "cudaMallocManaged",
	"cudaMallocPitch",
};

static int n_test;

static void ok(bool pass, const char *fmt, const char *a, const char *b)
{
	printf("%sok %d - ", pass ? "" : "not ", ++n_test);
	printf(fmt, a, b);
	printf("\n");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *what;
		uint8_t code[PATCH_MAX + 4];
		bool good;
	} samples[] = {
		{ "push %rbp; mov %rsp,%rbp; mov $0,%eax x2 (our stub)",
		  { 0x55, 0x48, 0x89, 0xe5, 0xb8, 0, 0, 0, 0, 0xb8, 0, 0, 0, 0, 0x5d }, true },
		{ "push r15..r12, rbx; sub $imm32,%rsp",
		  { 0x41, 0x57, 0x41, 0x56, 0x41, 0x55, 0x41, 0x54, 0x53,
		    0x48, 0x81, 0xec, 0x88, 0, 0, 0 }, true },
		{ "endbr64 first", { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 }, false },
		{ "sub $imm8,%rsp", { 0x55, 0x48, 0x83, 0xec, 0x18 }, false },
		{ "mov x(%rip),%rax", { 0x48, 0x8b, 0x05, 0, 0, 0, 0 }, false },
		{ "short function: push; jmp",
		  { 0x55, 0xe9, 0, 0, 0, 0 }, false },
	};
	char why[128];
	int failed = 0, found = 0;

	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		bool p = patchable(samples[i].code, why, sizeof(why));

		ok(p == samples[i].good, "decoder %s: %s", samples[i].good ?
		   "accepts" : "refuses", samples[i].what);
		failed += p != samples[i].good;
	}
	for (int a = 1; a < argc; a++) {
		void *lib = dlopen(argv[a], RTLD_NOW | RTLD_LOCAL);
		int in_lib = 0;

		ok(lib != NULL, "%s loads%s", argv[a], lib ? "" : " (dlopen failed)");
		if (!lib)
			printf("# %s\n", dlerror());
		if (!lib) {
			failed++;
			continue;
		}
		for (size_t i = 0; i < sizeof(hooked) / sizeof(hooked[0]); i++) {
			const uint8_t *code = dlsym(lib, hooked[i]);
			bool p;

			if (!code)
				continue;
			in_lib++;
			p = patchable(code, why, sizeof(why));
			why[p ? 0 : sizeof(why) - 1] = 0;
			ok(p, "%s can be patched by UCX's bistro%s", hooked[i], "");
			if (!p) {
				printf("# %s: %s\n", hooked[i], why);
				failed++;
			}
		}
		/* A library exporting none of them tests nothing: a failure. */
		ok(in_lib > 0, "%s exports hooked entry points%s", argv[a], "");
		failed += in_lib == 0;
		found += in_lib;
		dlclose(lib);
	}
	printf("# %d hooked entry points checked\n1..%d\n", found, n_test);
	return failed ? 1 : 0;
}
