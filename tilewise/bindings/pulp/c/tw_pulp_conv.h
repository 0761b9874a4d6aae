/*
 * tw_pulp_conv.h — int8 convolution of one L1 tile on the RI5CY cluster (seed 004 ch. 3:
 * im2col + 4x2 MatMul + QntPack), and the dense layer, one entry point per requantization mode.
 *
 * CALL CONTRACT — the portable kernels' (tw_conv.h, tw_linear.h), with these differences:
 *   - the requantization is tw_pulp_rq_t words (tw_pulp_requant.h: the layer's per-channel block,
 *     bindings/pulp/constants.py), not a tw_requant_t;
 *   - dilation 1 (the generated code's window, templates/window.j2);
 *   - conv2d: im2col scratch tw_pulp_conv2d_s8_scratch() bytes: per core two buffers of
 *     round4(k_h·k_w·in_c) bytes (core i at [2i·L4, 2(i+1)·L4)); none for the 1x1 kernel;
 *     built for Arm (TW_PULP_ARM) per core 5·L4 bytes, 4·L4 for the 1x1 kernel too: the two
 *     columns unpacked to int16 pairs and a receptive field (tw_pulp_matmul_arm.h);
 *   - tflite multipliers other than -2^31; TW_PULP_RQ_SHIFT32 only where k·acc + lambda fits
 *     int32 for every accumulator (tw_pulp_requant.h; the bindings check both).
 *   Arithmetic, buffers, C-tiling partial sums and the rq arrays are as tw_conv.h / tw_linear.h
 *   say; the golden functions are golden/conv.py conv2d_acc / dense_acc + apply_requant.
 *
 * Kernels (suffix = requant mode: _tflite, _tflite_single, _shift, _shift32, _tflite_right,
 * _onnx, _onnx24):
 *   tw_pulp_conv2d_s8_*  any k_h·k_w: per output pixel, im2col copies each kernel row's taps as
 *       one contiguous run of k_w·in_c bytes of the HWC tile (no copy per tap), pads filled;
 *       two pixels at a time through the 4x2 MatMul (tw_pulp_matmul.h);
 *   tw_pulp_conv1x1_s8_*  k_h = k_w = 1: the HWC input pixel is the MatMul column (no im2col,
 *       no scratch); a pixel in the padding accumulates pad_value·sum(w) (any stride and pads);
 *   tw_pulp_fully_connected_s8_*  vector x matrix (4x1), rows two at a time (4x2) when there
 *       are several.
 *
 * Core split (tw_pulp_common.h): conv — pixel pairs of the tile in row-major order (output rows
 * first, then pixels within a row); when there are fewer pairs than cores, each pair's output
 * channels are also cut into 4-channel-block groups (items = pairs x groups). Dense — output
 * neurons, balanced (every core busy once out_c >= cores). Same args on every core; barrier
 * after.
 */
#ifndef TW_PULP_CONV_H
#define TW_PULP_CONV_H

#include <stddef.h>

#include "tw_conv.h"
#include "tw_linear.h"
#include "tw_pulp_requant.h"

/* A conv tile: the portable arguments (a.rq is not read) and the requantization words. */
typedef struct {
    tw_conv_args_t a;
    tw_pulp_rq_t rq;
} tw_pulp_conv_args_t;

/* A dense tile: the portable arguments (a.rq is not read) and the requantization words. */
typedef struct {
    tw_fc_args_t a;
    tw_pulp_rq_t rq;
} tw_pulp_fc_args_t;

/* Bytes of im2col scratch tw_pulp_conv2d_s8_* use for n_cores cores. */
size_t tw_pulp_conv2d_s8_scratch(const tw_window_t *win, int in_c, int n_cores);

#define TW_PULP_CONV_DECL(mode, rq_mode)                                                    \
    void tw_pulp_conv2d_s8_##mode(const tw_pulp_conv_args_t *a, int core_id, int n_cores);   \
    void tw_pulp_conv1x1_s8_##mode(const tw_pulp_conv_args_t *a, int core_id, int n_cores);  \
    void tw_pulp_fully_connected_s8_##mode(const tw_pulp_fc_args_t *a, int core_id,          \
                                           int n_cores);

TW_PULP_VARIANTS(TW_PULP_CONV_DECL)

#if TW_PULP_ARM || !TW_PULP_ASM
/* The dense layer with its weights stored widened to int16 pairs (tw_pulp_linear.c): built for
 * Arm, and in plain C on a host; not for the cluster. */
#define TW_PULP_FCW_DECL(mode, rq_mode)                                                     \
    void tw_pulp_fully_connected_s8w16_##mode(const tw_pulp_fc_args_t *a, int core_id,       \
                                              int n_cores);

TW_PULP_VARIANTS(TW_PULP_FCW_DECL)

/* The conv and 1x1 conv with their weights stored widened to int16 (tw_pulp_conv.c): k_w·in_c
 * a multiple of 4, the whole reduction in the tile, scratch 8·len + 4 bytes (len = k_h·k_w·in_c)
 * and, for a kernel larger than 1x1, len more. */
#define TW_PULP_CONVW_DECL(mode, rq_mode)                                                   \
    void tw_pulp_conv2d_s8w16_##mode(const tw_pulp_conv_args_t *a, int core_id, int n_cores); \
    void tw_pulp_conv1x1_s8w16_##mode(const tw_pulp_conv_args_t *a, int core_id, int n_cores);

TW_PULP_VARIANTS(TW_PULP_CONVW_DECL)
#endif

#endif /* TW_PULP_CONV_H */
