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

#endif /* TW_SOFTMAX_H */
