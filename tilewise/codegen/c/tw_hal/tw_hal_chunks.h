/*
 * tw_hal_chunks.h — how a HAL counts the contiguous L2-side runs of a 3D transfer, the figure the
 * DMA cost models charge per chunk (seed 003: a fixed overhead per contiguous block). Shared by
 * every HAL implementation so that their counters agree with the schedule's prediction.
 */
#ifndef TW_HAL_CHUNKS_H
#define TW_HAL_CHUNKS_H

#include <stdint.h>

/* Rows merge when the L2 row stride equals the row length; planes merge when additionally the
 * plane stride equals the plane length. */
static inline uint64_t tw_l2_chunks(uint32_t row_bytes, uint32_t rows, uint32_t planes,
                                    uint32_t l2_row_stride, uint32_t l2_plane_stride)
{
    uint64_t per_plane;
    if (row_bytes == 0 || rows == 0 || planes == 0) return 0;
    per_plane = (rows == 1 || l2_row_stride == row_bytes) ? 1 : rows;
    if (per_plane == 1 && (planes == 1 || l2_plane_stride == (uint64_t)rows * row_bytes))
        return 1;
    return per_plane * planes;
}

#endif /* TW_HAL_CHUNKS_H */
