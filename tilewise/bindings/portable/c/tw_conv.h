/*
 * tw_conv.h — int8 2-D convolution on one L1 tile, HWC (seed 004 ch. 3: im2col + MatMul + QntPack).
 *
 * CALL CONTRACT (for the code generator)
 *   Arithmetic: for output pixel p and tile-local output channel k,
 *       acc = (first C-tile ? bias[k] : psum[p][k]) + sum over taps and the tile's input channels
 *             of x * w[k][fy][fx][c],   x = the tap's input value or pad_value outside the tile
 *   and on the last C-tile out[p][k] = requant(acc, k), else psum[p][k] = acc, acc first wrapped
 *   to acc_bits bits (tw_acc_wrap, tw_common.h; 32 = no wrap).
 *   The compiler folds the input zero point into the bias (bias' = bias - zp_x * sum(w) over the
 *   WHOLE reduction, all C-tiles) and sets pad_value = zp_x, so padded taps cancel; weights carry
 *   no zero point (golden/layers.py, the "folded form"). The golden function is
 *   golden/conv.py conv2d_acc(x, w, bias', 0, 0, stride, pads, dilation, pad_value=zp_x) followed
 *   by golden/requant.py apply_requant.
 *
 *   Buffers (all dense, tile-local, in L1):
 *     in    [win.in_h][win.in_w][in_c]          int8
 *     w     [out_c][win.k_h][win.k_w][in_c]     int8 (OHWI; the tile's K and C slice)
 *     bias  [out_c]                             int32, may be NULL (zero)
 *     out   [win.out_h][win.out_w][out_c]       int8, written on the last C-tile
 *     psum  [win.out_h][win.out_w][out_c]       int32; NULL allowed when acc_flags == TW_ACC_WHOLE
 *     im2col  tw_conv2d_s8_scratch(win, in_c, n_cores) bytes: per core two buffers of
 *             k_h*k_w*in_c bytes (core i uses bytes [2*i*L, 2*(i+1)*L))
 *   rq arrays are indexed by tile-local output channel (offset them by the tile's first channel).
 *
 *   C tiling: call the tiles of one output tile in order with acc_flags TW_ACC_FIRST, 0, ...,
 *   TW_ACC_LAST (TW_ACC_WHOLE when C is not tiled), the same psum buffer, each with its input
 *   channel slice in `in` / `w`, the same bias (used by the first only) and requant (last only).
 *
 *   Core split: output rows of the tile, chunk = ceil(out_h / n_cores); a core's pixels are taken
 *   two at a time in row-major order (the two im2col buffers of the 4x2 MatMul), the odd one last.
 *   All cores call with the same args; barrier afterwards. Kernels do not touch the HAL.
 *
 *   tw_conv1x1_s8: pointwise layers (k_h = k_w = 1, any stride and pads, dilation ignored):
 *   the input pixel is the MatMul column, no im2col and no scratch (im2col may be NULL); an
 *   output pixel whose tap falls in the padding accumulates pad_value against every weight
 *   (tw_matmul_fill_s8), also without scratch.
 *   tw_conv2d_s8 handles every geometry, including 1x1.
 */
#ifndef TW_CONV_H
#define TW_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "tw_common.h"
#include "tw_requant.h"

typedef struct {
    tw_window_t win;
    const int8_t *in;
    int in_c;                  /* input channels of this tile */
    const int8_t *w;
    const int32_t *bias;
    int8_t *out;
    int out_c;                 /* output channels of this tile */
    int8_t pad_value;          /* the input zero point */
    int32_t *psum;
    int acc_flags;             /* TW_ACC_FIRST | TW_ACC_LAST, see above */
    tw_requant_t rq;
    int8_t *im2col;            /* scratch for all cores */
    int acc_bits;              /* accumulator width, 32 = int32; narrower wraps (tw_acc_wrap) */
} tw_conv_args_t;

/* Bytes of im2col scratch tw_conv2d_s8 needs for n_cores cores. */
size_t tw_conv2d_s8_scratch(const tw_window_t *win, int in_c, int n_cores);

void tw_conv2d_s8(const tw_conv_args_t *a, int core_id, int n_cores);
void tw_conv1x1_s8(const tw_conv_args_t *a, int core_id, int n_cores);

#endif /* TW_CONV_H */
