/* SPDX-License-Identifier: MIT */
/*
 * Layouts and .param spellings with known answers: the PTX
 * Interoperability guide's rules and examples (chapter 1 tables, Fig. 5,
 * the bit-field rules), vector_types.h alignments, and what nvcc 13.0 was
 * observed to emit (docs/ptxabi.md, and the design note's table).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxabi.h"
#include "tap.h"

/* One TAP line per check, described by what it compares. */
static void check(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void check(int ok, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tap_ok(ok, "%s", what);
}

static ptxabi_ctx *ctx;

static void parse(const char *src)
{
	if (ptxabi_parse(ctx, src, strlen(src), "known.h"))
		check(0, "parse: %s\n  in: %s", ptxabi_error(ctx), src);
}

static void layout(const char *type, size_t size, size_t align)
{
	struct ptxabi_layout l;

	if (ptxabi_type_layout(ctx, type, &l)) {
		check(0, "%s: %s", type, ptxabi_error(ctx));
		return;
	}
	check(l.size == size && l.align == align,
	      "%s: size/align %zu/%zu, expected %zu/%zu", type, l.size,
	      l.align, size, align);
}

static void member(const char *type, const char *path, size_t off)
{
	struct ptxabi_member m;

	if (ptxabi_member(ctx, type, path, &m)) {
		check(0, "%s.%s: %s", type, path, ptxabi_error(ctx));
		return;
	}
	check(m.offset == off && m.bit_width == 0,
	      "%s.%s: offset %zu, expected %zu", type, path, m.offset, off);
}

static void bits(const char *type, const char *path, size_t off,
		 unsigned bit, unsigned width)
{
	struct ptxabi_member m;

	if (ptxabi_member(ctx, type, path, &m)) {
		check(0, "%s.%s: %s", type, path, ptxabi_error(ctx));
		return;
	}
	check(m.offset == off && m.bit_offset == bit && m.bit_width == width,
	      "%s.%s: byte %zu bit %u width %u, expected %zu/%u/%u", type,
	      path, m.offset, m.bit_offset, m.bit_width, off, bit, width);
}

static void decl(const char *func, int param, const char *want)
{
	char buf[256];

	if (ptxabi_param_decl(ctx, func, param, buf, sizeof(buf)) < 0) {
		check(0, "%s/%d: %s", func, param, ptxabi_error(ctx));
		return;
	}
	check(strcmp(buf, want) == 0, "%s/%d: '%s', expected '%s'", func,
	      param, buf, want);
}

static void text(unsigned what, const char *name, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		check(0, "open_memstream");
		return;
	}
	if (ptxabi_print(ctx, f, what, name))
		fprintf(f, "error: %s", ptxabi_error(ctx));
	fclose(f);
	check(strcmp(buf, want) == 0, "%s:\n--- got\n%s--- expected\n%s",
	      name, buf, want);
	free(buf);
}

static void fundamentals(void)
{
	/* Guide 1.1: sizes are the host's (LP64), alignment = size. */
	layout("char", 1, 1);
	layout("signed char", 1, 1);
	layout("unsigned char", 1, 1);
	layout("_Bool", 1, 1);
	layout("bool", 1, 1);
	layout("short", 2, 2);
	layout("unsigned short int", 2, 2);
	layout("int", 4, 4);
	layout("unsigned", 4, 4);
	layout("long", 8, 8);
	layout("unsigned long int", 8, 8);
	layout("long long", 8, 8);
	layout("unsigned long long", 8, 8);
	layout("float", 4, 4);
	layout("double", 8, 8);
	layout("void *", 8, 8);
	layout("int (*)(int)", 8, 8);
	layout("uint64_t", 8, 8);
	layout("size_t", 8, 8);
	layout("__half", 2, 2);
	layout("__nv_bfloat16", 2, 2);
	layout("__half2", 4, 4);
	layout("int[3][5]", 60, 4);
}

static void vectors(void)
{
	/* Guide 1.2: odd counts align as the element, even counts as
	 * count * element; vector_types.h caps 4 x 8-byte at 16 (or 32 for
	 * the _32a types). */
	layout("char1", 1, 1);
	layout("char2", 2, 2);
	layout("char3", 3, 1);
	layout("char4", 4, 4);
	layout("uchar3", 3, 1);
	layout("short2", 4, 4);
	layout("short3", 6, 2);
	layout("ushort4", 8, 8);
	layout("int1", 4, 4);
	layout("int2", 8, 8);
	layout("int3", 12, 4);
	layout("uint4", 16, 16);
	layout("long1", 8, 8);
	layout("long2", 16, 16);
	layout("long3", 24, 8);
	layout("ulong4", 32, 16);
	layout("long4_32a", 32, 32);
	layout("float1", 4, 4);
	layout("float2", 8, 8);
	layout("float3", 12, 4);
	layout("float4", 16, 16);
	layout("longlong2", 16, 16);
	layout("ulonglong3", 24, 8);
	layout("double1", 8, 8);
	layout("double2", 16, 16);
	layout("double3", 24, 8);
	layout("double4", 32, 16);
	layout("double4_16a", 32, 16);
	layout("double4_32a", 32, 32);
	member("float3", "z", 8);
	member("double2", "y", 8);
}

static void aggregates(void)
{
	parse("struct A { char c; double d; short s; };\n"
	      "union U { float f; int i; char c[6]; };\n"
	      "struct __align__(32) B { float x[3]; };\n"
	      "struct E { };\n"
	      "struct V { int v[5]; };\n"
	      "struct N { char c; struct A a[2]; float3 p; };\n"
	      "struct Anon { int a; union { char c; double d; }; int z; };\n"
	      "typedef struct { char c; int i __attribute__((aligned(16))); "
	      "} mal_t;\n"
	      "struct P { void (*fp)(int, float); char tail; };\n"
	      "struct Self { struct Self *next; char k; };\n");
	layout("struct A", 24, 8);
	member("struct A", "d", 8);
	member("struct A", "s", 16);
	layout("union U", 8, 4);	/* observed: .align 4 .b8 x[8] */
	layout("struct B", 32, 32);	/* observed: .align 32 .b8 x[32] */
	layout("struct E", 1, 1);	/* observed: .align 1 .b8 x[1] */
	layout("struct V", 20, 4);
	layout("struct N", 72, 8);
	member("struct N", "a", 8);
	member("struct N", "a[1].s", 48);
	member("struct N", "p.y", 60);
	layout("struct Anon", 24, 8);
	member("struct Anon", "d", 8);
	member("struct Anon", "z", 16);
	layout("mal_t", 32, 16);
	member("mal_t", "i", 16);
	layout("struct P", 16, 8);
	member("struct P", "tail", 8);
	layout("struct Self", 16, 8);
}

static void bitfields(void)
{
	parse(/* guide Fig. 5 */
	      "union F5 { char c; short s:8; };\n"
	      /* observed in nvcc's loads: a bits 0-2, b 3-31, c byte 4 */
	      "struct W { unsigned a:3; unsigned b:29; unsigned c:5; };\n"
	      "struct X { char x; int y:4; short z:12; };\n"
	      /* a bit-field never crosses a unit of its type */
	      "struct C { char a[3]; int b:9; };\n"
	      "struct L { char a; long long b:60; char c; };\n"
	      /* unnamed bit-fields do not align the record */
	      "struct Un { char c; int :4; };\n"
	      "struct Un2 { char a; long long :3; char b; };\n"
	      /* zero width: next member at the type's boundary, record
	       * alignment unchanged (nvcc: size 5, align 1) */
	      "struct Z { char a; int :0; char b; };\n"
	      "struct Z2 { char a; int :0; };\n"
	      "struct Z3 { char a; short :0; char b:3; long long :0; };\n"
	      /* unions: a bit-field takes ceil(width/8) bytes */
	      "union UB { char c; int :20; };\n"
	      "union UN { char c; int x:20; };\n"
	      /* plain bit-fields are signed; types of all widths */
	      "struct S { signed :6; unsigned char u:8; _Bool f:1; "
	      "unsigned long long w:64; };\n");
	layout("union F5", 2, 2);
	bits("union F5", "s", 0, 0, 8);
	layout("struct W", 8, 4);
	bits("struct W", "a", 0, 0, 3);
	bits("struct W", "b", 0, 3, 29);
	bits("struct W", "c", 4, 0, 5);
	layout("struct X", 4, 4);
	bits("struct X", "y", 1, 0, 4);
	bits("struct X", "z", 2, 0, 12);
	layout("struct C", 8, 4);
	bits("struct C", "b", 4, 0, 9);
	layout("struct L", 24, 8);
	bits("struct L", "b", 8, 0, 60);
	member("struct L", "c", 16);
	layout("struct Un", 2, 1);
	layout("struct Un2", 3, 1);
	member("struct Un2", "b", 2);
	layout("struct Z", 5, 1);
	member("struct Z", "b", 4);
	layout("struct Z2", 4, 1);
	layout("struct Z3", 8, 1);
	bits("struct Z3", "b", 2, 0, 3);
	layout("union UB", 3, 1);
	layout("union UN", 4, 4);
	layout("struct S", 16, 8);
	bits("struct S", "u", 1, 0, 8);
	bits("struct S", "f", 2, 0, 1);
	bits("struct S", "w", 8, 0, 64);
}

static void preprocessor(void)
{
	parse("#define N 4\n"
	      "#define ARR(t, n) t arr[n]\n"
	      "#define DEV extern \"C\" __device__\n"
	      "#ifdef __CUDACC__\n"
	      "struct PP { ARR(char, N * 2 + 1); int tail; };\n"
	      "#else\n"
	      "struct PP { char only; };\n"
	      "#endif\n"
	      "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !FOO\n"
	      "struct Q { char pad[sizeof(double2) - 3]; "
	      "char al[_Alignof(float4)]; };\n"
	      "#elif 1\n"
	      "#error not taken\n"
	      "#endif\n"
	      "enum Sz { SZ_A = 3, SZ_B };\n"
	      "struct En { enum Sz e; char c[SZ_B]; };\n"
	      "static_assert(sizeof(struct PP) == 16, \"pp\");\n"
	      "DEV int pp_fn(struct PP p);\n");
	layout("struct PP", 16, 4);
	member("struct PP", "tail", 12);
	layout("struct Q", 29, 1);
	layout("struct En", 8, 4);
	layout("enum Sz", 4, 4);
}

static void params(void)
{
	parse("#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
	      "__device__ char pc(char a, unsigned char b, short c, _Bool d);\n"
	      "__device__ double pd(float a, double b, long c, int *d, "
	      "const struct A *e);\n"
	      "__device__ float3 pv(float3 a, double2 b, char3 c, __half h);\n"
	      "__device__ union U pu(struct B b, struct E e, int arr[4]);\n"
	      "__device__ __half2 ph(__half2 a, int b);\n"
	      "__device__ unsigned __int128 pi(__int128 a, enum Sz e);\n"
	      "__device__ void pvoid(void);\n"
	      "__device__ struct W pw(struct W w, void (*cb)(int));\n"
	      "#ifdef __cplusplus\n}\n#endif\n");
	/* integers up to 32 bits and float: .b32; 64 bits, pointers,
	 * double: .b64 (nvcc's spelling, not the guide's .u32/.f64) */
	decl("pc", -1, ".param .b32 func_retval0");
	decl("pc", 0, ".param .b32 pc_param_0");
	decl("pc", 1, ".param .b32 pc_param_1");
	decl("pc", 2, ".param .b32 pc_param_2");
	decl("pc", 3, ".param .b32 pc_param_3");
	decl("pd", -1, ".param .b64 func_retval0");
	decl("pd", 0, ".param .b32 pd_param_0");
	decl("pd", 1, ".param .b64 pd_param_1");
	decl("pd", 2, ".param .b64 pd_param_2");
	decl("pd", 3, ".param .b64 pd_param_3");
	decl("pd", 4, ".param .b64 pd_param_4");
	/* aggregates: .align A .b8 name[size] (guide 2.3) */
	decl("pv", -1, ".param .align 4 .b8 func_retval0[12]");
	decl("pv", 1, ".param .align 16 .b8 pv_param_1[16]");
	decl("pv", 2, ".param .align 1 .b8 pv_param_2[3]");
	decl("pv", 3, ".param .align 2 .b8 pv_param_3[2]");
	decl("pu", -1, ".param .align 4 .b8 func_retval0[8]");
	decl("pu", 0, ".param .align 32 .b8 pu_param_0[32]");
	decl("pu", 1, ".param .align 1 .b8 pu_param_1[1]");
	decl("pu", 2, ".param .b64 pu_param_2");	/* array decays */
	/* __half2 has a C++ copy constructor: invisible reference */
	decl("ph", -1, ".param .b64 ph_param_0");
	decl("ph", 0, ".param .b64 ph_param_1");
	decl("ph", 1, ".param .b32 ph_param_2");
	decl("pi", -1, ".param .align 16 .b8 func_retval0[16]");
	decl("pi", 1, ".param .b32 pi_param_1");
	decl("pvoid", -1, "");
	decl("pw", 0, ".param .align 4 .b8 pw_param_0[8]");
	decl("pw", 1, ".param .b64 pw_param_1");

	text(PTXABI_PROTOS, "pv",
	     ".visible .func  (.param .align 4 .b8 func_retval0[12]) pv(\n"
	     "\t.param .align 4 .b8 pv_param_0[12],\n"
	     "\t.param .align 16 .b8 pv_param_1[16],\n"
	     "\t.param .align 1 .b8 pv_param_2[3],\n"
	     "\t.param .align 2 .b8 pv_param_3[2]\n"
	     ")\n");
	text(PTXABI_PROTOS, "pvoid", ".visible .func pvoid()\n");
	text(PTXABI_EXTERNS, "pvoid", ".extern .func pvoid\n()\n;\n");
	text(PTXABI_EXTERNS, "ph",
	     ".extern .func ph\n(\n"
	     "\t.param .b64 ph_param_0,\n"
	     "\t.param .b64 ph_param_1,\n"
	     "\t.param .b32 ph_param_2\n"
	     ")\n;\n");
	text(PTXABI_CALLS, "pc",
	     "\t{ // callseq 1, 0\n"
	     "\t.reg .b32 temp_param_reg;\n"
	     "\t.param .b32 param0;\n"
	     "\tst.param.b32 \t[param0+0], %r1;\n"
	     "\t.param .b32 param1;\n"
	     "\tst.param.b32 \t[param1+0], %r2;\n"
	     "\t.param .b32 param2;\n"
	     "\tst.param.b32 \t[param2+0], %r3;\n"
	     "\t.param .b32 param3;\n"
	     "\tst.param.b32 \t[param3+0], %r4;\n"
	     "\t.param .b32 retval0;\n"
	     "\tcall.uni (retval0), \n"
	     "\tpc, \n"
	     "\t(\n"
	     "\tparam0, \n"
	     "\tparam1, \n"
	     "\tparam2, \n"
	     "\tparam3\n"
	     "\t);\n"
	     "\tld.param.b32 \t%r5, [retval0+0];\n"
	     "\t} // callseq 1\n");
	/* a bit-field record moves bytewise, a vector per element */
	text(PTXABI_CALLS, "pw",
	     "\t{ // callseq 8, 0\n"
	     "\t.reg .b32 temp_param_reg;\n"
	     "\t.param .align 4 .b8 param0[8];\n"
	     "\tst.param.b8 \t[param0+0], %rs1;\n"
	     "\tst.param.b8 \t[param0+1], %rs2;\n"
	     "\tst.param.b8 \t[param0+2], %rs3;\n"
	     "\tst.param.b8 \t[param0+3], %rs4;\n"
	     "\tst.param.b8 \t[param0+4], %rs5;\n"
	     "\t.param .b64 param1;\n"
	     "\tst.param.b64 \t[param1+0], %rd1;\n"
	     "\t.param .align 4 .b8 retval0[8];\n"
	     "\tcall.uni (retval0), \n"
	     "\tpw, \n"
	     "\t(\n"
	     "\tparam0, \n"
	     "\tparam1\n"
	     "\t);\n"
	     "\tld.param.b8 \t%rs6, [retval0+0];\n"
	     "\tld.param.b8 \t%rs7, [retval0+1];\n"
	     "\tld.param.b8 \t%rs8, [retval0+2];\n"
	     "\tld.param.b8 \t%rs9, [retval0+3];\n"
	     "\tld.param.b8 \t%rs10, [retval0+4];\n"
	     "\t} // callseq 8\n");
	check(ptxabi_func_count(ctx) == 9, "function count %zu, expected 9",
	      ptxabi_func_count(ctx));
	check(ptxabi_func_name(ctx, 0) &&
	      strcmp(ptxabi_func_name(ctx, 0), "pp_fn") == 0,
	      "first function is %s", ptxabi_func_name(ctx, 0));
}

int main(void)
{
	ctx = ptxabi_new();
	if (!ctx) {
		tap_ok(0, "ptxabi_new");
		return tap_done();
	}
	fundamentals();
	vectors();
	aggregates();
	bitfields();
	preprocessor();
	params();
	text(PTXABI_TYPES, "struct X",
	     "struct X: size 4, align 4\n"
	     "    offset   size  member\n"
	     "         0      1  x                        char\n"
	     "       1.0     :4  y                        int : 4\n"
	     "       2.0    :12  z                        short : 12\n");
	ptxabi_free(ctx);
	return tap_done();
}
