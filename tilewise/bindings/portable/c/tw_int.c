/*
 * tw_int.c — the integer exports' whole-tensor kernels (tw_int.h: call contracts).
 */
#include "tw_int.h"

#include <stddef.h>

/* The shift mode of one element with its channel's constants (tw_int_rq's TW_RQ_SHIFT, small
 * enough to inline in the loops below; tw_int_rq itself, with the div mode, is not). */
static inline int64_t rq_shift(int64_t v, int64_t mult, int64_t lambda, int shift, int64_t zp,
                               int64_t qmin, int64_t qmax)
{
    int64_t y = tw_asr64(v * mult + lambda, shift) + zp;
    return y < qmin ? qmin : y > qmax ? qmax : y;
}

/* One channel's run of `run` elements from x + i into y + i, XT / YT the element types. */
#define TW_INT_RQ_RUN(XT, YT)                                                                   \
    for (j = 0; j < run; j++)                                                                   \
        ((YT *)y)[i + j] = (YT)rq_shift((int64_t)((const XT *)x)[i + j] + x_off, mult, lambda,   \
                                        shift, zp, qmin, qmax)

/* Every run of channel k (`inner` elements each, `stride` apart) in shift mode, XT / YT the
 * element types; the channel's constants are the locals mult, lambda, shift. Runs of one
 * element (the channel axis innermost) as one strided loop. */
#define TW_INT_RQ_CHANNEL(XT, YT)                                                               \
    {                                                                                           \
        if (inner == 1)                                                                         \
            for (i = k; i < n; i += stride)                                                     \
                ((YT *)y)[i] = (YT)rq_shift((int64_t)((const XT *)x)[i] + x_off, mult, lambda,   \
                                            shift, zp, qmin, qmax);                             \
        else                                                                                    \
            for (i = k * inner; i < n; i += stride) {                                           \
                run = inner < n - i ? inner : n - i;                                            \
                TW_INT_RQ_RUN(XT, YT);                                                          \
            }                                                                                   \
    }

void tw_int_requant(const tw_int_rq_t *rq, const void *x, int x_bytes, int32_t x_off, void *y,
                    int y_bytes, int32_t n, int32_t channels, int32_t inner)
{
    /* the parameters and the current channel's constants as locals: stores through y (a char
     * type for 8-bit outputs) may alias anything reached through a pointer, which the compiler
     * would reload from L2 for every element (~15 cycles each on a PULP cluster core) */
    const int64_t zp = rq->zero_point, qmin = rq->qmin, qmax = rq->qmax;
    int64_t mult, lambda;
    int32_t i = 0, k = 0, run, j;
    int shift;
    if (channels == 1) inner = n;      /* one run */
    if (rq->mode == TW_RQ_SHIFT && channels > 1 && (y != x || y_bytes == x_bytes)) {
        /* channel by channel, each channel's constants read once for all its runs: a
         * per-channel requantization along the innermost axis (inner = 1: Deeploy's iNoNorm)
         * read them for every element, ~280 cycles an element on GVSoC's RI5CY instead of ~85.
         * Each element is computed alone, so the order changes no value; a requantization in
         * place into narrower elements (y == x, y_bytes < x_bytes) keeps the ascending walk
         * below, whose stores never reach an element not yet read. */
        const int32_t stride = channels * inner;
        for (k = 0; k < channels; k++) {
            mult = rq->mult[k];
            lambda = rq->lambda ? rq->lambda[k] : 0;
            shift = (int)rq->shift[k];
            if (x_bytes == 4 && y_bytes == 1) TW_INT_RQ_CHANNEL(int32_t, int8_t)
            else if (x_bytes == 4 && y_bytes == 2) TW_INT_RQ_CHANNEL(int32_t, int16_t)
            else if (x_bytes == 2 && y_bytes == 1) TW_INT_RQ_CHANNEL(int16_t, int8_t)
            else if (x_bytes == 1 && y_bytes == 1) TW_INT_RQ_CHANNEL(int8_t, int8_t)
            else
                for (i = k * inner; i < n; i += stride) {
                    run = inner < n - i ? inner : n - i;
                    for (j = 0; j < run; j++)
                        tw_int_store(y, y_bytes, i + j,
                                     rq_shift(tw_int_load(x, x_bytes, i + j) + x_off, mult, lambda,
                                              shift, zp, qmin, qmax));
                }
        }
        return;
    }
    while (i < n) {
        run = inner < n - i ? inner : n - i;
        if (rq->mode != TW_RQ_SHIFT) {
            for (j = 0; j < run; j++)
                tw_int_store(y, y_bytes, i + j, tw_int_rq(rq, tw_int_load(x, x_bytes, i + j) + x_off, k));
        } else {
            mult = rq->mult[k];
            lambda = rq->lambda ? rq->lambda[k] : 0;
            shift = (int)rq->shift[k];
            if (x_bytes == 4 && y_bytes == 1) TW_INT_RQ_RUN(int32_t, int8_t);
            else if (x_bytes == 4 && y_bytes == 2) TW_INT_RQ_RUN(int32_t, int16_t);
            else if (x_bytes == 2 && y_bytes == 1) TW_INT_RQ_RUN(int16_t, int8_t);
            else if (x_bytes == 1 && y_bytes == 1) TW_INT_RQ_RUN(int8_t, int8_t);
            else
                for (j = 0; j < run; j++)
                    tw_int_store(y, y_bytes, i + j,
                                 rq_shift(tw_int_load(x, x_bytes, i + j) + x_off, mult, lambda, shift,
                                          zp, qmin, qmax));
        }
        i += run;
        if (++k == channels) k = 0;
    }
}

/* One output pixel's accumulators of every output channel: `ACC` the accumulator type, `XT` the
 * input element type; the window's taps outside the input read pad_value (as stored). A window
 * wholly inside the input runs without bounds checks. */
#define TW_INT_CONV_PIXEL(ACC, XT)                                                              \
    do {                                                                                        \
        const XT *xin = (const XT *)x;                                                          \
        int32_t iy0 = oy * p->sy - p->pad_t, ix0 = ox * p->sx - p->pad_l;                       \
        int inside = iy0 >= 0 && ix0 >= 0 && iy0 + p->fh <= p->ih && ix0 + p->fw <= p->iw;      \
        for (k = 0; k < p->k; k++) {                                                            \
            ACC acc = p->bias ? (ACC)p->bias[k] : 0;                                            \
            for (fy = 0; fy < p->fh; fy++) {                                                    \
                int32_t iy = iy0 + fy;                                                          \
                for (fx = 0; fx < p->fw; fx++) {                                                \
                    int32_t ix = ix0 + fx;                                                      \
                    if (inside || (iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw)) {           \
                        const XT *xp = xin + ((b * p->ih + iy) * p->iw + ix) * p->c;            \
                        if (p->depthwise) {                                                     \
                            acc += (ACC)xp[k] * p->w[(fy * p->fw + fx) * p->k + k];             \
                        } else {                                                                \
                            const int8_t *wk = p->w + ((k * p->fh + fy) * p->fw + fx) * p->c;   \
                            for (c = 0; c < p->c; c++) acc += (ACC)xp[c] * wk[c];               \
                        }                                                                       \
                    } else if (p->depthwise) {                                                  \
                        acc += (ACC)p->pad_value * p->w[(fy * p->fw + fx) * p->k + k];          \
                    } else {                                                                    \
                        const int8_t *wk = p->w + ((k * p->fh + fy) * p->fw + fx) * p->c;       \
                        for (c = 0; c < p->c; c++) acc += (ACC)p->pad_value * wk[c];            \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
            tw_int_store(y, y_bytes, o++, tw_int_rq(rq, (int64_t)acc, k));                      \
        }                                                                                       \
    } while (0)

#define TW_INT_CONV(NAME, ACC, XT)                                                              \
    static void NAME(const tw_int_conv_t *p, const tw_int_rq_t *rq, const void *x, void *y,    \
                     int y_bytes)                                                               \
    {                                                                                           \
        int32_t b, oy, ox, k, fy, fx, c, o = 0;                                                 \
        for (b = 0; b < p->n; b++)                                                              \
            for (oy = 0; oy < p->oh; oy++)                                                      \
                for (ox = 0; ox < p->ow; ox++) TW_INT_CONV_PIXEL(ACC, XT);                      \
    }

TW_INT_CONV(conv_x8_a32, int32_t, int8_t)
TW_INT_CONV(conv_x16_a32, int32_t, int16_t)
TW_INT_CONV(conv_x32_a32, int32_t, int32_t)
TW_INT_CONV(conv_x8_a64, int64_t, int8_t)
TW_INT_CONV(conv_x16_a64, int64_t, int16_t)
TW_INT_CONV(conv_x32_a64, int64_t, int32_t)

void tw_int_conv(const tw_int_conv_t *p, const tw_int_rq_t *rq, const void *x, int x_bytes,
                 void *y, int y_bytes)
{
    if (p->acc64) {
        if (x_bytes == 1) conv_x8_a64(p, rq, x, y, y_bytes);
        else if (x_bytes == 2) conv_x16_a64(p, rq, x, y, y_bytes);
        else conv_x32_a64(p, rq, x, y, y_bytes);
    } else {
        if (x_bytes == 1) conv_x8_a32(p, rq, x, y, y_bytes);
        else if (x_bytes == 2) conv_x16_a32(p, rq, x, y, y_bytes);
        else conv_x32_a32(p, rq, x, y, y_bytes);
    }
}

/* One output row of `last` elements, both operands walked with their strides: AT / BT / OT the
 * element types, OP the operation on int32 values (every result is proven to fit its output
 * type, an int32 at most: frontend/onnx_int.py fit_dtype; the clamp is the export's clip). */
#define TW_INT_BINARY_ROW(AT, BT, OT, OP)                                                       \
    for (i = 0; i < last; i++) {                                                                \
        int32_t va = (int32_t)((const AT *)a)[ia + i * sa] + a_off;                             \
        int32_t vb = (int32_t)((const BT *)b)[ib + i * sb] + b_off;                             \
        int32_t v = OP;                                                                         \
        v = v < lo ? lo : v > hi ? hi : v;                                                      \
        ((OT *)out)[o + i] = (OT)(v - out_off);                                                 \
    }

#define TW_INT_BINARY_OPS(AT, BT, OT)                                                           \
    if (op == TW_INT_ADD) { TW_INT_BINARY_ROW(AT, BT, OT, va + vb) }                            \
    else if (op == TW_INT_SUB) { TW_INT_BINARY_ROW(AT, BT, OT, va - vb) }                       \
    else { TW_INT_BINARY_ROW(AT, BT, OT, va * vb) }

void tw_int_binary(int op, const void *a, int a_bytes, int32_t a_off, const int32_t *a_stride,
                   const void *b, int b_bytes, int32_t b_off, const int32_t *b_stride, void *out,
                   int out_bytes, int32_t out_off, int rank, const int32_t *out_dims,
                   int64_t qmin, int64_t qmax)
{
    int32_t idx[TW_INT_MAX_RANK];
    int32_t last = out_dims[rank - 1], sa = a_stride[rank - 1], sb = b_stride[rank - 1];
    int32_t ia = 0, ib = 0, o = 0, rows = 1, i;
    /* 8- and 16-bit operands into an 8- or 16-bit output: int32 arithmetic, typed loops */
    const int narrow = a_bytes <= 2 && b_bytes <= 2 && out_bytes <= 2;
    const int32_t lo = qmin < INT32_MIN ? INT32_MIN : (int32_t)qmin;
    const int32_t hi = qmax > INT32_MAX ? INT32_MAX : (int32_t)qmax;
    int d;
    for (d = 0; d < rank; d++) idx[d] = 0;
    for (d = 0; d < rank - 1; d++) rows *= out_dims[d];
    while (rows-- > 0) {
        if (narrow && a_bytes == 1 && b_bytes == 1 && out_bytes == 2) {
            TW_INT_BINARY_OPS(int8_t, int8_t, int16_t)
        } else if (narrow && a_bytes == 1 && b_bytes == 1 && out_bytes == 1) {
            TW_INT_BINARY_OPS(int8_t, int8_t, int8_t)
        } else if (narrow && a_bytes == 2 && b_bytes == 2 && out_bytes == 2) {
            TW_INT_BINARY_OPS(int16_t, int16_t, int16_t)
        } else {
            for (i = 0; i < last; i++) {
                int64_t va = tw_int_load(a, a_bytes, ia + i * sa) + a_off;
                int64_t vb = tw_int_load(b, b_bytes, ib + i * sb) + b_off;
                int64_t v = op == TW_INT_ADD ? va + vb : op == TW_INT_SUB ? va - vb : va * vb;
                if (v < qmin) v = qmin;
                if (v > qmax) v = qmax;
                tw_int_store(out, out_bytes, o + i, v - out_off);
            }
        }
        o += last;
        tw_broadcast_next_row(idx, rank, out_dims, a_stride, b_stride, &ia, &ib);
    }
}

void tw_int_matmul(const void *a, int a_bytes, int32_t a_off, const int32_t *a_bstride,
                   const void *b, int b_bytes, int32_t b_off, const int32_t *b_bstride, void *y,
                   int y_bytes, int batch_rank, const int32_t *batch_dims, int32_t m, int32_t k,
                   int32_t n, const tw_int_rq_t *rq, int rq_per_column)
{
    int32_t idx[TW_INT_MAX_RANK];
    int32_t batches = 1, ia = 0, ib = 0, o = 0, r, c, j;
    int d;
    /* the shift requantization's constants as locals (tw_int_requant's reason: the stores
     * through y would make the compiler reload every field of *rq from L2 for each sum, ~400
     * cycles a sum on a PULP core), its arithmetic rq_shift's, tw_int_rq's shift mode */
    const int shift_rq = rq != NULL && rq->mode == TW_RQ_SHIFT;
    const int64_t zp = rq ? rq->zero_point : 0, qmin = rq ? rq->qmin : 0, qmax = rq ? rq->qmax : 0;
    int64_t mult = shift_rq ? rq->mult[0] : 0, lambda = shift_rq && rq->lambda ? rq->lambda[0] : 0;
    int shift = shift_rq ? (int)rq->shift[0] : 0;
    for (d = 0; d < batch_rank; d++) {
        idx[d] = 0;
        batches *= batch_dims[d];
    }
    while (batches-- > 0) {
        for (r = 0; r < m; r++) {
            for (c = 0; c < n; c++, o++) {
                int64_t acc = 0;
                if (a_bytes == 1 && b_bytes == 1 && k <= 32768) {
                    /* 8-bit codes: |x + off| <= 255, so k products of at most 255^2 fit int32 */
                    const int8_t *pa = (const int8_t *)a + ia + r * k, *pb = (const int8_t *)b + ib + c;
                    int32_t acc32 = 0;
                    for (j = 0; j < k; j++)
                        acc32 += ((int32_t)pa[j] + a_off) * ((int32_t)pb[j * n] + b_off);
                    acc = acc32;
                } else {
                    for (j = 0; j < k; j++)
                        acc += (tw_int_load(a, a_bytes, ia + r * k + j) + a_off)
                               * (tw_int_load(b, b_bytes, ib + j * n + c) + b_off);
                }
                if (shift_rq) {
                    if (rq_per_column) {
                        mult = rq->mult[c];
                        lambda = rq->lambda ? rq->lambda[c] : 0;
                        shift = (int)rq->shift[c];
                    }
                    acc = rq_shift(acc, mult, lambda, shift, zp, qmin, qmax);
                } else if (rq) {
                    acc = tw_int_rq(rq, acc, rq_per_column ? c : 0);
                }
                tw_int_store(y, y_bytes, o, acc);
            }
        }
        /* the next batch: an odometer over the batch dimensions */
        for (d = batch_rank - 1; d >= 0; d--) {
            ia += a_bstride[d];
            ib += b_bstride[d];
            if (++idx[d] < batch_dims[d]) break;
            ia -= idx[d] * a_bstride[d];
            ib -= idx[d] * b_bstride[d];
            idx[d] = 0;
        }
    }
}

void tw_int_reduce(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes,
                   int32_t y_off, int rank, const int32_t *dims, const int32_t *reduced, int mean)
{
    int32_t stride[TW_INT_MAX_RANK], kept[TW_INT_MAX_RANK], red[TW_INT_MAX_RANK];
    int32_t kdim[TW_INT_MAX_RANK], rdim[TW_INT_MAX_RANK], kidx[TW_INT_MAX_RANK];
    int32_t ridx[TW_INT_MAX_RANK];
    int32_t total = 1, outs = 1, count = 1, base = 0, o = 0, i;
    int d, nk = 0, nr = 0;
    for (d = rank - 1; d >= 0; d--) {
        stride[d] = total;
        total *= dims[d];
    }
    for (d = 0; d < rank; d++) {
        if (reduced[d]) {
            red[nr] = stride[d];
            rdim[nr] = dims[d];
            count *= dims[d];
            ridx[nr++] = 0;
        } else {
            kept[nk] = stride[d];
            kdim[nk] = dims[d];
            outs *= dims[d];
            kidx[nk++] = 0;
        }
    }
    for (o = 0; o < outs; o++) {
        int64_t s = 0;
        int32_t off = 0;
        for (i = 0; i < count; i++) {
            s += tw_int_load(x, x_bytes, base + off) + x_off;
            /* the next reduced element: an odometer over the reduced dimensions */
            for (d = nr - 1; d >= 0; d--) {
                off += red[d];
                if (++ridx[d] < rdim[d]) break;
                off -= ridx[d] * red[d];
                ridx[d] = 0;
            }
        }
        if (mean) {
            int64_t t = s + count / 2;
            s = t / count - ((t % count != 0 && t < 0) ? 1 : 0);
        }
        tw_int_store(y, y_bytes, o, s - y_off);
        /* the next output: an odometer over the kept dimensions */
        for (d = nk - 1; d >= 0; d--) {
            base += kept[d];
            if (++kidx[d] < kdim[d]) break;
            base -= kidx[d] * kept[d];
            kidx[d] = 0;
        }
    }
}

void tw_int_hardswish(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes,
                      int32_t y_off, int32_t n, int64_t three, int64_t six, int64_t one_over_six)
{
    int32_t i;
    for (i = 0; i < n; i++) {
        int64_t v = tw_int_load(x, x_bytes, i) + x_off;
        int64_t t = v + three;
        if (t < 0) t = 0;
        if (t > six) t = six;
        tw_int_store(y, y_bytes, i, v * (t * one_over_six) - y_off);
    }
}

/* Deeploy's integer exponential of d = v − max (≤ 0): a second-order polynomial on the
 * remainder p ∈ (−log2, 0], halved once per whole log2 below the maximum (at most 31 times). */
static inline int64_t int_exp(int64_t d, int64_t a, int64_t b, int64_t c, int64_t log2)
{
    int64_t z = (-d) / log2;
    int64_t p;
    if (z > 31) z = 31;
    p = d + z * log2;
    return (a * (p + b) * (p + b) + c) >> z;
}

void tw_int_softmax(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                    int32_t outer, int32_t len, int32_t inner, int64_t a, int64_t b, int64_t c,
                    int64_t log2, int64_t levels_m1)
{
    int32_t o, i, j;
    for (o = 0; o < outer; o++) {
        for (i = 0; i < inner; i++) {
            const int32_t base = o * len * inner + i;
            int64_t m = tw_int_load(x, x_bytes, base) + x_off, sum = 0;
            for (j = 1; j < len; j++) {
                int64_t v = tw_int_load(x, x_bytes, base + j * inner) + x_off;
                if (v > m) m = v;
            }
            /* the exponentials twice (sum, then outputs): no row buffer */
            for (j = 0; j < len; j++)
                sum += int_exp(tw_int_load(x, x_bytes, base + j * inner) + x_off - m, a, b, c, log2);
            for (j = 0; j < len; j++) {
                int64_t e = int_exp(tw_int_load(x, x_bytes, base + j * inner) + x_off - m, a, b, c, log2);
                tw_int_store(y, y_bytes, base + j * inner, e * levels_m1 / sum - y_off);
            }
        }
    }
}

int64_t tw_int_isqrt(int64_t s)
{
    int64_t r = 0, bit = (int64_t)1 << 60;
    while (bit > s) bit >>= 2;
    while (bit != 0) {
        if (s >= r + bit) {
            s -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

void tw_int_rms_norm(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                     int32_t outer, int32_t len, int32_t inner, const int32_t *weight, int log2d,
                     int64_t qmin, int64_t qmax)
{
    int32_t o, i, j;
    for (o = 0; o < outer; o++) {
        for (i = 0; i < inner; i++) {
            const int32_t base = o * len * inner + i;
            int64_t s = 0, r;
            for (j = 0; j < len; j++) {
                int64_t v = tw_int_load(x, x_bytes, base + j * inner) + x_off;
                s += v * v;
            }
            r = tw_int_isqrt(s / len + 1);
            for (j = 0; j < len; j++) {
                int64_t v = tw_int_load(x, x_bytes, base + j * inner) + x_off;
                int64_t q = tw_asr64(v * weight[j] / r, log2d);
                if (q < qmin) q = qmin;
                if (q > qmax) q = qmax;
                tw_int_store(y, y_bytes, base + j * inner, q - y_off);
            }
        }
    }
}

void tw_int_layer_norm(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                       int32_t outer, int32_t len, int32_t inner, const int32_t *weight,
                       const int32_t *bias, int log2d, int64_t qmin, int64_t qmax)
{
    int32_t o, i, j;
    for (o = 0; o < outer; o++) {
        for (i = 0; i < inner; i++) {
            const int32_t base = o * len * inner + i;
            int64_t mean = 0, s = 0, r;
            for (j = 0; j < len; j++)
                mean += tw_int_load(x, x_bytes, base + j * inner) + x_off;
            mean /= len;                                 /* C's division, as Deeploy's */
            for (j = 0; j < len; j++) {
                int64_t d = tw_int_load(x, x_bytes, base + j * inner) + x_off - mean;
                s += d * d;
            }
            r = tw_int_isqrt(s / len + 1);
            for (j = 0; j < len; j++) {
                int64_t d = tw_int_load(x, x_bytes, base + j * inner) + x_off - mean;
                int64_t q = tw_asr64(d * weight[j] / r + bias[j], log2d);
                if (q < qmin) q = qmin;
                if (q > qmax) q = qmax;
                tw_int_store(y, y_bytes, base + j * inner, q - y_off);
            }
        }
    }
}

void tw_int_gelu(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                 int32_t n, int64_t b, int64_t one)
{
    int32_t i;
    for (i = 0; i < n; i++) {
        int64_t v = tw_int_load(x, x_bytes, i) + x_off;
        int64_t q = v < 0 ? -v : v, l;
        if (q > -b) q = -b;
        l = one - (q + b) * (q + b);
        if (v < 0) l = -l;
        else if (v == 0) l = 0;
        tw_int_store(y, y_bytes, i, v * tw_asr64(one + l, 1) - y_off);
    }
}

void tw_int_ita_max(const void *x, int x_bytes, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                    int32_t outer, int32_t len, int32_t inner, int64_t levels_m1)
{
    int32_t o, i, j;
    for (o = 0; o < outer; o++) {
        for (i = 0; i < inner; i++) {
            const int32_t base = o * len * inner + i;
            int64_t m = tw_int_load(x, x_bytes, base) + x_off, sum = 0, inv;
            for (j = 1; j < len; j++) {
                int64_t v = tw_int_load(x, x_bytes, base + j * inner) + x_off;
                if (v > m) m = v;
            }
            /* the shifts twice (sum, then outputs): no row buffer */
            for (j = 0; j < len; j++)
                sum += (int64_t)256 >> ((m - (tw_int_load(x, x_bytes, base + j * inner) + x_off) + 16) >> 5);
            inv = levels_m1 * 256 / sum;
            for (j = 0; j < len; j++) {
                int64_t s = (m - (tw_int_load(x, x_bytes, base + j * inner) + x_off) + 16) >> 5;
                tw_int_store(y, y_bytes, base + j * inner, (inv >> s) - y_off);
            }
        }
    }
}
