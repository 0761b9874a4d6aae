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
