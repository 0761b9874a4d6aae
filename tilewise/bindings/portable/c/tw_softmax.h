/*
 * tw_softmax.h — int8 softmax over the last (channel) dimension, TFLite's int8 reference
 * (reference/softmax.h, the BUILTIN_REF kernel) with gemmlowp fixed-point exp and reciprocal.
 *
 * CALL CONTRACT (for the code generator)
 *   in, out: [rows][depth] int8; out has TFLite's fixed quantization scale 1/256, zero point
 *   -128. Per row, with m = max of the row and d = x - m:
 *     d < diff_min  ->  out = -128
 *     otherwise     e(d) = exp_on_negative_values(SRDHM(d * 2^input_beta_left_shift,
 *                                                   input_beta_multiplier) as Q5.26)   (Q0.31)
 *                   S    = sum over the row's d >= diff_min of RoundingDivideByPOT(e, 12)  (Q12.19)
 *                   S = 2^b * (1 + f) with f in [0, 1); r = 1 / (1 + f) in Q0.31 (GetReciprocal)
 *                   out  = clamp(RoundingDivideByPOT(SRDHM(r, e(d)), b + 31 - 8) - 128, -128, 127)
 *   Parameters as TFLite's SoftmaxPrepare computes them for the reference kernel:
 *     (input_beta_multiplier, input_beta_left_shift) = QuantizeMultiplierGreaterThanOne(
 *         min(beta * s_in * 2^(31-5), 2^31 - 1))              (PreprocessSoftmaxScaling, 5 int bits)
 *     diff_min = -floor((2^5 - 1) * 2^(31-5) / 2^input_beta_left_shift)   (CalculateInputRadius)
 *   Core split: rows, chunk = ceil(rows / n_cores). The whole depth must be in one tile.
 *   Same args on every core; barrier after.
 *
 *   tw_softmax_onnx_s8 — onnxruntime's QLinearSoftmax (qlinear_softmax.cc; golden/onnx_ops.py
 *   `softmax`), float32 step by step, over any axis: the input viewed as [outer][depth][inner]
 *   (depth = the axis' size), a row is (o, i) and its elements are j < depth. Per row, with
 *   m = max of the row:
 *       t_j   = table[255 - m + x_j]                 (table[i] = exp((i - 255)·s_x), float32)
 *       S     = t_0 + t_1 + ... (sequential float32 sum)
 *       out_j = clamp(nearbyintf((t_j · y_scale_inv) / S) + y_zp, -128, 127)
 *   x - m does not change when every value is shifted, so a uint8 input stored as u - 128 needs
 *   nothing special; a uint8 output passes y_zp - 128 (saturating to [0, 255] then subtracting
 *   128 equals adding zp - 128 and saturating to [-128, 127]). Products and quotients are
 *   rounded to float32 one by one (no contraction: ISO C mode / -ffp-contract=off). A
 *   non-finite quotient (t·y_scale_inv overflows float32 when the depth is 1) gives y_nonfinite:
 *   onnxruntime converts it with x86's cvtss2si to INT32_MIN and adds the zero point with
 *   wrap-around before clamping (the golden model does the same in int64), so the caller passes
 *   the type's maximum when the zero point (value domain) is negative, else its minimum — as
 *   stored.
 */
#ifndef TW_SOFTMAX_H
#define TW_SOFTMAX_H

#include <stdint.h>

#include "tw_common.h"

typedef struct {
    const int8_t *in;
    int8_t *out;
    int rows;
    int depth;
    int32_t input_beta_multiplier;
    int32_t input_beta_left_shift;
    int32_t diff_min;
} tw_softmax_args_t;

void tw_softmax_s8(const tw_softmax_args_t *a, int core_id, int n_cores);

typedef struct {
    const int8_t *in;
    int8_t *out;
    int rows;                  /* outer · inner rows */
    int depth;
    int inner;                 /* the stride of a row's elements: product of the dims after
                                  the axis (1: the last axis) */
    const float *table;        /* [256] */
    float y_scale_inv;
    int32_t y_zp;              /* as stored (uint8 output: zp - 128) */
    int8_t y_nonfinite;        /* the stored output of a non-finite quotient (above) */
} tw_softmax_onnx_args_t;

void tw_softmax_onnx_s8(const tw_softmax_onnx_args_t *a, int core_id, int n_cores);

/* int16 softmax (tw_softmax_s16): TFLite's reference_ops::SoftmaxInt16 over the last dimension
 * (golden/activation.py softmax_int16). Per row of `depth` values, with m = max of the row:
 *     e_j = lut(exp_lut, clamp(MBQM(x_j - m, input_multiplier, input_left_shift) + 32767))
 *     S   = Σ e_j (int32);  h = CountLeadingZeros(S)
 *     r   = lut(recip_lut, clamp((((int64)S << (h - 1)) + 2^13) >> 14) - 2^15 - 2^16))
 *     out_j = clamp((e_j · r + 2^(30 - h)) >> (31 - h), 0, 32767)
 * lut(t, v) = t[256 + (v >> 7)] + ((t[257 + (v >> 7)] - t[256 + (v >> 7)]) · (v & 127) + 64) >> 7
 * (LUTLookup), clamps to int16. The tables are LUTPopulateInt16's (513 entries, the frontend's).
 * The output scale is 1/32768, zero point 0. depth · 32767 must fit int32 (the caller's check).
 * Core split: rows. `out` must not overlap `in` (it holds the row's e_j meanwhile). */
typedef struct {
    const int16_t *in;
    int16_t *out;
    int rows;
    int depth;
    int32_t input_multiplier;
    int32_t input_left_shift;
    const int16_t *exp_lut;    /* [513] */
    const int16_t *recip_lut;  /* [513] */
} tw_softmax16_args_t;

void tw_softmax_s16(const tw_softmax16_args_t *a, int core_id, int n_cores);

#endif /* TW_SOFTMAX_H */
