/*
 * tw_tile.c — HWC box and block DMA of generated layer code (contract in tw_tile.h).
 */
#include "tw_tile.h"

#include <stddef.h>

tw_dma_id_t tw_dma_hwc(void *l1, const void *l2_tensor, int H, int W, int C, int y0, int ny,
                       int x0, int nx, int c0, int nc, tw_dma_dir_t dir)
{
    uint8_t *l2 = (uint8_t *)(uintptr_t)l2_tensor + ((size_t)y0 * W + x0) * C + c0;
    (void)H;
    if (ny <= 0 || nx <= 0 || nc <= 0)
        return 0;
    if (nc == C && nx == W)                       /* whole rows: one contiguous chunk */
        return tw_dma_copy_1d(l1, l2, (uint32_t)ny * nx * nc, dir);
    if (nc == C)                                  /* whole pixels: one chunk per row */
        return tw_dma_copy_2d(l1, l2, (uint32_t)nx * nc, (uint32_t)ny, (uint32_t)nx * nc,
                              (uint32_t)W * C, dir);
    return tw_dma_copy_3d(l1, l2, (uint32_t)nc, (uint32_t)nx, (uint32_t)ny, (uint32_t)nc,
                          (uint32_t)nx * nc, (uint32_t)C, (uint32_t)W * C, dir);
}

tw_dma_id_t tw_dma_block(void *l1, const void *l2, uint32_t offset, uint32_t bytes)
{
    if (bytes == 0)
        return 0;
    return tw_dma_copy_1d(l1, (uint8_t *)(uintptr_t)l2 + offset, bytes, TW_DMA_L2_TO_L1);
}

typedef struct {
    uint8_t *dst;
    const uint8_t *src;
    uint32_t bytes;
} tw_flip_job_t;

/* this core's share of a flip job: word-aligned runs of words, the leftover bytes on the last */
static void flip_share(void *arg)
{
    const tw_flip_job_t *j = (const tw_flip_job_t *)arg;
    const uint32_t core = (uint32_t)tw_core_id(), cores = (uint32_t)tw_core_count();
    const int words = (((uintptr_t)j->dst | (uintptr_t)j->src) & 3u) == 0;
    const uint32_t n = words ? j->bytes / 4 : 0, per = (n + cores - 1) / cores;
    const uint32_t w0 = core * per < n ? core * per : n, w1 = w0 + per < n ? w0 + per : n;
    uint32_t *d = (uint32_t *)(void *)j->dst;
    const uint32_t *s = (const uint32_t *)(const void *)j->src;
    uint32_t i;
    for (i = w0; i < w1; i++) d[i] = s[i] ^ 0x80808080u;
    if (core == cores - 1)
        for (i = 4 * n; i < j->bytes; i++) j->dst[i] = j->src[i] ^ 0x80u;
}

void tw_copy_flip_sign_bits(void *dst, const void *src, uint32_t bytes, int cores)
{
    tw_flip_job_t j;
    j.dst = (uint8_t *)dst;
    j.src = (const uint8_t *)src;
    j.bytes = bytes;
    if (cores > 1 && bytes >= 1024u * (uint32_t)cores)
        tw_fork(cores, flip_share, &j);
    else
        flip_share(&j);
}
