/*
 * tw_pulp_depthwise.h — int8 depthwise convolution of one L1 tile on the RI5CY cluster, SIMD
 * along each kernel row, one entry point per requantization mode.
 *
 * Layout: the input tile stays HWC (what the tile DMA moves, as for every other kernel); the
 * weights are channel-major, [out_c][k_h][k_w] (each channel's taps contiguous: the binding's
 * constants layout "k.fy.fx", bindings/pulp/constants.py). A core takes one channel at a time:
 * it gathers that channel's input rows (stride in_c in HWC) into a ring of k_h planar rows in its
 * scratch, padded on both sides with the pad value, and its k_h weight rows into words padded with
 * zero lanes, so that a kernel row of up to 4 taps is one 32-bit load and one pv.sdotsp.b: a
 * 3x3 output costs 3 loads + 3 sdotp + the requantization, and each input byte is gathered once
 * per channel (stride 1). Kernel rows longer than 4 taps take ceil(k_w / 4) words.
 * (seed 004 §3.3.1 / §3.3.2 for the SIMD and the channel split; PULP-NN's depthwise kernels
 * likewise rebuild a per-channel buffer, in CHW order, before their sdotp loop.)
 *
 * Built for Arm (TW_PULP_ARM, tw_pulp_depthwise.c): four channels of a pixel at a time from a ring
 * of k_h padded rows of the group's input unpacked to int16 pairs, two smlabb / smlatt pairs per
 * tap (CMSIS-NN's arm_depthwise_conv_3x3_s8 likewise takes four channels per load); kernels of up
 * to 25 taps, the channels after the groups of four and larger kernels on the planar path.
 * Scratch then: tw_pulp_depthwise_s8_scratch() = the larger of the planar ring and, per core,
 * k_h · 8 · ((out_w - 1)·s_w + k_w) bytes (bindings/pulp depthwise_bytes_arm).
 *
 * CALL CONTRACT — tw_depthwise.h's, with these differences:
 *   - depth_mult 1 and dilation 1 (what the generated code passes);
 *   - the requantization is tw_pulp_rq_t words (tw_pulp_requant.h);
 *   - w [out_c][win.k_h][win.k_w] (see above);
 *   - scratch: tw_pulp_depthwise_s8_scratch() bytes, per core k_h·(RL + W4) with
 *     W4 = round4(k_w) and RL = round4((out_w - 1)·s_w + W4) (core i at i times that);
 *   - the requant restrictions of tw_pulp_conv.h.
 *   Golden: conv2d_acc(x, w[K,FY,FX,1], bias', 0, 0, stride, pads, groups=C, pad_value=zp_x) +
 *   apply_requant.
 *
 * Core split: (channel, output row) items, channel-major, balanced (tw_pulp_common.h): every core
 * is busy as soon as channels x rows >= cores, and a core keeps its ring across the rows of a
 * channel. Same args on every core; barrier after.
 */
#ifndef TW_PULP_DEPTHWISE_H
#define TW_PULP_DEPTHWISE_H

#include <stddef.h>
#include <stdint.h>

#include "tw_depthwise.h"
#include "tw_pulp_requant.h"

/* A depthwise tile: the portable arguments (a.rq is not read; a.w in the layout above), the
 * requantization words and the scratch. */
typedef struct {
    tw_dw_args_t a;
    tw_pulp_rq_t rq;
    int8_t *scratch;           /* tw_pulp_depthwise_s8_scratch() bytes */
} tw_pulp_dw_args_t;

size_t tw_pulp_depthwise_s8_scratch(const tw_window_t *win, int n_cores);

#define TW_PULP_DW_DECL(mode, rq_mode)                                                      \
    void tw_pulp_depthwise_s8_##mode(const tw_pulp_dw_args_t *a, int core_id, int n_cores);

TW_PULP_VARIANTS(TW_PULP_DW_DECL)

#endif /* TW_PULP_DEPTHWISE_H */
