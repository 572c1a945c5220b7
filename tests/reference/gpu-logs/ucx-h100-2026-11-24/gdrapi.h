/* Device-run stand-in: no gdrdrv on the GPU machine, so the "BAR" read
 * is a second cuMemcpyDtoH.  Scratch only, never built into the tree. */
#include <cuda.h>
#include <stdint.h>
#include <stddef.h>
typedef struct { int x; } *gdr_t;
typedef struct { uint64_t h; } gdr_mh_t;
typedef struct { uint64_t va; uint64_t mapped_size; } gdr_info_t;
static struct { int x; } gdr_dummy;
static uint64_t gdr_last_va, gdr_last_len;
static inline gdr_t gdr_open(void) { return (gdr_t)&gdr_dummy; }
static inline int gdr_close(gdr_t g) { (void)g; return 0; }
static inline int gdr_pin_buffer(gdr_t g, unsigned long a, size_t l, uint64_t t, uint32_t v, gdr_mh_t *h)
{ (void)g; (void)t; (void)v; h->h = a; gdr_last_va = a; gdr_last_len = l; return 0; }
static inline int gdr_unpin_buffer(gdr_t g, gdr_mh_t h) { (void)g; (void)h; return 0; }
static inline int gdr_get_info(gdr_t g, gdr_mh_t h, gdr_info_t *i)
{ (void)g; i->va = h.h; i->mapped_size = gdr_last_len; return 0; }
static inline int gdr_map(gdr_t g, gdr_mh_t h, void **p, size_t l)
{ (void)g; (void)l; *p = (void *)(uintptr_t)h.h; return 0; }
static inline int gdr_unmap(gdr_t g, gdr_mh_t h, void *p, size_t l) { (void)g; (void)h; (void)p; (void)l; return 0; }
static inline int gdr_copy_from_mapping(gdr_mh_t h, void *dst, const void *src, size_t n)
{ (void)h; return cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, n) != CUDA_SUCCESS; }
