/*
 * tw_pulp_rows.c — row streaming and the parallel transpose (tw_pulp_rows.h: contracts).
 */
#include "tw_pulp_rows.h"

#include "tw_hal.h"
#include "tw_pulp_common.h"

#define ROUND4(v) (((v) + 3) & ~3)

static tw_dma_id_t rows_in(const tw_pulp_rows_t *r, int8_t *buf, int32_t b)
{
    int32_t r0 = b * r->block, n = r->rows - r0 < r->block ? r->rows - r0 : r->block;
    return tw_dma_copy_1d(buf, (void *)(r->x + r0 * r->x_row_bytes), (uint32_t)(n * r->x_row_bytes),
                          TW_DMA_L2_TO_L1);
}

static tw_dma_id_t rows_out(const tw_pulp_rows_t *r, int8_t *buf, int32_t b)
{
    int32_t r0 = b * r->block, n = r->rows - r0 < r->block ? r->rows - r0 : r->block;
    return tw_dma_copy_1d(buf, r->y + r0 * r->y_row_bytes, (uint32_t)(n * r->y_row_bytes),
                          TW_DMA_L1_TO_L2);
}

static void rows_body(void *arg)
{
    const tw_pulp_rows_t *r = (const tw_pulp_rows_t *)arg;
    const int core = tw_core_id(), cores = tw_core_count();
    const int32_t xb = ROUND4(r->block * r->x_row_bytes), yb = ROUND4(r->block * r->y_row_bytes);
    int8_t *const xbuf[2] = {r->l1, r->l1 + xb};
    int8_t *const ybuf[2] = {r->l1 + 2 * xb, r->l1 + 2 * xb + yb};
    const int32_t blocks = (r->rows + r->block - 1) / r->block;
    tw_dma_id_t in_id[2] = {0, 0}, out_id[2] = {0, 0};
    int32_t b;
    if (core == 0) in_id[0] = rows_in(r, xbuf[0], 0);
    for (b = 0; b < blocks; b++) {
        const int cur = b & 1;
        const int32_t n = r->rows - b * r->block < r->block ? r->rows - b * r->block : r->block;
        int i0, i1;
        if (core == 0) {
            tw_dma_wait(in_id[cur]);
            if (out_id[cur]) {           /* block b - 2's output has left this buffer */
                tw_dma_wait(out_id[cur]);
                out_id[cur] = 0;
            }
            if (b + 1 < blocks) in_id[cur ^ 1] = rows_in(r, xbuf[cur ^ 1], b + 1);
        }
        tw_barrier();
        tw_pulp_share((int)n, core, cores, &i0, &i1);
        if (i1 > i0)
            r->fn(r->ctx, xbuf[cur] + i0 * r->x_row_bytes, ybuf[cur] + i0 * r->y_row_bytes, i1 - i0);
        tw_barrier();
        if (core == 0) out_id[cur] = rows_out(r, ybuf[cur], b);
    }
    if (core == 0) {
        if (out_id[0]) tw_dma_wait(out_id[0]);
        if (out_id[1]) tw_dma_wait(out_id[1]);
    }
}

void tw_pulp_rows(const tw_pulp_rows_t *r, int cores)
{
    if (r->rows > 0) tw_fork(cores, rows_body, (void *)r);
}

/* output rows [r0, r1) (every dim but the last) of the permutation, from x into y (L1) */
#define TW_PULP_PERMUTE(T)                                                                      \
    do {                                                                                        \
        const T *xs = (const T *)x;                                                             \
        T *yo = (T *)y + r0 * last;                                                             \
        for (row = r0; row < r1; row++) {                                                       \
            const T *xp = xs + src;                                                             \
            for (i = 0; i < last; i++) yo[i] = xp[i * step];                                    \
            yo += last;                                                                         \
            for (d = rank - 2; d >= 0; d--) {                                                   \
                src += t->in_stride[d];                                                         \
                if (++idx[d] < t->out_dims[d]) break;                                           \
                src -= idx[d] * t->in_stride[d];                                                \
                idx[d] = 0;                                                                     \
            }                                                                                   \
        }                                                                                       \
    } while (0)

static void permute(const tw_pulp_transpose_t *t, const int8_t *x, int8_t *y, int32_t r0, int32_t r1)
{
    int32_t idx[TW_PULP_TRANSPOSE_MAX_RANK];
    const int rank = t->rank;
    const int32_t last = t->out_dims[rank - 1], step = t->in_stride[rank - 1];
    int32_t src = 0, rem = r0, row, i;
    int d;
    /* the odometer at row r0 */
    for (d = rank - 2; d >= 0; d--) {
        idx[d] = rem % t->out_dims[d];
        rem /= t->out_dims[d];
        src += idx[d] * t->in_stride[d];
    }
    if (t->elem_bytes == 1) TW_PULP_PERMUTE(int8_t);
    else if (t->elem_bytes == 2) TW_PULP_PERMUTE(int16_t);
    else TW_PULP_PERMUTE(int32_t);
}

static void transpose_body(void *arg)
{
    const tw_pulp_transpose_t *t = (const tw_pulp_transpose_t *)arg;
    const int core = tw_core_id(), cores = tw_core_count();
    const int32_t bytes = t->n * t->elem_bytes;
    int8_t *const yl1 = t->l1 + ROUND4(bytes);
    int32_t rows = 1;
    int d, r0, r1;
    for (d = 0; d < t->rank - 1; d++) rows *= t->out_dims[d];
    if (core == 0) tw_dma_wait(tw_dma_copy_1d(t->l1, (void *)t->x, (uint32_t)bytes, TW_DMA_L2_TO_L1));
    tw_barrier();
    tw_pulp_share((int)rows, core, cores, &r0, &r1);
    if (r1 > r0) permute(t, t->l1, yl1, r0, r1);
    tw_barrier();
    if (core == 0) tw_dma_wait(tw_dma_copy_1d(yl1, t->y, (uint32_t)bytes, TW_DMA_L1_TO_L2));
}

void tw_pulp_transpose(const tw_pulp_transpose_t *t, int cores)
{
    if (t->n > 0) tw_fork(cores, transpose_body, (void *)t);
}

static void reduce_body(void *arg)
{
    const tw_pulp_reduce_t *r = (const tw_pulp_reduce_t *)arg;
    const int core = tw_core_id(), cores = tw_core_count();
    const int32_t in_bytes = r->outer * r->count * r->inner * r->x_bytes;
    const int32_t outs = r->outer * r->inner;
    int8_t *const yl1 = r->l1 + ROUND4(in_bytes);
    int o0, o1, o;
    if (core == 0) tw_dma_wait(tw_dma_copy_1d(r->l1, (void *)r->x, (uint32_t)in_bytes, TW_DMA_L2_TO_L1));
    tw_barrier();
    tw_pulp_share((int)outs, core, cores, &o0, &o1);
    for (o = o0; o < o1; o++) {
        const int32_t oo = o / r->inner, ii = o % r->inner;
        const int32_t base = oo * r->count * r->inner + ii;
        int64_t s = 0;
        int32_t i;
        for (i = 0; i < r->count; i++) s += tw_int_load(r->l1, r->x_bytes, base + i * r->inner) + r->x_off;
        if (r->mean) {              /* tw_int_reduce's rounding: floor((s + count/2) / count) */
            int64_t t = s + r->count / 2, q = tw_pulp_div(t, r->count);
            s = q - ((t - q * r->count != 0 && t < 0) ? 1 : 0);
        }
        tw_int_store(yl1, r->y_bytes, o, s - r->y_off);
    }
    tw_barrier();
    if (core == 0)
        tw_dma_wait(tw_dma_copy_1d(yl1, r->y, (uint32_t)(outs * r->y_bytes), TW_DMA_L1_TO_L2));
}

void tw_pulp_reduce(const tw_pulp_reduce_t *r, int cores)
{
    if (r->outer * r->inner > 0) tw_fork(cores, reduce_body, (void *)r);
}

/* ---- row kernels (tw_pulp_rows.h ROW KERNELS; tw_int.c's loops, int8 in, 32-bit divisions) ---- */

static inline int64_t clamp64(int64_t q, int64_t lo, int64_t hi)
{
    return q < lo ? lo : q > hi ? hi : q;
}

static inline int32_t asr32(int32_t v, int n)
{
    return v < 0 ? ~(~v >> n) : v >> n;
}

/* max |a[j]| over j < n (as int64) */
static int64_t max_abs(const int32_t *a, int32_t n)
{
    int64_t m = 0;
    int32_t j;
    for (j = 0; j < n; j++) {
        int64_t v = a[j] < 0 ? -(int64_t)a[j] : a[j];
        if (v > m) m = v;
    }
    return m;
}

/* The norms' last loop in 32 bits: every |d| (8-bit values and their mean: at most 255) times
 * every |weight| over r ≥ 1, plus every |bias|, below 2^31; r below 2^31; the shift and the clamp
 * bounds within int32. Then d·w / r + b, its shift and its clamp are the same integers in int32
 * as in int64. */
static int norm_fits32(const int32_t *weight, const int32_t *bias, int32_t len, int log2d,
                       int64_t qmin, int64_t qmax)
{
    int64_t bound = 255 * max_abs(weight, len) + (bias ? max_abs(bias, len) : 0);
    return bound < ((int64_t)1 << 31) && log2d >= 0 && log2d < 32 && qmin >= INT32_MIN &&
           qmax <= INT32_MAX;
}

void tw_pulp_layer_norm_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                             int32_t n, int32_t len, const int32_t *weight, const int32_t *bias,
                             int log2d, int64_t qmin, int64_t qmax)
{
    const int fast = norm_fits32(weight, bias, len, log2d, qmin, qmax);
    int32_t o, j;
    for (o = 0; o < n; o++) {
        const int8_t *xr = x + o * len;
        const int32_t base = o * len;
        int64_t mean = 0, s = 0, r;
        for (j = 0; j < len; j++) mean += xr[j] + x_off;
        mean = tw_pulp_div(mean, len);               /* C's division, as Deeploy's */
        for (j = 0; j < len; j++) {
            int64_t d = xr[j] + x_off - mean;
            s += d * d;
        }
        r = tw_int_isqrt(tw_pulp_div(s, len) + 1);
        if (fast && r <= INT32_MAX) {
            const int32_t m32 = (int32_t)mean - x_off, r32 = (int32_t)r, lo = (int32_t)qmin,
                          hi = (int32_t)qmax;
            for (j = 0; j < len; j++) {
                int32_t q = asr32((xr[j] - m32) * weight[j] / r32 + bias[j], log2d);
                q = q < lo ? lo : q > hi ? hi : q;
                tw_int_store(y, y_bytes, base + j, (int64_t)q - y_off);
            }
            continue;
        }
        for (j = 0; j < len; j++) {
            int64_t d = xr[j] + x_off - mean;
            int64_t q = clamp64(tw_asr64(tw_pulp_div(d * weight[j], r) + bias[j], log2d), qmin, qmax);
            tw_int_store(y, y_bytes, base + j, q - y_off);
        }
    }
}

void tw_pulp_rms_norm_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                           int32_t n, int32_t len, const int32_t *weight, int log2d, int64_t qmin,
                           int64_t qmax)
{
    const int fast = norm_fits32(weight, NULL, len, log2d, qmin, qmax);
    int32_t o, j;
    for (o = 0; o < n; o++) {
        const int8_t *xr = x + o * len;
        const int32_t base = o * len;
        int64_t s = 0, r;
        for (j = 0; j < len; j++) {
            int64_t v = xr[j] + x_off;
            s += v * v;
        }
        r = tw_int_isqrt(tw_pulp_div(s, len) + 1);
        if (fast && r <= INT32_MAX) {
            const int32_t r32 = (int32_t)r, lo = (int32_t)qmin, hi = (int32_t)qmax;
            for (j = 0; j < len; j++) {
                int32_t q = asr32((xr[j] + x_off) * weight[j] / r32, log2d);
                q = q < lo ? lo : q > hi ? hi : q;
                tw_int_store(y, y_bytes, base + j, (int64_t)q - y_off);
            }
            continue;
        }
        for (j = 0; j < len; j++) {
            int64_t v = xr[j] + x_off;
            int64_t q = clamp64(tw_asr64(tw_pulp_div(v * weight[j], r), log2d), qmin, qmax);
            tw_int_store(y, y_bytes, base + j, q - y_off);
        }
    }
}

/* tw_int.c's int_exp: Deeploy's integer exponential of d = v − max (≤ 0) */
static inline int64_t pulp_exp(int64_t d, int64_t a, int64_t b, int64_t c, int64_t log2)
{
    int64_t z = tw_pulp_div(-d, log2);
    int64_t p;
    if (z > 31) z = 31;
    p = d + z * log2;
    return (a * (p + b) * (p + b) + c) >> z;
}

void tw_pulp_softmax_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                          int32_t n, int32_t len, int64_t a, int64_t b, int64_t c, int64_t log2,
                          int64_t levels_m1)
{
    int32_t o, j;
    for (o = 0; o < n; o++) {
        const int8_t *xr = x + o * len;
        const int32_t base = o * len;
        int64_t m = xr[0] + x_off, sum = 0;
        for (j = 1; j < len; j++) {
            int64_t v = xr[j] + x_off;
            if (v > m) m = v;
        }
        for (j = 0; j < len; j++) sum += pulp_exp(xr[j] + x_off - m, a, b, c, log2);
        for (j = 0; j < len; j++) {
            int64_t e = pulp_exp(xr[j] + x_off - m, a, b, c, log2);
            tw_int_store(y, y_bytes, base + j, tw_pulp_div(e * levels_m1, sum) - y_off);
        }
    }
}

void tw_pulp_ita_max_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                          int32_t n, int32_t len, int64_t levels_m1)
{
    int32_t o, j;
    for (o = 0; o < n; o++) {
        const int8_t *xr = x + o * len;
        const int32_t base = o * len;
        int32_t m = xr[0] + x_off;
        int64_t sum = 0, inv;
        for (j = 1; j < len; j++) {
            int32_t v = xr[j] + x_off;
            if (v > m) m = v;
        }
        /* 8-bit values: m − v + 16 ≤ 271, shifts ≤ 8 */
        for (j = 0; j < len; j++) sum += 256 >> ((m - (xr[j] + x_off) + 16) >> 5);
        inv = tw_pulp_div(levels_m1 * 256, sum);
        for (j = 0; j < len; j++) {
            int32_t s = (m - (xr[j] + x_off) + 16) >> 5;
            tw_int_store(y, y_bytes, base + j, (inv >> s) - y_off);
        }
    }
}

void tw_pulp_gelu_rows(const int8_t *x, int32_t x_off, void *y, int y_bytes, int32_t y_off,
                       int32_t count, int64_t b, int64_t one)
{
    int32_t i;
    for (i = 0; i < count; i++) {
        int64_t v = x[i] + x_off;
        int64_t q = v < 0 ? -v : v, l;
        if (q > -b) q = -b;
        l = one - (q + b) * (q + b);
        if (v < 0) l = -l;
        else if (v == 0) l = 0;
        tw_int_store(y, y_bytes, i, v * tw_asr64(one + l, 1) - y_off);
    }
}
