/* SPDX-License-Identifier: MIT */
/*
 * The gdirect.ko backend: ioctls on /dev/gdirect, mmap of regions at
 * gdirect_pin.mmap_offset, the read-only status area at offset 0 and
 * revocation events by read().
 */
#include "pin_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uapi/gdirect_ioctl.h>

_Static_assert(GDL_STATUS_PINNED == GDIRECT_STATUS_PINNED, "status values");
_Static_assert(GDL_STATUS_REVOKED == GDIRECT_STATUS_REVOKED, "status values");

struct kbackend {
	struct gdl_backend b;
	int fd;
	void *status_map;
};

static int k_pin(struct gdl_backend *b, uint64_t addr, uint64_t size,
		 struct gdl_pin *out)
{
	struct kbackend *k = (struct kbackend *)b;
	struct gdirect_pin p = { .addr = addr, .size = size };

	if (ioctl(k->fd, GDIRECT_IOC_PIN, &p) < 0)
		return -errno;
	out->handle = p.handle;
	out->addr = p.pinned_addr;
	out->size = p.pinned_size;
	out->mmap_offset = p.mmap_offset;
	out->slot = p.status_slot;
	return 0;
}

static int k_unpin(struct gdl_backend *b, uint64_t handle)
{
	struct kbackend *k = (struct kbackend *)b;
	struct gdirect_unpin u = { .handle = handle };

	return ioctl(k->fd, GDIRECT_IOC_UNPIN, &u) < 0 ? -errno : 0;
}

static void *k_map(struct gdl_backend *b, const struct gdl_pin *p)
{
	struct kbackend *k = (struct kbackend *)b;
	void *m = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       k->fd, (off_t)p->mmap_offset);

	return m == MAP_FAILED ? NULL : m;
}

static void k_unmap(struct gdl_backend *b, void *addr, size_t len)
{
	(void)b;
	munmap(addr, len);
}

static int k_read_events(struct gdl_backend *b, struct gdl_revocation *ev,
			 int max)
{
	struct kbackend *k = (struct kbackend *)b;
	struct gdirect_event buf[32];
	int n = 0;

	while (n < max) {
		int want = max - n < 32 ? max - n : 32;
		ssize_t got = read(k->fd, buf, want * sizeof(buf[0]));

		if (got < 0)
			return n ? n : (errno == EAGAIN ? 0 : -errno);
		if (got == 0)
			break;
		for (size_t i = 0; i < got / sizeof(buf[0]); i++) {
			ev[n].handle = buf[i].handle;
			ev[n].addr = buf[i].pinned_addr;
			ev[n].size = buf[i].pinned_size;
			ev[n].slot = buf[i].status_slot;
			n++;
		}
		if ((size_t)got < want * sizeof(buf[0]))
			break;
	}
	return n;
}

static void k_destroy(struct gdl_backend *b)
{
	struct kbackend *k = (struct kbackend *)b;

	if (k->status_map)
		munmap(k->status_map, GDIRECT_STATUS_BYTES);
	close(k->fd);
	free(k);
}

static const struct gdl_backend_ops kernel_ops = {
	.name = "gdirect.ko",
	.pin = k_pin,
	.unpin = k_unpin,
	.map = k_map,
	.unmap = k_unmap,
	.read_events = k_read_events,
	.destroy = k_destroy,
};

int gdl_backend_kernel_open(const char *path, struct gdl_backend **out)
{
	struct gdirect_info info = { 0 };
	struct kbackend *k;
	int fd, err;

	/* O_NONBLOCK: event reads must never wait. */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, GDIRECT_IOC_INFO, &info) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (info.abi_version != GDIRECT_ABI_VERSION) {
		close(fd);
		return -EPROTO;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		close(fd);
		return -ENOMEM;
	}
	k->fd = fd;
	k->status_map = mmap(NULL, GDIRECT_STATUS_BYTES, PROT_READ, MAP_SHARED,
			     fd, GDIRECT_STATUS_OFFSET);
	if (k->status_map == MAP_FAILED) {
		err = -errno;
		close(fd);
		free(k);
		return err;
	}
	k->b.ops = &kernel_ops;
	k->b.status = k->status_map;
	k->b.nslots = GDIRECT_MAX_SLOTS;
	k->b.event_fd = fd;
	k->b.persistent = info.default_persistent != 0;
	*out = &k->b;
	return 0;
}
