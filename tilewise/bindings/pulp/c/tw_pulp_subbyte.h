/*
 * tw_pulp_subbyte.h — conv2d of one L1 tile with sub-byte operands on the RI5CY cluster
 * (XpulpV2): packed 8/4/2-bit activations, packed signed 8/4/2-bit weights, int32 bias, output
 * requantized to 8/4/2 bits and packed. The PULP-NN mixed-precision structure of seed 004 §3.3.1
 * ("Sub-byte and Mixed-Precision Support"): the ifmap precision picks the im2col, which unpacks
 * the receptive field into 8-bit lanes; the weight precision picks the MatMul, which unpacks the
 * weights word by word in its inner loop and feeds pv.sdotsp.b (sdotp4); the ofmap precision
 * picks the QntPack, which requantizes (tw_pulp_requant.h) and packs. Accumulators are int32, as
 * for 8-bit operands.
 *
 * STORAGE (the sub-byte contract of DESIGN.md): a b-bit tensor (b in {8, 4, 2}) is packed
 * little-endian within a byte, element i at byte floor(i·b/8), bits (i mod 8/b)·b up; 4/2-bit
 * activations u4/u2 (0..2^b - 1, the zero point carries the offset), 8-bit ones int8 as the
 * project stores every 8-bit activation (a uint8 tensor biased by -128): the u4/u2 lanes are
 * below 128, so the signed sdotp is exact for both; weights i8/i4/i2 two's complement. The
 * output's range is the requantization's clamp: [0, 2^b - 1] for 4/2 bits, int8 for 8.
 *   x    the HWC input tile, x_bits per element;
 *   w    out_c rows of K = k_h·k_w·in_c weights, row k at byte k·K·w_bits/8, the row's elements in
 *        the binding's order below (`weight_bytes` of bindings/pulp/subbyte.py);
 *   out  the HWC output tile, y_bits per element.
 * Legality (the binding checks it, bindings/pulp/subbyte.py `refusal`): in_c·x_bits and K·w_bits
 * multiples of 32 (a pixel and a weight row are whole words, so that no word straddles a pixel),
 * out_c·y_bits a multiple of 8 (an output pixel starts on a byte), dilation 1, the whole reduction
 * in the tile (no partial sums), im2col and the tensors word-aligned.
 *
 * LANES: unpacking a word of n = 32/b values gives 8/b words; word j, lane l holds value
 * l·(8/b) + j (bits [j·b, (j+1)·b) of byte l): one `and` / shift per word for unsigned values, one
 * shift and one pv.sra.sci.b (lane-wise arithmetic shift) for signed ones — 3 instructions for 8
 * int4 weights, 7 for 16 int2. The im2col applies it to each input word (per pixel: in_c·x_bits
 * is whole words), the MatMul to each weight word; so that lane t of an unpacked column meets the
 * weight of the same input element, the binding stores a weight row permuted: stored[U_w(t)] =
 * w[U_x(t)], U_b(t) the element at unpacked lane t of a b-bit run. For x_bits == w_bits this is
 * the plain order.
 *
 * Kernels: tw_pulp_conv2d_sb_w8_<v>, _w4_<v>, _w2_<v> (the weight bits: the MatMul's unpack),
 * v the requantization variant (tw_pulp_requant.h); x_bits and y_bits are run-time fields.
 * 4x2 MatMul (4 output channels x 2 pixels) per step of one packed weight word per channel:
 * 4 p.lw of weights, 2·8/wb p.lw of the two columns, the unpacks, 8·8/wb pv.sdotsp.b; the
 * leftover channels (out_c mod 4) 1x2. Core split as tw_pulp_conv2d_s8 (tw_pulp_common.h):
 * pixel pairs in row-major order, cut into 4-channel-block groups when pairs < cores; the outputs
 * of a core never share a byte with another core's.
 * Scratch: tw_pulp_conv2d_sb_scratch() bytes, per core two unpacked receptive fields of K bytes
 * (one when the tile has a single output pixel: a dense layer).
 */
#ifndef TW_PULP_SUBBYTE_H
#define TW_PULP_SUBBYTE_H

#include <stddef.h>
#include <stdint.h>

#include "tw_common.h"
#include "tw_pulp_requant.h"

typedef struct {
    tw_window_t win;           /* dilation 1 */
    const uint8_t *in;         /* packed HWC tile, x_bits per element */
    int in_c, x_bits;
    const uint8_t *w;          /* packed weight rows (see above) */
    const int32_t *bias;       /* out_c, or NULL */
    uint8_t *out;              /* packed HWC output, y_bits per element */
    int out_c, y_bits;
    int32_t pad_value;         /* the input zero point as stored (u4/u2, or int8) */
    uint8_t *im2col;           /* tw_pulp_conv2d_sb_scratch() bytes, word-aligned */
    tw_pulp_rq_t rq;           /* out_c channels' words; clamp inside the output's range */
} tw_pulp_conv_sb_args_t;

/* Bytes of im2col scratch tw_pulp_conv2d_sb_* use for n_cores cores. */
size_t tw_pulp_conv2d_sb_scratch(const tw_window_t *win, int in_c, int n_cores);

#define TW_PULP_CONV_SB_DECL(mode, rq_mode)                                                   \
    void tw_pulp_conv2d_sb_w8_##mode(const tw_pulp_conv_sb_args_t *a, int core_id,             \
                                     int n_cores);                                            \
    void tw_pulp_conv2d_sb_w4_##mode(const tw_pulp_conv_sb_args_t *a, int core_id,             \
                                     int n_cores);                                            \
    void tw_pulp_conv2d_sb_w2_##mode(const tw_pulp_conv_sb_args_t *a, int core_id,             \
                                     int n_cores);

TW_PULP_VARIANTS(TW_PULP_CONV_SB_DECL)

#endif /* TW_PULP_SUBBYTE_H */
