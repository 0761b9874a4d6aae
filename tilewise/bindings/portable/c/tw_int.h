/*
 * tw_int.h — kernels of the integer exports' ops (NEMO, QuantLab, Deeploy): exact integer
 * arithmetic on tensors of any integer width, one call per layer on the whole tensors where they
 * are (L2), run by one core (bindings/portable/int_ops.py lists them for the host modules).
 * Bit-exact with tilewise/golden/int_ops.py and golden/conv.py + golden/requant.py.
 *
 * CALL CONTRACT (for the code generator)
 *   Elements are 1, 2 or 4 bytes (int8 / int16 / int32; a uint8 tensor is stored biased as
 *   u - 128, common.py): `*_bytes` says which. Values are `stored + off`, where a kernel takes an
 *   `off` (128 for a uint8 operand, else 0); results are stored as `value - off`. The kernels
 *   compute in int64 and store with C's conversion; the compiler proves every stored value fits
 *   its type (frontend/onnx_int.py bounds, or the clamp).
 *
 *   Requantization (tw_int_rq_t, tw_int_rq): of an int64 value v of channel k,
 *       TW_INT_RQ_NONE:  v
 *       TW_RQ_SHIFT:     floor((v·mult[k] + lambda[k]) / 2^shift[k])        (golden "shift")
 *       TW_RQ_DIV:       div((v·mult[k] + lambda[k])·post_mult, div_d)      (golden "div": toward
 *                        zero with div_trunc, else down)
 *   then + zero_point, clamped to [qmin, qmax] — zero_point and bounds as stored (uint8: - 128).
 *   lambda may be NULL (0). The compiler proves v·mult + lambda (·post_mult) fits int64.
 *
 *   REQUANT (tw_int_requant): y[i] = rq(x[i] + x_off, k) for i < n with channel
 *   k = (i / inner) % channels (the per-channel axis of the golden RequantParams: inner = the
 *   product of the dims after it; channels = 1 for one value per tensor).
 *
 *   CONV (tw_int_conv): NHWC input [n][ih][iw][c] (stored values: the bias holds the uint8
 *   correction, constants.py kernel_bias), weights int8 [k][fh][fw][c] (dense) or [fh][fw][k]
 *   (depthwise: output channel k reads input channel k), int32 bias [k] or NULL;
 *   acc = bias[k] + Σ x·w over the window, a tap outside the input reading `pad_value` (as
 *   stored); y[n][oy][ox][k] = rq(acc, k) with its zero point and clamp as stored. A dense
 *   (fully connected) layer is a 1x1 conv on [rows][1][1][c]. acc is int32 unless acc64 (the
 *   compiler sets it when |bias| + Σ|w|·max|x| may pass 2^31 - 1).
 *
 *   BINARY (tw_int_binary): out[...] = clamp(a ∘ b, qmin, qmax) - out_off with ∘ = +, -, · of
 *   the operands' values, numpy broadcasting: the output, of dims out_dims[0..rank), is written
 *   in order; its element (i_0, ..., i_{rank-1}) reads a[Σ i_d·a_stride[d]] (stride 0 along a
 *   dim a broadcasts), b likewise. qmin / qmax are values (not stored forms).
 *
 *   MATMUL (tw_int_matmul): y[b][m][n] = Σ_k a[b][m][k]·b[b][k][n] (values) for every index b of
 *   the broadcast batch dims batch_dims[0..batch_rank), operand batch strides in elements (0
 *   along a broadcast dim); each matrix is dense row-major after its batch offset. With `rq`
 *   (not NULL: a MatMul fused with the requantization of its sums, passes/fuse_matmul.py) each
 *   sum is stored as rq(sum, channel), the channel the column n when rq_per_column, else 0.
 *
 *   REDUCE (tw_int_reduce): over the input of dims dims[0..rank), the dims with reduced[d] != 0
 *   summed (int64), mean = floor((Σ + count/2) / count) when `mean`; the output holds the kept
 *   dims in order (keepdims or not: the same bytes).
 *
 *   HARDSWISH (tw_int_hardswish): y[i] = x·(clamp(x + three, 0, six)·one_over_six), x the value
 *   (Deeploy's iHardswish).
 *
 *   GELU (tw_int_gelu): Deeploy's iGELU per element: q = min(|v|, −b),
 *   L = sign(v)·(one − (q + b)²), y = v·((one + L) >> 1); the compiler proves it fits int32.
 *
 *   Row kernels (SOFTMAX, RMS_NORM, LAYER_NORM, ITA_MAX) work along one axis of the tensor viewed as [outer][len][inner]:
 *   row (o, i) is the `len` elements at (o·len + j)·inner + i, j < len.
 *
 *   SOFTMAX (tw_int_softmax): Deeploy's iSoftmax per row: m = max v, for each element
 *   d = v − m, z = min(⌊−d / log2⌋, 31), p = d + z·log2, e = (a·(p + b)² + c) >> z;
 *   y = ⌊e·levels_m1 / Σe⌋. The compiler proves 0 ≤ e < 2^32 and e ≥ 1 at the maximum.
 *
 *   RMS_NORM (tw_int_rms_norm): Deeploy's iRMSNorm per row: r = ⌊√(⌊Σv² / len⌋ + 1)⌋, then
 *   y[j] = clamp((v·weight[j] / r) >> log2d, qmin, qmax), the division toward zero (C's),
 *   the shift arithmetic (floor); qmin / qmax are values.
 *
 *   LAYER_NORM (tw_int_layer_norm): Deeploy's iLayerNorm per row: μ = Σv / len (C's division),
 *   d = v − μ, r = ⌊√(⌊Σd² / len⌋ + 1)⌋, then y[j] = clamp((d·weight[j] / r + bias[j]) >> log2d,
 *   qmin, qmax), the division toward zero, the shift arithmetic (floor); qmin / qmax are values.
 *
 *   ITA_MAX (tw_int_ita_max): Deeploy's ITAMax per row: s_j = (max v − v_j + 16) >> 5,
 *   y_j = ⌊levels_m1·256 / Σ(256 >> s_j)⌋ >> s_j (8-bit values: s_j ≤ 8).
 *
 *   No kernel may be called with an output overlapping an input, except REQUANT, HARDSWISH and
 *   GELU with y == x and y_bytes <= x_bytes.
 */
#ifndef TW_INT_H
#define TW_INT_H

#include <stdint.h>

#include "tw_common.h"
#include "tw_requant.h"

#define TW_INT_RQ_NONE (-1)
#define TW_INT_MAX_RANK 8

enum { TW_INT_ADD, TW_INT_SUB, TW_INT_MUL };

typedef struct {
    int mode;                 /* TW_INT_RQ_NONE | TW_RQ_SHIFT | TW_RQ_DIV */
    const int64_t *mult;      /* per channel */
    const int64_t *lambda;    /* per channel, NULL = 0 */
    const int32_t *shift;     /* shift mode: right shift per channel, 0..63 */
    int64_t post_mult;        /* div mode: m */
    int64_t div_d;            /* div mode: D > 0 */
    int div_trunc;            /* div mode: 1 = toward zero, 0 = down */
    int64_t zero_point;       /* as stored */
    int64_t qmin, qmax;       /* as stored */
} tw_int_rq_t;

typedef struct {
    int32_t n, ih, iw, c, oh, ow, k, fh, fw, sy, sx, pad_t, pad_l;
    int depthwise;            /* 1: weights [fh][fw][k], output channel k reads input channel k */
    int acc64;                /* 1: accumulate in int64 (else int32: the compiler proved every
                                 accumulator fits) */
    int32_t pad_value;        /* as stored */
    const int8_t *w;
    const int32_t *bias;      /* [k] or NULL */
} tw_int_conv_t;

/* ⌊√s⌋ digit by digit (two bits of s per step), exact for every s < 2^62: iRMSNorm's and
 * iLayerNorm's square root (here and in the PULP cluster's row kernels, tw_pulp_rows.c) */
int64_t tw_int_isqrt(int64_t s);

static inline int64_t tw_int_load(const void *p, int bytes, int32_t i)
{
    if (bytes == 1) return ((const int8_t *)p)[i];
    if (bytes == 2) return ((const int16_t *)p)[i];
    return ((const int32_t *)p)[i];
}

static inline void tw_int_store(void *p, int bytes, int32_t i, int64_t v)
{
    if (bytes == 1)
        ((int8_t *)p)[i] = (int8_t)v;
    else if (bytes == 2)
        ((int16_t *)p)[i] = (int16_t)v;
    else
        ((int32_t *)p)[i] = (int32_t)v;
}

static inline int64_t tw_int_rq(const tw_int_rq_t *rq, int64_t v, int32_t k)
{
    int64_t y = v;
    if (rq->mode == TW_RQ_SHIFT) {
        y = tw_asr64(v * rq->mult[k] + (rq->lambda ? rq->lambda[k] : 0), (int)rq->shift[k]);
    } else if (rq->mode == TW_RQ_DIV) {
        y = tw_div64_clamp((v * rq->mult[k] + (rq->lambda ? rq->lambda[k] : 0)) * rq->post_mult,
                           rq->div_d, rq->div_trunc, rq->qmin - rq->zero_point,
                           rq->qmax - rq->zero_point);
    }
    y += rq->zero_point;
    if (y < rq->qmin) y = rq->qmin;
    if (y > rq->qmax) y = rq->qmax;
    return y;
}

void tw_int_requant(const tw_int_rq_t *rq, const void *x, int x_bytes, int32_t x_off, void *y,
                    int y_bytes, int32_t n, int32_t channels, int32_t inner);
void tw_int_conv(const tw_int_conv_t *p, const tw_int_rq_t *rq, const void *x, int x_bytes,
                 void *y, int y_bytes);
void tw_int_binary(int op, const void *a, int a_bytes, int32_t a_off, const int32_t *a_stride,
                   const void *b, int b_bytes, int32_t b_off, const int32_t *b_stride, void *out,
                   int out_bytes, int32_t out_off, int rank, const int32_t *out_dims,
                   int64_t qmin, int64_t qmax);
void tw_int_matmul(const void *a, int a_bytes, int32_t a_off, const int32_t *a_bstride,
                   const void *b, int b_bytes, int32_t b_off, const int32_t *b_bstride, void *y,
                   int y_bytes, int batch_rank, const int32_t *batch_dims, int32_t m, int32_t k,
                   int32_t n, const tw_int_rq_t *rq, int rq_per_column);
void tw_int_reduce(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes,
                   int32_t y_off, int rank, const int32_t *dims, const int32_t *reduced, int mean);
void tw_int_hardswish(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes,
                      int32_t y_off, int32_t n, int64_t three, int64_t six, int64_t one_over_six);
void tw_int_softmax(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                    int32_t outer, int32_t len, int32_t inner, int64_t a, int64_t b, int64_t c,
                    int64_t log2, int64_t levels_m1);
void tw_int_rms_norm(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                     int32_t outer, int32_t len, int32_t inner, const int32_t *weight, int log2d,
                     int64_t qmin, int64_t qmax);
void tw_int_layer_norm(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                       int32_t outer, int32_t len, int32_t inner, const int32_t *weight,
                       const int32_t *bias, int log2d, int64_t qmin, int64_t qmax);
void tw_int_gelu(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                 int32_t n, int64_t b, int64_t one);
void tw_int_ita_max(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                    int32_t outer, int32_t len, int32_t inner, int64_t levels_m1);

#endif /* TW_INT_H */
