/*
 * tw_depthwise.h — int8 depthwise convolution on one L1 tile, HWC, with depth multiplier.
 *
 * CALL CONTRACT (for the code generator)
 *   out_c = in_c * depth_mult; output channel k reads input channel k / depth_mult (TFLite /
 *   golden/conv.py groups = C). For output pixel p and tile-local output channel k:
 *       acc = bias[k] + sum over taps of x * w[fy][fx][k],  x = tap value or pad_value outside,
 *       out[p][k] = requant(tw_acc_wrap(acc, acc_bits), k)  (tw_common.h; acc_bits 32 = no wrap).
 *   Zero point folded as in tw_conv.h: bias' = bias - zp_x * sum(w[.][.][k]), pad_value = zp_x,
 *   weights without zero point. Golden: conv2d_acc(x, w[K,FY,FX,1], bias', 0, 0, stride, pads,
 *   dilation, groups=C, pad_value=zp_x) + apply_requant.
 *
 *   Buffers (dense, tile-local):
 *     in    [win.in_h][win.in_w][in_c]
 *     w     [win.k_h][win.k_w][out_c]     (channel-last, TFLite's layout; the tile's channel slice)
 *     bias  [out_c] int32 or NULL
 *     out   [win.out_h][win.out_w][out_c]
 *   Channel tiling needs no partial sums: a channel tile of the output needs the matching input
 *   channels only (input channels [k0/m, k1/m) for output channels [k0, k1), k0 and k1 multiples
 *   of depth_mult).
 *
 *   Core split: output channels, chunk = ceil(out_c / n_cores) (seed 001 §4.3: "multiple cores
 *   operate simultaneously on different channels"). Same args on every core; barrier after.
 */
#ifndef TW_DEPTHWISE_H
#define TW_DEPTHWISE_H

#include <stdint.h>

#include "tw_common.h"
#include "tw_requant.h"

typedef struct {
    tw_window_t win;
    const int8_t *in;
    int in_c;
    int depth_mult;            /* >= 1 */
    const int8_t *w;
    const int32_t *bias;
    int8_t *out;               /* out_c = in_c * depth_mult channels */
    int8_t pad_value;
    tw_requant_t rq;
    int acc_bits;              /* accumulator width, 32 = int32; narrower wraps (tw_acc_wrap) */
} tw_dw_args_t;

void tw_depthwise_s8(const tw_dw_args_t *a, int core_id, int n_cores);

#endif /* TW_DEPTHWISE_H */
