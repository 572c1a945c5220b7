// SPDX-License-Identifier: GPL-2.0
/*
 * The edu device's DMA engine
 *
 * edu moves data between its 4 KiB internal buffer (device address
 * 0x40000) and a bus address: registers 0x80 source, 0x88 destination,
 * 0x90 count, 0x98 command (bit 0 start and busy, bit 1 direction: buffer
 * to bus address).  Host data goes through a coherent bounce buffer: user
 * to bounce, bounce to edu, edu to GPU BAR (the peer-to-peer write), and
 * the reverse for reads (the GPU BAR read is the peer-to-peer one).  The
 * user copies are the caller's, outside its DMA bracket.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/jiffies.h>

#include "gdedu_internal.h"

#define EDU_REG_ID		0x00
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_COUNT	0x90
#define EDU_REG_DMA_CMD		0x98
#define EDU_DMA_START		0x1
#define EDU_DMA_TO_BUS		0x2
#define EDU_ID_MAGIC		0xed

/* edu completes a transfer from a 100 ms timer; allow for a slow host. */
#define EDU_DMA_TIMEOUT_MS	5000

static int edu_dma(struct edu_dev *edu, u64 src, u64 dst, u32 len, bool to_bus)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(EDU_DMA_TIMEOUT_MS);

	lockdep_assert_held(&edu->dma_lock);
	writeq(src, edu->mmio + EDU_REG_DMA_SRC);
	writeq(dst, edu->mmio + EDU_REG_DMA_DST);
	writeq(len, edu->mmio + EDU_REG_DMA_COUNT);
	writeq(EDU_DMA_START | (to_bus ? EDU_DMA_TO_BUS : 0),
	       edu->mmio + EDU_REG_DMA_CMD);
	while (readq(edu->mmio + EDU_REG_DMA_CMD) & EDU_DMA_START) {
		if (time_after(jiffies, deadline)) {
			dev_err(&edu->pdev->dev, "DMA of %u bytes timed out\n",
				len);
			return -ETIMEDOUT;
		}
		usleep_range(500, 2000);
	}
	return 0;
}

/*
 * Kernel buffers only: the caller holds a DMA bracket, and a revocation
 * waits for it under the NVIDIA driver's lock, so no user page fault may
 * happen in here (it could wait on user space, or on that very lock).
 */
int edu_dma_to_gpu(struct edu_dev *edu, u64 gpu_dma, const void *src, u32 len)
{
	int ret;

	if (len > EDU_CHUNK)
		return -EINVAL;
	mutex_lock(&edu->dma_lock);
	memcpy(edu->bounce, src, len);
	ret = edu_dma(edu, edu->bounce_dma, EDU_BUF_ADDR, len, false);
	if (!ret)
		ret = edu_dma(edu, EDU_BUF_ADDR, gpu_dma, len, true);
	mutex_unlock(&edu->dma_lock);
	return ret;
}

int edu_dma_from_gpu(struct edu_dev *edu, u64 gpu_dma, void *dst, u32 len)
{
	int ret;

	if (len > EDU_CHUNK)
		return -EINVAL;
	mutex_lock(&edu->dma_lock);
	ret = edu_dma(edu, gpu_dma, EDU_BUF_ADDR, len, false);
	if (!ret)
		ret = edu_dma(edu, EDU_BUF_ADDR, edu->bounce_dma, len, true);
	if (!ret)
		memcpy(dst, edu->bounce, len);
	mutex_unlock(&edu->dma_lock);
	return ret;
}

int edu_engine_init(struct edu_dev *edu)
{
	u32 id = readl(edu->mmio + EDU_REG_ID);

	if ((id & 0xff) != EDU_ID_MAGIC) {
		dev_err(&edu->pdev->dev, "not an edu device (id %#x)\n", id);
		return -ENODEV;
	}
	mutex_init(&edu->dma_lock);
	edu->bounce = dma_alloc_coherent(&edu->pdev->dev, EDU_CHUNK,
					 &edu->bounce_dma, GFP_KERNEL);
	return edu->bounce ? 0 : -ENOMEM;
}

void edu_engine_exit(struct edu_dev *edu)
{
	dma_free_coherent(&edu->pdev->dev, EDU_CHUNK, edu->bounce,
			  edu->bounce_dma);
}
