// SPDX-License-Identifier: MIT
/*
 * gdrapi_probe.c - print the interface that a gdrapi.h declares
 *
 * peer.sh compiles this file twice, once with -include of
 * gdrcopy's own include/gdrapi.h from its release tarball and once with ours
 * (gdrapi/include/gdrapi.h), runs both and compares the output line by
 * line.  Each line is "key value", the value one word: every macro's value
 * and C type, every enumerator's value, every enumeration's size, what each
 * typedef names, every structure's size and alignment, and every member's
 * offset, size and type (a bit-field's first bit, width and signedness).
 * A name that one header lacks fails that compilation, so the comparison
 * cannot pass by leaving a line out.  The functions' prototypes are
 * compared by the script itself, by redeclaration.  The header comes from
 * the command line, because the two must not see each other.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define STR(x)		#x
#define XSTR(x)		STR(x)

/* The C type of an expression, as one word. */
#define TYPE(x) _Generic((x),						\
	_Bool: "_Bool", char: "char", signed char: "signed_char",	\
	unsigned char: "unsigned_char", short: "short",			\
	unsigned short: "unsigned_short", int: "int",			\
	unsigned int: "unsigned_int", long: "long",			\
	unsigned long: "unsigned_long", long long: "long_long",	\
	unsigned long long: "unsigned_long_long", default: "other")

/* A macro: its value and the type of its expansion. */
#define P(name) do {							\
	printf("%s %#llx\n", #name, (unsigned long long)(name));	\
	printf("type(%s) %s\n", #name, TYPE(name));			\
} while (0)

/* An enumerator: its value (enumerators are int in C). */
#define E(name)		printf("%s %d\n", #name, (int)(name))

/* An enumeration's tag, by the size of its type. */
#define ENUM(tag)	printf("enum(%s) %zu\n", #tag, sizeof(enum tag))

/* A typedef: WORD when it names the type T, else "other". */
#define TD(td, t, word)	printf("typedef(%s) %s\n", #td,		\
			       _Generic((td *)0, t *: #word, default: "other"))

/* A structure's tag, by its size and alignment. */
#define STRUCT(tag) do {						\
	printf("struct(%s) %zu\n", #tag, sizeof(struct tag));		\
	printf("_Alignof(%s) %zu\n", #tag, _Alignof(struct tag));	\
} while (0)

/* A member: its offset, size and type. */
#define M(tag, m) do {							\
	struct tag gd_s;						\
	printf("member(%s.%s) %zu\n", #tag, #m, offsetof(struct tag, m)); \
	printf("sizeof(%s.%s) %zu\n", #tag, #m, sizeof(gd_s.m));	\
	printf("type(%s.%s) %s\n", #tag, #m, TYPE(gd_s.m));		\
} while (0)

/*
 * A bit-field member: its first bit (in memory order, bit 0 the least
 * significant bit of byte 0), its width and whether it is signed, found by
 * setting it to all ones in a zeroed structure.
 */
#define BITS(tag, m) do {						\
	struct tag gd_s;						\
	memset(&gd_s, 0, sizeof(gd_s));					\
	gd_s.m = 0;							\
	gd_s.m--;							\
	bits(#tag "." #m, (const unsigned char *)&gd_s, sizeof(gd_s),	\
	     gd_s.m < 1);						\
} while (0)

static void bits(const char *key, const unsigned char *p, size_t n,
		 int is_signed)
{
	size_t first = 0, width = 0, i;

	for (i = 0; i < n * 8; i++) {
		if (!(p[i / 8] & (1u << (i % 8))))
			continue;
		if (!width)
			first = i;
		width++;
	}
	printf("member(%s) bit%zu+%zu%s\n", key, first, width,
	       is_signed ? "s" : "u");
}

int main(void)
{
#ifdef __GDRAPI_H__
	/* The guard: the same one, so that the second header is empty. */
	printf("__GDRAPI_H__ \"%s\"\n", XSTR(__GDRAPI_H__));
#endif
	P(MAJOR_VERSION_SHIFT);
	P(MINOR_VERSION_MASK);
	P(GDR_API_MAJOR_VERSION);
	P(GDR_API_MINOR_VERSION);
	P(GDR_API_VERSION);
	P(MINIMUM_GDRDRV_MAJOR_VERSION);
	P(MINIMUM_GDRDRV_MINOR_VERSION);
	P(MINIMUM_GDRDRV_VERSION);
	P(GPU_PAGE_SHIFT);
	P(GPU_PAGE_SIZE);
	P(GPU_PAGE_OFFSET);
	P(GPU_PAGE_MASK);
	/* A macro naming a function: the name it expands to. */
	printf("gdr_get_info %s\n", XSTR(gdr_get_info));

	STRUCT(gdr_mh_s);
	M(gdr_mh_s, h);

	ENUM(gdr_pin_flags);
	E(GDR_PIN_FLAG_DEFAULT);
	E(GDR_PIN_FLAG_FORCE_PCIE);

	ENUM(gdr_mapping_type);
	E(GDR_MAPPING_TYPE_NONE);
	E(GDR_MAPPING_TYPE_WC);
	E(GDR_MAPPING_TYPE_CACHING);
	E(GDR_MAPPING_TYPE_DEVICE);
	E(GDR_MAPPING_TYPE_MAX);

	STRUCT(gdr_info_v2);
	M(gdr_info_v2, va);
	M(gdr_info_v2, mapped_size);
	M(gdr_info_v2, page_size);
	M(gdr_info_v2, tm_cycles);
	M(gdr_info_v2, cycles_per_ms);
	BITS(gdr_info_v2, mapped);
	BITS(gdr_info_v2, wc_mapping);
	M(gdr_info_v2, mapping_type);

	ENUM(gdr_map_flags);
	E(GDR_MAP_FLAG_DEFAULT);
	E(GDR_MAP_FLAG_REQ_WC_MAPPING);
	E(GDR_MAP_FLAG_REQ_CACHE_MAPPING);
	E(GDR_MAP_FLAG_REQ_DEVICE_MAPPING);

	ENUM(gdr_attr);
	E(GDR_ATTR_USE_PERSISTENT_MAPPING);
	E(GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE);
	E(GDR_ATTR_USING_DMA_BUF_MMAP);
	E(GDR_ATTR_MAX);

	/* struct gdr is opaque: only its name, through gdr_t. */
	printf("struct(gdr) %s\n",
	       _Generic((gdr_t)0, struct gdr *: "opaque", default: "other"));
	TD(gdr_t, struct gdr *, struct_gdr_pointer);
	TD(gdr_mh_t, struct gdr_mh_s, struct_gdr_mh_s);
	TD(gdr_pin_flags_t, enum gdr_pin_flags, enum_gdr_pin_flags);
	TD(gdr_mapping_type_t, enum gdr_mapping_type, enum_gdr_mapping_type);
	TD(gdr_info_v2_t, struct gdr_info_v2, struct_gdr_info_v2);
	TD(gdr_info_t, struct gdr_info_v2, struct_gdr_info_v2);
	TD(gdr_map_flags_t, enum gdr_map_flags, enum_gdr_map_flags);
	TD(gdr_attr_t, enum gdr_attr, enum_gdr_attr);
	return 0;
}
