// SPDX-License-Identifier: MIT
/*
 * gdirect-compat32.c - a 32-bit x86 process that pins and maps through
 * /dev/gdirect, for gdirect-compat (not a test by itself).
 *
 * Built with gcc -m32 -static -nostdlib: it needs no 32-bit C library,
 * in the guest nor on the build machine, and makes its system calls with
 * int $0x80, so the kernel sees compat calls (in_compat_syscall()).
 *
 * Usage: gdirect-compat32 FD|open VA P2P_TOKEN VA_SPACE REPORT_FD, numbers
 * in hex.  With "open" it opens /dev/gdirect itself (a file of a 32-bit
 * opener); with a number it uses that descriptor, opened by the same
 * process before it exec'd this program (a file of a 64-bit opener).  It
 * pins C32_PINS ranges of 64 KiB from VA with the legacy tokens, maps each
 * at the mmap_offset PIN answered (mmap2 takes it in 4 KiB units, 32 bits),
 * writes a marker at both ends of each mapping, reads all of them back,
 * unpins, and writes struct c32_report to REPORT_FD.
 */
#include "gdirect-compat32.h"
#include "gdirect_ioctl.h"

#define NR_EXIT		1
#define NR_WRITE	4
#define NR_OPEN		5
#define NR_IOCTL	54
#define NR_MUNMAP	91
#define NR_MMAP2	192

#define O_RDWR_		2
#define PROT_RW		3
#define PROT_READ_	1
#define MAP_SHARED_	1
#define KB64		0x10000UL

long c32_syscall6(long nr, long a, long b, long c, long d, long e, long f);
void c32_main(long *sp);

/* cdecl: the six arguments go to ebx, ecx, edx, esi, edi, ebp. */
__asm__(".text\n"
	".globl c32_syscall6\n"
	"c32_syscall6:\n"
	"	push %ebp\n"
	"	push %edi\n"
	"	push %esi\n"
	"	push %ebx\n"
	"	mov 20(%esp), %eax\n"
	"	mov 24(%esp), %ebx\n"
	"	mov 28(%esp), %ecx\n"
	"	mov 32(%esp), %edx\n"
	"	mov 36(%esp), %esi\n"
	"	mov 40(%esp), %edi\n"
	"	mov 44(%esp), %ebp\n"
	"	int $0x80\n"
	"	pop %ebx\n"
	"	pop %esi\n"
	"	pop %edi\n"
	"	pop %ebp\n"
	"	ret\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %esp, %eax\n"
	"	and $-16, %esp\n"
	"	sub $12, %esp\n"
	"	push %eax\n"
	"	call c32_main\n"
	"	hlt\n");

/* The compiler may call these for struct initialisation and copies. */
void *memset(void *s, int c, unsigned int n);
void *memcpy(void *d, const void *s, unsigned int n);

void *memset(void *s, int c, unsigned int n)
{
	unsigned char *p = s;

	while (n--)
		*p++ = (unsigned char)c;
	return s;
}

void *memcpy(void *d, const void *s, unsigned int n)
{
	unsigned char *p = d;
	const unsigned char *q = s;

	while (n--)
		*p++ = *q++;
	return d;
}

static long sys(long nr, long a, long b, long c)
{
	return c32_syscall6(nr, a, b, c, 0, 0, 0);
}

/* A negative return in -4095..-1 is an errno. */
static unsigned int err_of(long ret)
{
	return ret < 0 && ret > -4096 ? (unsigned int)-ret : 0;
}

static void *mmap2(unsigned long len, long prot, long fd, unsigned long pgoff,
		   unsigned int *err)
{
	long ret = c32_syscall6(NR_MMAP2, 0, (long)len, prot, MAP_SHARED_, fd,
				(long)pgoff);

	*err = err_of(ret);
	return *err ? (void *)0 : (void *)ret;
}

/* Hex, whole, at most 64 bits; -1 for anything else. */
static int hex(const char *s, unsigned long long *v)
{
	int n = 0;

	*v = 0;
	for (; *s; s++, n++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			return -1;
		if (n == 16)
			return -1;
		*v = *v << 4 | d;
	}
	return n ? 0 : -1;
}

static void finish(long fd, struct c32_report *rep, long code)
{
	rep->done = 1;
	if (sys(NR_WRITE, fd, (long)rep, sizeof(*rep)) != sizeof(*rep))
		code = 3;
	sys(NR_EXIT, code, 0, 0);
	for (;;)
		;
}

static void run(long fd, unsigned long long va, unsigned long long token,
		unsigned int va_space, struct c32_report *rep)
{
	volatile unsigned int *map[C32_PINS] = { 0 };
	const volatile unsigned int *status;
	unsigned int err, i;

	status = mmap2(GDIRECT_STATUS_BYTES, PROT_READ_, fd, 0, &err);
	if (err) {
		rep->open_err = err;
		return;
	}
	for (i = 0; i < C32_PINS; i++) {
		struct gdirect_pin p = {
			.addr = va + i * KB64, .size = KB64,
			.p2p_token = token, .va_space = va_space,
		};
		struct c32_pin *o = &rep->pin[i];

		o->status = ~0U;
		o->map_err = C32_UNREACHABLE;
		o->pin_err = err_of(sys(NR_IOCTL, fd, GDIRECT_IOC_PIN,
					(long)&p));
		if (o->pin_err)
			continue;
		o->handle = p.handle;
		o->mmap_offset = p.mmap_offset;
		o->status = status[p.status_slot];
		if ((p.mmap_offset & 0xfff) || (p.mmap_offset >> 12) >> 32)
			continue;
		map[i] = mmap2(KB64, PROT_RW, fd, p.mmap_offset >> 12,
			       &o->map_err);
		if (i == 0)
			mmap2(KB64, PROT_RW, fd, (p.mmap_offset + KB64) >> 12,
			      &rep->past_err);
	}
	for (i = 0; i < C32_PINS; i++) {
		if (!map[i])
			continue;
		map[i][0] = 0xc0de0000 + i;
		map[i][KB64 / 4 - 1] = 0x0dec0000 + i;
	}
	__asm__ volatile("sfence" ::: "memory");
	for (i = 0; i < C32_PINS; i++) {
		if (!map[i])
			continue;
		rep->pin[i].readback = map[i][0] == 0xc0de0000 + i &&
				       map[i][KB64 / 4 - 1] == 0x0dec0000 + i;
		sys(NR_MUNMAP, (long)map[i], KB64, 0);
	}
	for (i = 0; i < C32_PINS; i++) {
		struct gdirect_unpin u = { .handle = rep->pin[i].handle };

		if (rep->pin[i].pin_err)
			continue;
		err = err_of(sys(NR_IOCTL, fd, GDIRECT_IOC_UNPIN, (long)&u));
		if (err && !rep->unpin_err)
			rep->unpin_err = err;
	}
}

void c32_main(long *sp)
{
	static struct c32_report rep;
	char **argv = (char **)(sp + 1);
	unsigned long long fd, va, token, va_space, out;

	if (sp[0] != 6 || hex(argv[2], &va) || hex(argv[3], &token) ||
	    hex(argv[4], &va_space) || hex(argv[5], &out))
		sys(NR_EXIT, 2, 0, 0);
	if (argv[1][0] == 'o') {
		long ret = sys(NR_OPEN, (long)"/dev/gdirect", O_RDWR_, 0);

		rep.open_err = err_of(ret);
		fd = (unsigned long long)ret;
	} else if (hex(argv[1], &fd)) {
		sys(NR_EXIT, 2, 0, 0);
	}
	if (!rep.open_err)
		run((long)fd, va, token, (unsigned int)va_space, &rep);
	finish((long)out, &rep, 0);
}
