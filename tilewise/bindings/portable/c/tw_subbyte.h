/*
 * tw_subbyte.h — packed 4- and 2-bit tensors: element access and the portable sub-byte kernels
 * (conv, depthwise, dense) run whole on the L2 tensors by a host core.
 *
 * PACKED LAYOUT (README "Sub-byte tensors (design)", tilewise/ir/packing.py)
 *   A b-bit tensor (b in {8, 4, 2}) is stored packed little-endian within a byte: element i of
 *   the flattened tensor (its stored layout: HWC activations, the weight order below) is in byte
 *   i*b/8 at bit offset (i mod (8/b))*b, element 0 in the low bits; rows are not padded.
 *   Activations of 4 and 2 bits are unsigned (u4 0..15, u2 0..3: the zero point carries the
 *   offset), 8-bit activations are the int8 bytes the int8 kernels read (uint8 stored biased,
 *   u - 128); weights are signed two's complement at every width (i8, i4, i2). Seed 004 ch. 3
 *   (PULP-NN mixed) uses the same convention: unsigned activations, signed weights.
 *
 * CALL CONTRACT
 *   tw_sb_maxpool: see its declaration.
 *   tw_sb_conv computes, for every output pixel (oy, ox) and output channel k,
 *       acc = bias[k] + sum over taps (fy, fx) and input channels c of x * w,
 *       x = input[iy][ix][c] (or [iy][ix][k] for depthwise) or pad_value outside the input,
 *   wraps acc to acc_bits bits (tw_acc_wrap; 32 = none) and writes requant(acc, k) (tw_requant.h,
 *   clamped to the output's range by rq) as element (oy*out_w + ox)*out_c + k of the output.
 *   Weights: conv [out_c][k_h][k_w][in_c]; depthwise [k_h][k_w][out_c] (output channel k reads
 *   input channel k); a dense layer is a conv with in_h = in_w = k_h = k_w = 1.
 *   The golden function is golden/conv.py conv2d_acc + golden/requant.py apply_requant, as for
 *   the int8 kernels (tw_conv.h): the arithmetic is the int8 one with narrower clamps.
 *   Elements are read and written one at a time (clear C: a shift and a mask per element); an
 *   output byte is read, modified and written, so the output buffer needs no clearing. One core.
 */
#ifndef TW_SUBBYTE_H
#define TW_SUBBYTE_H

#include <stdint.h>

#include "tw_common.h"
#include "tw_requant.h"

/* Activation element i of a b-bit tensor: int8 at 8 bits, unsigned below. */
static inline int32_t tw_sb_act(const int8_t *p, int32_t i, int bits)
{
    const uint8_t *u = (const uint8_t *)p;
    if (bits == 8)
        return (int32_t)p[i];
    if (bits == 4)
        return (int32_t)((u[i >> 1] >> ((i & 1) * 4)) & 0xF);
    return (int32_t)((u[i >> 2] >> ((i & 3) * 2)) & 0x3);
}

/* Weight element i of a b-bit tensor: signed (two's complement) at every width. */
static inline int32_t tw_sb_weight(const int8_t *p, int32_t i, int bits)
{
    int32_t v;
    if (bits == 8)
        return (int32_t)p[i];
    v = tw_sb_act(p, i, bits);
    return v >= (1 << (bits - 1)) ? v - (1 << bits) : v;
}

/* Store v (already in the element's range) as element i of a b-bit tensor. */
static inline void tw_sb_store(int8_t *p, int32_t i, int bits, int32_t v)
{
    uint8_t *u = (uint8_t *)p;
    int per, sh;
    uint8_t mask;
    if (bits == 8) {
        p[i] = (int8_t)v;
        return;
    }
    per = 8 / bits;
    sh = (i % per) * bits;
    mask = (uint8_t)(((1u << bits) - 1u) << sh);
    u[i / per] = (uint8_t)((u[i / per] & (uint8_t)~mask) | (((uint32_t)v << sh) & mask));
}

typedef struct {
    int in_h, in_w, in_c;
    int out_h, out_w, out_c;
    int k_h, k_w, s_h, s_w, pad_t, pad_l;
    int x_bits, w_bits, y_bits;
    int depthwise;             /* weights [k_h][k_w][out_c], channel k reads input channel k */
    int32_t pad_value;         /* the input zero point as stored */
    int acc_bits;              /* accumulator width, 32 = int32; narrower wraps (tw_acc_wrap) */
} tw_sb_conv_t;

void tw_sb_conv(const tw_sb_conv_t *g, const int8_t *in, const int8_t *w, const int32_t *bias,
                const tw_requant_t *rq, int8_t *out);

/* Max pooling of a packed HWC tensor (in_c = out_c channels; the geometry's weights fields
 * unused): out = clamp(max over the window's valid taps, qmin, qmax) — golden/pool.py max_pool;
 * a window wholly in the padding gives qmin. */
void tw_sb_maxpool(const tw_sb_conv_t *g, const int8_t *in, int32_t qmin, int32_t qmax,
                   int8_t *out);

#endif /* TW_SUBBYTE_H */
