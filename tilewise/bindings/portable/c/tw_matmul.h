/*
 * tw_matmul.h — the int8 MatMul at the heart of conv, pointwise conv and fully connected layers
 * (internal to the kernel library; generated code calls tw_conv.h / tw_linear.h instead).
 *
 * One call multiplies one or two "columns" (the im2col buffer of an output pixel, the input
 * pixel itself for 1x1 convolutions, or an input row for dense layers; `len` int8 values each)
 * with the weight rows of output channels [k_begin, k_end) (`len` int8 values each, row k at
 * w + k*len). The structure is PULP-NN's 4x2 register blocking (seed 004 §3.3.3, Fig. 3.7/3.11):
 * four output channels x two pixels per inner iteration — 8 accumulators, 6 operand loads for
 * 8 MACs (32 MACs for 6 word loads with 4-way SIMD) — then 1x2 for leftover channels, and 4x1 /
 * 1x1 when the pixel count is odd.
 *
 * Accumulators start from the bias (first reduction tile) or from the int32 partial sums of the
 * previous reduction tile, and end as requantized int8 (last tile) or as partial sums again.
 */
#ifndef TW_MATMUL_H
#define TW_MATMUL_H

#include <stdint.h>

#include "tw_common.h"
#include "tw_requant.h"

/* Where accumulators come from and go to. out/psum are [pixels][row] with row = output channels
 * of the tile; pixel indices passed to tw_matmul_s8 index their first dimension. */
typedef struct {
    const int32_t *bias;      /* [row] or NULL (zero); read when flags has TW_ACC_FIRST */
    int32_t *psum;            /* read unless TW_ACC_FIRST, written unless TW_ACC_LAST */
    int8_t *out;              /* written when flags has TW_ACC_LAST */
    int row;                  /* output channels per pixel */
    int flags;                /* TW_ACC_FIRST / TW_ACC_LAST */
    const tw_requant_t *rq;
    int acc_bits;             /* accumulator register width: tw_acc_wrap on store (32 = none) */
} tw_mm_sink_t;

/* col1 == NULL computes the single pixel pix0. */
void tw_matmul_s8(const int8_t *col0, const int8_t *col1, int pix0, int pix1,
                  const int8_t *w, int len, int k_begin, int k_end, const tw_mm_sink_t *sink);

/* One pixel whose column is `len` copies of `value` (a padded tap of a 1x1 convolution): the
 * same accumulation as tw_matmul_s8 without a column buffer. */
void tw_matmul_fill_s8(int8_t value, int pix, const int8_t *w, int len, int k_begin, int k_end,
                       const tw_mm_sink_t *sink);

#endif /* TW_MATMUL_H */
