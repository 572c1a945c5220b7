// SPDX-License-Identifier: MIT
/*
 * compat.c - 32-bit callers of /dev/gdirect (issue 33, item 7)
 *
 * A 32-bit process maps with mmap2(), whose offset is a 32-bit count of
 * 4 KiB units: it reaches offsets below 2^44 only.  Every pin that PIN
 * answers with success must be mappable at the mmap_offset it answered;
 * where no such offset is left the pin must fail (ENOSPC) instead.  Two
 * files are tried, each by gdirect-compat32, a static 32-bit program
 * that pins C32_PINS regions with the legacy tokens of this process's
 * emulator memory and maps each: one it opens itself (a 32-bit opener:
 * every pin must succeed and map), and one a 64-bit process opened before
 * it exec'd the program (the pins that fit succeed and map, the rest get
 * ENOSPC).  Skipped, saying why, where the program could not be built (no
 * 32-bit x86 compiler) or the guest kernel runs no 32-bit programs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdirect-compat32.h"
#include "gdt.h"
#include "nvp2p_emu.h"

#define HELPER	"/tests/gdirect-compat32"
/* exit statuses of the forked child when exec fails */
#define EXEC_NOEXEC	125
#define EXEC_FAILED	126

static uint64_t va;
static struct nvp2p_emu_tokens tok;

/* Emulator memory for C32_PINS pins, and its legacy tokens. */
static int memory(void)
{
	struct nvp2p_emu_alloc a = { .size = C32_PINS * GDT_KB64 };
	int mfd = open(NVP2P_EMU_DEVICE, O_RDWR | O_CLOEXEC);
	void *res = mmap(NULL, a.size + GDT_KB64, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (mfd < 0 || res == MAP_FAILED)
		return -1;
	a.va = ((uintptr_t)res + GDT_KB64 - 1) & ~(GDT_KB64 - 1);
	if (ioctl(mfd, NVP2P_EMU_IOC_ALLOC, &a) ||
	    ioctl(mfd, NVP2P_EMU_IOC_TOKENS, &tok))
		return -1;
	va = a.va;
	return 0;	/* mfd stays open: the memory lives as long */
}

/*
 * Run the helper in a child, on a file it opens itself (@own) or on one
 * the child opens before exec.  0 with *rep filled; 1 when the guest
 * cannot run it (a skip, said); -1 on failure (said).
 */
static int run(int own, struct c32_report *rep)
{
	char fdarg[16], vaarg[24], tokarg[24], vsarg[16], outarg[16];
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(p))
		return -1;
	snprintf(vaarg, sizeof(vaarg), "%llx", (unsigned long long)va);
	snprintf(tokarg, sizeof(tokarg), "%llx",
		 (unsigned long long)tok.p2p_token);
	snprintf(vsarg, sizeof(vsarg), "%x", tok.va_space);
	snprintf(outarg, sizeof(outarg), "%x", p[1]);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = own ? -1 : open("/dev/gdirect", O_RDWR);

		close(p[0]);
		if (!own && fd < 0)
			_exit(EXEC_FAILED);
		snprintf(fdarg, sizeof(fdarg), own ? "open" : "%x", fd);
		execl(HELPER, HELPER, fdarg, vaarg, tokarg, vsarg, outarg,
		      (char *)NULL);
		_exit(errno == ENOEXEC ? EXEC_NOEXEC : EXEC_FAILED);
	}
	close(p[1]);
	memset(rep, 0, sizeof(*rep));
	n = pid < 0 ? -1 : read(p[0], rep, sizeof(*rep));
	close(p[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXEC_NOEXEC) {
		tap_skip("32-bit callers",
			 "the guest kernel runs no 32-bit programs (no CONFIG_IA32_EMULATION, or ia32_emulation=0)");
		return 1;
	}
	if (n != sizeof(*rep) || !rep->done || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		tap_ok(0, "%s ran and reported (status %#x, %zd bytes)",
		       HELPER, status, n);
		return -1;
	}
	return 0;
}

/* Pins [0, nok) succeed and map; [nok, C32_PINS) get ENOSPC. */
static void check(const char *who, const struct c32_report *rep,
		  unsigned int shift, int nok)
{
	int pinned = 0, shape = 1, mapped = 0, back = 0, word = 0, refused = 0;
	int unusable = 0;

	tap_ok(rep->open_err == 0, "%s: opened, status area mapped (%s)", who,
	       strerror(rep->open_err));
	for (int i = 0; i < C32_PINS; i++) {
		const struct c32_pin *o = &rep->pin[i];

		if (o->pin_err) {
			refused += i >= nok && o->pin_err == ENOSPC;
			continue;
		}
		pinned += i < nok;
		shape &= o->mmap_offset == o->handle << shift;
		mapped += o->map_err == 0;
		unusable += o->map_err != 0;
		back += o->readback;
		word += o->status == GDIRECT_STATUS_PINNED;
		if (o->map_err)
			tap_diag("%s: pin %d: handle %llu, mmap_offset %#llx: %s",
				 who, i, (unsigned long long)o->handle,
				 (unsigned long long)o->mmap_offset,
				 o->map_err == C32_UNREACHABLE ?
				 "beyond mmap2's 32-bit page offset" :
				 strerror(o->map_err));
	}
	tap_ok(pinned == nok, "%s: the first %d pins succeed (%d did)", who,
	       nok, pinned);
	tap_ok(refused == C32_PINS - nok,
	       "%s: the other %d get ENOSPC (%d did)", who, C32_PINS - nok,
	       refused);
	tap_ok(shape, "%s: mmap_offset is handle << %u", who, shift);
	tap_ok(!unusable && mapped == nok,
	       "%s: every successful pin maps with mmap2 (%d of %d; %d not)",
	       who, mapped, nok, unusable);
	tap_ok(back == nok, "%s: each mapping reaches its own pages (%d of %d)",
	       who, back, nok);
	tap_ok(word == nok, "%s: each status word reads PINNED (%d of %d)",
	       who, word, nok);
	errno = (int)rep->past_err;
	tap_errno(errno ? -1 : 0, EINVAL, "%s: mmap past a region's end", who);
	errno = (int)rep->unpin_err;
	tap_errno(errno ? -1 : 0, 0, "%s: every pin unpins", who);
}

static void body(void)
{
	struct c32_report rep;

	if (access(HELPER, X_OK)) {
		tap_skip("32-bit callers",
			 HELPER " was not built: the build machine's compiler cannot build 32-bit x86 programs (gcc -m32)");
		return;
	}
	if (!tap_ok(memory() == 0, "emulator memory and its legacy tokens"))
		return;
	if (run(1, &rep) == 0)
		check("32-bit opener", &rep, 32, C32_PINS);
	/* A 64-bit file's windows are 1 TiB: mmap2 reaches handles 1-15. */
	if (run(0, &rep) == 0)
		check("64-bit opener, 32-bit caller", &rep, 40, 15);
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
