/*
 * tw_pool.h — int8 average / max pooling on one L1 tile and global average pooling, HWC.
 *
 * CALL CONTRACT (for the code generator)
 *   tw_avgpool_s8 / tw_maxpool_s8 — TFLite reference semantics (reference/integer_ops/pooling.h):
 *     the window of output pixel (oy, ox) covers the taps of tw_common.h (dilation must be 1);
 *     taps outside the tile buffer are padding and are IGNORED (not read, not counted):
 *       avg: sum = sum of valid taps, count = number of valid taps,
 *            y = (sum > 0 ? (sum + count/2) / count : (sum - count/2) / count)   (C division)
 *            out = clamp(y, qmin, qmax)        — no zero points: TFLite requires s,zp in == out
 *       max: out = clamp(max of valid taps (-128 if none), qmin, qmax)
 *     Because padding is excluded, `count` over a tile equals the count over the whole layer as
 *     long as the tile carries its halo as data and only border tiles have pads (tw_common.h).
 *     Buffers: in [win.in_h][win.in_w][c], out [win.out_h][win.out_w][c].
 *     Core split: output rows, chunk = ceil(out_h / n_cores).
 *
 *   tw_global_avgpool_s8 — per channel, over all pixels of the layer (possibly in several tiles):
 *       acc = sum over the layer's pixels of (x - in_zp)                      (int32)
 *       y   = MBQM(acc, mult, shift)
 *       if divisor > 1:  y = (y > 0 ? (y + divisor/2) / divisor : (y - divisor/2) / divisor)
 *       out = clamp(y + out_zp, qmin, qmax)
 *     Two TFLite ops map onto it:
 *       MEAN over H,W (LiteRT reduce.cc -> QuantizedMeanOrSum, golden/pool.py `mean`): mult/shift
 *         are the s_in/s_out multiplier with 1/n folded in (golden/pool.py _mean_scale), divisor 1,
 *         qmin/qmax the type range.
 *       AVERAGE_POOL_2D whose window is the whole map (golden `avg_pool`): in_zp = out_zp = 0,
 *         mult = 1<<30, shift = 1 (MBQM is then the identity), divisor = H*W, qmin/qmax of the op.
 *     Pixel tiling: pass the same int32 acc[c] buffer with acc_flags TW_ACC_FIRST on the first tile
 *     and TW_ACC_LAST on the last (acc may be NULL for TW_ACC_WHOLE).
 *     Buffers: in [pixels][c] (any dense run of HWC pixels), out [c] (written on the last tile).
 *     Core split: channels, chunk = ceil(c / n_cores).
 *
 *   tw_global_avgpool_rq_s8 — global average pooling with a tw_requant_t (onnxruntime's
 *     QLinearGlobalAveragePool, golden/onnx_ops.py `global_average` + apply_requant):
 *       acc = sum over the layer's pixels of (x - in_zp)                      (int32)
 *       out = tw_requant(rq, acc, c)          (onnx mode: float32 acc·scale, round half to even,
 *                                              + zero point, clamp to [rq.qmin, rq.qmax])
 *     Pixel tiling and buffers as tw_global_avgpool_s8; rq arrays indexed by tile-local channel
 *     (or per_channel = 0). Core split: channels.
 *
 *   tw_avgpool_onnx_s8 — onnxruntime's QLinearAveragePool (qlinear_pool.cc; golden/onnx_ops.py
 *     `avg_pool`), in float32 step by step, the window as tw_avgpool_s8 (taps outside the tile
 *     buffer are padding):
 *       sum = 0; for each valid tap, rows outer, columns inner: sum = sum + x_scale·(x − x_zp)
 *       count = valid taps, or k_h·k_w when count_include_pad
 *       v = (sum / count) / y_scale + y_zp;  out = clamp(nearbyintf(v), qmin, qmax) − out_offset
 *     x_zp is in the stored domain (a uint8 input, stored as u − 128, passes zp − 128: x − x_zp
 *     is the same integer); y_zp, qmin and qmax are in the output's value domain (uint8: 0..255)
 *     and out_offset is 128 for a uint8 output (stored as u − 128), else 0. Every product and
 *     sum is rounded to float32 separately: build without floating-point contraction (ISO C
 *     mode, as the generated Makefile's -std=c99, or -ffp-contract=off). Core split: rows.
 *
 *   Same args on every core; barrier after.
 */
#ifndef TW_POOL_H
#define TW_POOL_H

#include <stdint.h>

#include "tw_common.h"
#include "tw_requant.h"

typedef struct {
    tw_window_t win;           /* d_h = d_w = 1 */
    const int8_t *in;
    int c;
    int8_t *out;
    int32_t qmin, qmax;
} tw_pool_args_t;

typedef struct {
    const int8_t *in;
    int pixels;                /* pixels in this tile */
    int c;
    int32_t *acc;              /* [c] running sums, or NULL when acc_flags == TW_ACC_WHOLE */
    int acc_flags;
    int divisor;               /* rounding division after the multiplier; 1 = none */
    int32_t in_zp;
    int32_t mult, shift;
    int32_t out_zp;
    int32_t qmin, qmax;
    int8_t *out;
} tw_gap_args_t;

typedef struct {
    const int8_t *in;
    int pixels;
    int c;
    int32_t *acc;              /* [c] running sums, or NULL when acc_flags == TW_ACC_WHOLE */
    int acc_flags;
    int32_t in_zp;
    tw_requant_t rq;
    int8_t *out;
} tw_gap_rq_args_t;

typedef struct {
    float x_scale, y_scale;
    int32_t x_zp;              /* stored domain */
    int32_t y_zp;              /* value domain */
    int count_include_pad;
    int32_t qmin, qmax;        /* value domain, within the output type's range */
    int32_t out_offset;        /* 128 for a uint8 output, else 0 */
} tw_avgpool_onnx_params_t;

void tw_avgpool_s8(const tw_pool_args_t *a, int core_id, int n_cores);
void tw_avgpool_onnx_s8(const tw_pool_args_t *a, const tw_avgpool_onnx_params_t *p, int core_id,
                        int n_cores);
void tw_maxpool_s8(const tw_pool_args_t *a, int core_id, int n_cores);
void tw_global_avgpool_s8(const tw_gap_args_t *a, int core_id, int n_cores);
void tw_global_avgpool_rq_s8(const tw_gap_rq_args_t *a, int core_id, int n_cores);

/* The window of output pixel (oy, ox) clipped to the tile buffer: rows [*y0, *y1), cols
 * [*x0, *x1) in input coordinates (the taps the pools count; also the int16 pools', tw_s16.h). */
void tw_clipped_window(const tw_window_t *g, int oy, int ox, int *y0, int *y1, int *x0, int *x1);

#endif /* TW_POOL_H */
