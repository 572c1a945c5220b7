/* SPDX-License-Identifier: MIT */
/*
 * guest_unbind.h - what the guest tests that unbind the emulated GPU while
 * another process holds its memory share (header only):
 *
 *   GUEST_EMU_DRV                       nvp2p_emu's PCI driver folder in
 *                                       sysfs ("unbind", "bind" below it)
 *   guest_emu_bdf(bdf, n)               the PCI address of the device bound
 *                                       to nvp2p_emu (the first in name
 *                                       order) into BDF: 0, or -1 (BDF "")
 *                                       when none is bound
 *   guest_pipe_get(fd, ms)              one byte from FD within MS ms, or -1
 *   guest_pipe_put(fd, c)               one byte to FD; the process exits 9
 *                                       when it cannot be written
 *   guest_pipe_fail(fd)                 the holder's failure: 'e' to FD,
 *                                       and the process exits 1
 *   guest_exited_within(pid, ms, st)    1 if child PID exits within MS ms
 *                                       (its wait status in *ST), else 0
 *
 * The tests run the holder in a child and step it through a pair of pipes,
 * one byte a command and one a reply, so that the parent can watch the
 * unbind wait on it.
 */
#ifndef GUEST_UNBIND_H
#define GUEST_UNBIND_H

#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define GUEST_EMU_DRV "/sys/bus/pci/drivers/nvp2p_emu/"

static inline int guest_emu_bdf(char *bdf, size_t n)
{
	DIR *dir = opendir(GUEST_EMU_DRV);
	struct dirent *d;

	bdf[0] = '\0';
	while (dir && (d = readdir(dir)))
		if (!strncmp(d->d_name, "0000:", 5) &&
		    strlen(d->d_name) < n &&
		    (!bdf[0] || strcmp(d->d_name, bdf) < 0))
			memcpy(bdf, d->d_name, strlen(d->d_name) + 1);
	if (dir)
		closedir(dir);
	return bdf[0] ? 0 : -1;
}

static inline int guest_pipe_get(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return c;
}

static inline void guest_pipe_put(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(9);
}

static inline void __attribute__((noreturn)) guest_pipe_fail(int fd)
{
	guest_pipe_put(fd, 'e');
	_exit(1);
}

static inline int guest_exited_within(pid_t pid, int ms, int *status)
{
	for (int i = 0; i < ms / 10; i++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 1;
		usleep(10000);
	}
	return 0;
}

#endif
