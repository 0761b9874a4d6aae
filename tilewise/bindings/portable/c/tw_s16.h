/*
 * tw_s16.h — 16x8 kernels on one L1 tile: int16 activations, int8 weights, int64 accumulation,
 * TFLite's int64 MultiplyByQuantizedMultiplier (the "wide" requant of golden/requant.py, TFLite
 * reference_integer_ops conv.h / fully_connected.h int16 overloads). HWC, same tile API as the
 * int8 kernels (tw_conv.h, tw_linear.h).
 *
 * CALL CONTRACT (for the code generator)
 *   Arithmetic: for output pixel p and tile-local output channel k,
 *       acc = (first C-tile ? bias[k] : psum[p][k]) + sum over taps and the tile's input channels
 *             of x * w[k][fy][fx][c],   x = the tap's input value or pad_value outside the tile
 *   accumulated in int64; on the last C-tile out[p][k] = requant16(acc, k), else psum[p][k] = acc.
 *   psum is int32: the compiler only emits C-tiled calls for layers whose |bias| + 32768·Σ|w| per
 *   channel fits int32 (then every partial sum does, and the int32 psum is exact).
 *   requant16(acc, k) = clamp(MBQM64(acc, mult[k], shift[k]) + zero_point, qmin, qmax) with
 *       MBQM64: M0' = M0 < 0x7FFF0000 ? (M0 + 2^15) >> 16 : 0x7FFF, total = 15 - shift,
 *       (int32)((acc·M0' + 2^(total-1)) >> total)     (golden/fixedpoint.py
 *       multiply_by_quantized_multiplier_64; the int32 wrap as in the golden model);
 *   or, when rq.scale is not NULL (the 16x8 dense layer, Requant.rounding "real"),
 *       clamp(tw_real_round(acc, scale[k]) + zero_point, qmin, qmax)   (golden/requant.py
 *       real_requant: LiteRT's reference FULLY_CONNECTED rounds double(acc)·s_x·s_w/s_y);
 *   or the integer exports' modes (rq.mode, golden/requant.py "shift" / "div"):
 *       TW_RQ_SHIFT: floor((acc·mult[k] + lambda[k]) / 2^shift[k]), TW_RQ_DIV:
 *       div((acc·mult[k] + lambda[k])·post_mult, div_d) toward zero or down; + zero_point, clamp.
 *   The output is int16, or int8 with out_bytes 1 (zero point and clamp as stored: uint8 - 128).
 *   Golden: golden/conv.py conv2d_acc / dense_acc + golden/requant.py apply_requant (rq.wide).
 *
 *   Buffers (dense, tile-local, L1):
 *     in    [win.in_h][win.in_w][in_c]          int16   (fc: [in_c])
 *     w     [out_c][win.k_h][win.k_w][in_c]     int8 (OHWI, the tile's K and C slice; fc [out_c][in_c])
 *     bias  [out_c]                             int32, may be NULL (zero)
 *     out   [win.out_h][win.out_w][out_c]       int16, written on the last C-tile
 *     psum  same shape as out, int32; NULL allowed when acc_flags == TW_ACC_WHOLE
 *   mult / shift are indexed by the tile-local output channel (offset by the tile's first channel).
 *   No scratch.
 *
 *   ADD / SUB of int16 tensors (tw_add_s16 / tw_sub_s16): tw_elementwise.h's arithmetic and
 *   tw_add_params_t on n int16 elements (TFLite's int16 ADD/SUB with left_shift 15; qmin/qmax in
 *   the int16 range), the sum of the two scaled inputs wrapping in int32 as in the golden model.
 *   MUL (tw_mul_s16): tw_elementwise.h tw_mul_value on n int16 elements (tw_mul_params_t).
 *
 *   DEPTHWISE (tw_depthwise_s16), channel multiplier 1: as conv, output channel k summing the taps
 *   of input channel k only (in_c = out_c, the tile's channels); w [win.k_h][win.k_w][out_c]
 *   (channel-last, the portable depthwise layout); TFLite's reference DepthwiseConvPerChannel for
 *   int16 with an int64 bias (golden/conv.py conv2d_acc, groups = C).
 *
 *   POOLS (tw_avgpool_s16 / tw_maxpool_s16, tw_pool16_args_t) — tw_pool.h's arithmetic on int16:
 *   the window clipped to the input (tw_clipped_window), average = the int32 sum of the valid
 *   taps divided by their count rounding half away from zero, max = their maximum; clamped to
 *   [qmin, qmax] (golden/pool.py; LiteRT's reference int16 AveragePool / MaxPool).
 *
 *   Core split: conv, depthwise, pools — output rows of the tile; fc — output channels; add/sub — element ranges.
 *   All cores call with the same args; barrier afterwards. Kernels do not touch the HAL.
 */
#ifndef TW_S16_H
#define TW_S16_H

#include <stdint.h>

#include "tw_common.h"
#include "tw_elementwise.h"
#include "tw_pool.h"
#include "tw_requant.h"

typedef struct {
    int mode;                  /* TW_RQ_TFLITE (MBQM64, or "real" with scale), TW_RQ_SHIFT, TW_RQ_DIV */
    const double *scale;       /* NULL, or the "real" requant's per-channel scales (fc) */
    const int32_t *mult;       /* tflite: Q31 M0 per channel; shift: k; div: kappa */
    const int32_t *shift;      /* tflite: exponent (+ = left), <= 14; shift: right shift d, 0..63 */
    const int32_t *lambda;     /* shift / div: lambda per channel */
    int64_t post_mult, div_d;  /* div: m and D > 0 */
    int div_trunc;             /* div: 1 = toward zero, 0 = down */
    int32_t zero_point;
    int32_t qmin, qmax;        /* within the output type, as stored */
} tw_requant16_t;

typedef struct {
    tw_window_t win;           /* fc: ignored */
    const int16_t *in;
    int in_c;
    const int8_t *w;
    const int32_t *bias;
    void *out;                 /* int16, or int8 (out_bytes 1: the integer exports' 16x8->8) */
    int out_bytes;
    int out_c;
    int16_t pad_value;         /* the input zero point (0 in TFLite's 16x8 kernels) */
    int32_t *psum;
    int acc_flags;
    int acc32;                 /* 1: the compiler proved |bias| + Σ|x·w| fits int32 (sum in int32) */
    tw_requant16_t rq;
} tw_conv16_args_t;

/* TFLite MultiplyByQuantizedMultiplier(int64 x, int32 M0, int shift). */
static inline int32_t tw_mbqm64(int64_t x, int32_t m0, int32_t shift)
{
    int64_t reduced = m0 < 0x7FFF0000 ? ((int64_t)m0 + (1 << 15)) >> 16 : 0x7FFF;
    int total = 15 - shift;
    int64_t v = tw_asr64(x * reduced + ((int64_t)1 << (total - 1)), total);
    return (int32_t)(uint32_t)(uint64_t)v;
}

/* static_cast<int32_t>(round(double(x) * scale)) as LiteRT's reference 16x8 FULLY_CONNECTED
 * computes it: one IEEE double product, rounded half away from zero (without libm: the product's
 * integer part by truncation, then its exact fraction decides); a result outside int32 is
 * INT32_MIN, what x86-64's conversion gives for that undefined case (golden real_requant). */
static inline int32_t tw_real_round(int64_t x, double scale)
{
    double v = (double)x * scale, frac;
    int64_t t;
    if (!(v > -2147483649.0 && v < 2147483648.0)) return INT32_MIN;
    t = (int64_t)v;                      /* truncation toward zero */
    frac = v - (double)t;                /* exact: |v| < 2^32 */
    if (frac >= 0.5) t++;
    if (frac <= -0.5) t--;
    return t < INT32_MIN || t > INT32_MAX ? INT32_MIN : (int32_t)t;
}

static inline int32_t tw_requant16(const tw_requant16_t *rq, int64_t acc, int k)
{
    int64_t y;
    if (rq->mode == TW_RQ_SHIFT)
        y = tw_asr64(acc * rq->mult[k] + rq->lambda[k], (int)rq->shift[k]);
    else if (rq->mode == TW_RQ_DIV)
        y = tw_div64_clamp((acc * rq->mult[k] + rq->lambda[k]) * rq->post_mult, rq->div_d,
                           rq->div_trunc, (int64_t)rq->qmin - rq->zero_point,
                           (int64_t)rq->qmax - rq->zero_point);
    else
        y = (int64_t)(rq->scale ? tw_real_round(acc, rq->scale[k]) : tw_mbqm64(acc, rq->mult[k], rq->shift[k]));
    y += rq->zero_point;
    if (y < rq->qmin) y = rq->qmin;
    if (y > rq->qmax) y = rq->qmax;
    return (int32_t)y;
}

typedef struct {
    tw_window_t win;           /* d_h = d_w = 1 */
    const int16_t *in;
    int c;
    int16_t *out;
    int32_t qmin, qmax;
} tw_pool16_args_t;

void tw_conv2d_s16(const tw_conv16_args_t *a, int core_id, int n_cores);
void tw_depthwise_s16(const tw_conv16_args_t *a, int core_id, int n_cores);
void tw_avgpool_s16(const tw_pool16_args_t *a, int core_id, int n_cores);
void tw_maxpool_s16(const tw_pool16_args_t *a, int core_id, int n_cores);
void tw_fully_connected_s16(const tw_conv16_args_t *a, int core_id, int n_cores);
void tw_add_s16(const tw_add_params_t *p, const int16_t *a, const int16_t *b, int16_t *out, int n,
                int core_id, int n_cores);
void tw_sub_s16(const tw_add_params_t *p, const int16_t *a, const int16_t *b, int16_t *out, int n,
                int core_id, int n_cores);
void tw_mul_s16(const tw_mul_params_t *p, const int16_t *a, const int16_t *b, int16_t *out, int n,
                int core_id, int n_cores);

#endif /* TW_S16_H */
