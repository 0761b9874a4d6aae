/*
 * tw_tile.h — portable helpers of generated layer code, built on tw_hal.h (no target code here).
 *
 * Tile geometry along one spatial dimension (tilewise/schedule/space.py `positions`): output
 * positions [o0, o0 + ot) of a layer with stride s, kernel f and leading padding pad need the
 * input positions lo = o0*s - pad .. hi = (o0 + ot - 1)*s - pad + f - 1 (inclusive). The part
 * inside [0, extent) is moved by DMA; what lies outside is the tile's own padding, synthesized by
 * the kernel (tw_common.h): pad_lo = start - lo, pad_hi = max(hi - (extent - 1), 0). A tile lying
 * entirely in the padding has size 0 and moves nothing.
 *
 * HWC box DMA: one transfer (one DMA setup) per box, as space.py counts them: the box
 * [y0, y0+ny) x [x0, x0+nx) x [c0, c0+nc) of an HWC tensor [H][W][C] of int8 in L2 against a
 * dense L1 buffer [ny][nx][nc]: 1D when it is contiguous in L2 (full rows of full pixels), 2D
 * when pixels are whole (one chunk per row), 3D otherwise (one chunk per pixel). An empty box
 * issues nothing and returns 0, which tw_dma_wait_id skips.
 */
#ifndef TW_TILE_H
#define TW_TILE_H

#include <stdint.h>

#include "tw_hal.h"

typedef struct {
    int start;     /* first input position inside the tensor */
    int size;      /* input positions moved (0: the tile lies in the padding) */
    int pad_lo;    /* padding the kernel synthesizes before / after them */
    int pad_hi;
} tw_span_t;

static inline tw_span_t tw_input_span(int o0, int ot, int stride, int pad, int kernel, int extent)
{
    tw_span_t s;
    int lo = o0 * stride - pad;
    int hi = (o0 + ot - 1) * stride - pad + kernel - 1;
    int a = lo > 0 ? lo : 0;
    int b = hi < extent - 1 ? hi : extent - 1;
    s.start = a;
    s.size = b - a + 1 > 0 ? b - a + 1 : 0;
    s.pad_lo = a - lo;
    s.pad_hi = hi - (extent - 1) > 0 ? hi - (extent - 1) : 0;
    return s;
}

/* Move the box (see above) between an HWC tensor in L2 and a dense L1 buffer: one transfer. */
tw_dma_id_t tw_dma_hwc(void *l1, const void *l2_tensor, int H, int W, int C, int y0, int ny,
                       int x0, int nx, int c0, int nc, tw_dma_dir_t dir);

/* A contiguous block of `bytes` at `l2 + offset` into L1 (weights and constants). */
tw_dma_id_t tw_dma_block(void *l1, const void *l2, uint32_t offset, uint32_t bytes);

/* Wait for *id unless it is 0 (nothing was issued), then clear it. */
static inline void tw_dma_wait_id(tw_dma_id_t *id)
{
    if (*id != 0) {
        tw_dma_wait(*id);
        *id = 0;
    }
}

/* uint8 <-> biased int8 storage (u - 128) of a uint8 tensor (tilewise/bindings/portable/common.py,
 * the uint8 storage convention): every sign bit flipped. The generated network copies a uint8
 * input in with tw_copy_flip_sign_bits on its TW_NETWORK_CORES cores (a fork; call it outside
 * one) and flips a uint8 output in place. A word at a time where both pointers are 4-byte
 * aligned: on a PULP cluster every L2 access costs ~15 cycles, and a byte loop on one core over
 * a 51 kB EEG input took ~2 M cycles, 8x the network's layers. */
void tw_copy_flip_sign_bits(void *dst, const void *src, uint32_t bytes, int cores);

static inline void tw_flip_sign_bits(void *p, uint32_t bytes)
{
    tw_copy_flip_sign_bits(p, p, bytes, 1);
}

#endif /* TW_TILE_H */
