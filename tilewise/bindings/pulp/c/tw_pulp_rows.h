/*
 * tw_pulp_rows.h — the cluster's row-wise integer operators and its transpose (bindings/pulp/
 * rows.py): Deeploy's iLayerNorm, iRMSNorm, iSoftmax, ITAMax and the elementwise iGELU,
 * iHardswish and RequantShift, streamed through L1 by whole rows and split over the cores; a
 * permutation of a tensor that fits L1, permuted there by all cores.
 *
 * ROWS (tw_pulp_rows): a tensor of `rows` rows of `len` elements (the op's axis is the last one,
 * rows contiguous in L2: x_row_bytes and y_row_bytes apart). Core 0 moves blocks of `block` rows
 * L2 -> L1 (input) and L1 -> L2 (output) with the cluster DMA, each buffer twice (the next block's
 * input arrives while the cores compute this one; a block's output leaves while the next one is
 * computed); every core computes a contiguous run of the block's rows (tw_pulp_share) by calling
 * `fn(ctx, x, y, n)` on its n rows in L1 — the portable kernel of the op (tw_int.h) on a
 * [n][len] tensor, so the arithmetic (the integer square root, the 64-bit divisions) is the
 * host core's, bit for bit. `l1` holds 2·block rows of input then 2·block rows of output
 * (rows.py scratch_bytes: 2·block·(x_row_bytes + y_row_bytes), each part rounded up to 4 bytes).
 * Called outside a fork; forks `cores` cores itself.
 *
 * TRANSPOSE (tw_pulp_transpose): numpy.transpose of a tensor of `n` elements of `elem_bytes`
 * bytes, the output dims `out_dims[0..rank)` each walking the input at `in_stride[d]` elements
 * (tw_transpose's contract, tw_host.h, after rows.py merged what it could): core 0 copies the
 * whole input into L1 (`l1`), every core permutes a contiguous run of the output's rows (all
 * dims but the last) into L1 at l1 + round4(n·elem_bytes), core 0 copies the output to L2.
 * Called outside a fork.
 */
#ifndef TW_PULP_ROWS_H
#define TW_PULP_ROWS_H

#include <stdint.h>

#define TW_PULP_TRANSPOSE_MAX_RANK 8

/* one core's n rows, input x and output y in L1 */
typedef void (*tw_pulp_row_fn)(const void *ctx, const void *x, void *y, int32_t n);

typedef struct {
    tw_pulp_row_fn fn;
    const void *ctx;
    const int8_t *x;          /* L2 */
    int8_t *y;                /* L2 */
    int8_t *l1;               /* the scratch (module docstring) */
    int32_t rows, block;
    int32_t x_row_bytes, y_row_bytes;
} tw_pulp_rows_t;

void tw_pulp_rows(const tw_pulp_rows_t *r, int cores);

typedef struct {
    const int8_t *x;          /* L2 */
    int8_t *y;                /* L2 */
    int8_t *l1;
    int32_t n;                /* elements */
    int elem_bytes, rank;
    const int32_t *out_dims, *in_stride;
} tw_pulp_transpose_t;

void tw_pulp_transpose(const tw_pulp_transpose_t *t, int cores);

/*
 * REDUCE (tw_pulp_reduce): tw_int_reduce's sum or Deeploy's integer mean (tw_int.h REDUCE) over a
 * contiguous run of axes: x viewed as [outer][count][inner] (elements of x_bytes, + x_off), y as
 * [outer][inner] (y_bytes, stored − y_off). Core 0 copies the whole input into L1 (`l1`), every
 * core computes a contiguous run of the outputs into L1 at l1 + round4(outer·count·inner·x_bytes),
 * core 0 copies them to L2. Called outside a fork.
 */
typedef struct {
    const int8_t *x;          /* L2 */
    int8_t *y;                /* L2 */
    int8_t *l1;
    int32_t outer, count, inner;
    int x_bytes, y_bytes;
    int32_t x_off, y_off;
    int mean;
} tw_pulp_reduce_t;

void tw_pulp_reduce(const tw_pulp_reduce_t *r, int cores);

/*
 * ROW KERNELS: tw_int.h's Deeploy row operators (tw_int_layer_norm, tw_int_rms_norm,
 * tw_int_softmax, tw_int_ita_max) and tw_int_gelu on `n` contiguous rows of `len` int8 values
 * (stored; + x_off), output elements of y_bytes (stored as value − y_off), the same formulas
 * step for step, with two changes that leave every result unchanged: the input read as int8
 * (no width switch per element), and each division of int64 operands done in 32 bits when both
 * fit (tw_pulp_div: C's division truncates the same way in either width) — on RV32 a 64-bit
 * division is a libgcc call of hundreds of cycles, a 32-bit one the core's div.
 */
#include "tw_int.h"

static inline int64_t tw_pulp_div(int64_t a, int64_t b)
{
    if (a == (int32_t)a && b == (int32_t)b && !(a == INT32_MIN && b == -1))
        return (int32_t)a / (int32_t)b;
    return a / b;
}

void tw_pulp_layer_norm_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                             int32_t n, int32_t len, const int32_t *weight, const int32_t *bias,
                             int log2d, int64_t qmin, int64_t qmax);
void tw_pulp_rms_norm_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                           int32_t n, int32_t len, const int32_t *weight, int log2d, int64_t qmin,
                           int64_t qmax);
void tw_pulp_softmax_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                          int32_t n, int32_t len, int64_t a, int64_t b, int64_t c, int64_t log2,
                          int64_t levels_m1);
void tw_pulp_ita_max_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                          int32_t n, int32_t len, int64_t levels_m1);
void tw_pulp_gelu_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                       int32_t count, int64_t b, int64_t one);

#endif
