/*
 * tw_ne16_kernels.c — the cluster's side of an NE16 layer (contract in tw_ne16_kernels.h).
 */
#include "tw_ne16_kernels.h"

#include <stddef.h>

void tw_ne16_to_u8(uint8_t *u, const int8_t *x, int n)
{
    int i = 0;
    if ((((uintptr_t)u | (uintptr_t)x) & 3u) == 0) {
        /* a word at a time: one lw, xor, sw (tw_pulp_lw / tw_pulp_sw: one instruction each on
         * the cluster, memcpy on Arm, bytes on the host) */
        for (; i + 4 <= n; i += 4)
            tw_pulp_sw((int8_t *)(void *)(u + i), tw_pulp_lw(x + i) ^ 0x80808080u);
    }
    for (; i < n; i++)
        u[i] = (uint8_t)((uint8_t)x[i] ^ 0x80u);
}

void tw_ne16_to_u8_part(uint8_t *u, const int8_t *x, int n, int core_id, int n_cores)
{
    /* word-aligned cuts, so that each core's part keeps the word path */
    int lo = (int)((long)n * core_id / n_cores) & ~3;
    int hi = core_id + 1 == n_cores ? n : (int)((long)n * (core_id + 1) / n_cores) & ~3;
    if (hi > lo)
        tw_ne16_to_u8(u + lo, x + lo, hi - lo);
}

void tw_ne16_to_u8_pad_part(uint8_t *u, const int8_t *x, int in_h, int in_w, int in_c,
                            int pad_b, int pad_r, uint8_t pad_value, int core_id, int n_cores)
{
    const int row = in_w * in_c, prow = (in_w + pad_r) * in_c, rows = in_h + pad_b;
    int r;
    for (r = core_id; r < rows; r += n_cores) {
        uint8_t *ur = u + (size_t)r * (size_t)prow;
        int i = 0;
        if (r < in_h) {
            tw_ne16_to_u8(ur, x + (size_t)r * (size_t)row, row);
            i = row;
        }
        for (; i < prow; i++)
            ur[i] = pad_value;
    }
}

/* acc + bias modulo 2^32 (the layer's accumulator). */
TW_PULP_INLINE int32_t acc_of(const int32_t *acc, const int32_t *bias, int j)
{
    return (int32_t)((uint32_t)acc[j] + (uint32_t)bias[j]);
}

/* Channels [k0, k0 + n) of one pixel: acc, bias and words read in order (w at channel k0), four
 * outputs per store (tw_pulp_rq4: the Arm build clamps them four lanes at a time). */
TW_PULP_INLINE void requant_run(const int32_t *acc, const int32_t *bias, const int32_t *w,
                                int8_t *out, int n, const tw_pulp_clip_t *clip, const int mode)
{
    int j;
    for (j = 0; j + 4 <= n; j += 4, w += 16)
        tw_pulp_sw(out + j, tw_pulp_rq4(w, clip, acc_of(acc, bias, j), acc_of(acc, bias, j + 1),
                                        acc_of(acc, bias, j + 2), acc_of(acc, bias, j + 3),
                                        mode));
    for (; j < n; j++, w += 4) {
        tw_pulp_rqch_t c = tw_pulp_rq_channel(w, 1, 0);
        out[j] = tw_pulp_rq(&c, clip, acc_of(acc, bias, j), mode);
    }
}

/* The core's equal run of the n·k outputs [begin, end), walked pixel by pixel: the rest of the
 * first pixel's channels, whole pixels, the first channels of the last one. */
TW_PULP_INLINE void requant(const tw_ne16_rq_args_t *a, int core, int cores, const int mode)
{
    tw_pulp_clip_t clip = tw_pulp_clip(a->rq.qmin, a->rq.qmax, a->rq.zero_point);
    const int32_t *const acc = a->acc, *const bias = a->bias, *const words = a->rq.words;
    int8_t *const out = a->out;
    const int k = a->k, total = a->n * a->k;
    int i = (int)((long)total * core / cores), end = (int)((long)total * (core + 1) / cores);
    int ch = i % k;
    while (i < end) {
        int run = k - ch < end - i ? k - ch : end - i;
        requant_run(acc + i, bias + ch, words + 4 * ch, out + i, run, &clip, mode);
        i += run;
        ch = 0;
    }
}

#define TW_NE16_RQ_DEF(name, mode)                                                            \
    void tw_ne16_requant_s8_##name(const tw_ne16_rq_args_t *a, int core_id, int n_cores)       \
    {                                                                                         \
        requant(a, core_id, n_cores, mode);                                                   \
    }

TW_PULP_VARIANTS(TW_NE16_RQ_DEF)

/* The MultiplyByQuantizedMultiplier of TFLite (double rounding) in one mulh per output, exact
 * under the bounds of tw_ne16_kernels.h (bindings/ne16/requant.py proves them per layer): with
 * x = acc · 2^(left + 2), p = mulh(x, m0) = floor(acc · 2^left · m0 / 2^30), so SRDHM =
 * floor((p + 1) / 2) (2^30 · 2^(left+2) is a whole multiple of 2^32), and with the right shift
 * e ≥ 1 RoundingDivideByPOT(SRDHM, e) = (p + 1 + 2^e - 2·[p < 0]) >> (e + 1) (the tie
 * adjustment of a negative SRDHM, which p = -1 does not change); e = 0: (p + 1) >> 1. The zero
 * point joins the sum as zp · 2^(e+1), so the output is that shifted sum clamped to [qmin, qmax].
 * The words are the pulp kernels' (tw_pulp_requant.h): tflite (m0, left, e, mask), tflite_right
 * (m0, 2^(e-1), e, 0). */
typedef struct {
    int32_t m0, bias, up, add, neg, sh;
} mulh_ch_t;

TW_PULP_INLINE mulh_ch_t mulh_channel(const tw_ne16_rq_args_t *a, int ch, const int right)
{
    const int32_t *w = a->rq.words + 4 * ch;
    mulh_ch_t c;
    c.m0 = w[0];
    c.bias = a->bias[ch];
    c.up = (right ? 0 : w[1]) + 2;
    c.sh = w[2] + 1;
    c.add = (int32_t)((w[2] ? 1u + ((uint32_t)1 << w[2]) : 1u)
                      + ((uint32_t)a->rq.zero_point << c.sh));
    c.neg = right || w[2] ? -2 : 0;
    return c;
}

TW_PULP_INLINE int8_t mulh_one(const mulh_ch_t *c, int32_t acc, int32_t lo, int32_t hi,
                               const int right)
{
    int32_t q = tw_pulp_mulh((int32_t)(((uint32_t)acc + (uint32_t)c->bias) << c->up), c->m0);
    int32_t s = right ? (tw_pulp_asr(q, 31) & -2) : (tw_pulp_asr(q, 31) & c->neg);
    return (int8_t)tw_pulp_clamp(tw_pulp_asr(q + c->add + s, c->sh), lo, hi);
}

/* The outputs channel by channel (two at a time: their words and bias in registers, one
 * pointer step per pair), over the pixels of the core's share — or, with fewer pixels than
 * cores or a better balance, over all pixels for its share of the channels. */
TW_PULP_INLINE void requant_mulh(const tw_ne16_rq_args_t *a, int core, int cores, const int right)
{
    const int32_t lo = a->rq.qmin, hi = a->rq.qmax;
    const int k = a->k, n = a->n;
    const int by_pixel = (n + cores - 1) / cores * k <= (k + cores - 1) / cores * n;
    const int p0 = by_pixel ? (int)((long)n * core / cores) : 0;
    const int p1 = by_pixel ? (int)((long)n * (core + 1) / cores) : n;
    const int k0 = by_pixel ? 0 : (int)((long)k * core / cores);
    const int k1 = by_pixel ? k : (int)((long)k * (core + 1) / cores);
    int ch = k0, p;
    for (; ch + 2 <= k1; ch += 2) {
        const mulh_ch_t c0 = mulh_channel(a, ch, right), c1 = mulh_channel(a, ch + 1, right);
        const int32_t *acc = a->acc + (size_t)p0 * (size_t)k + (size_t)ch;
        int8_t *out = a->out + (size_t)p0 * (size_t)k + (size_t)ch;
        for (p = p0; p < p1; p++, acc += k, out += k) {
            out[0] = mulh_one(&c0, acc[0], lo, hi, right);
            out[1] = mulh_one(&c1, acc[1], lo, hi, right);
        }
    }
    if (ch < k1) {
        const mulh_ch_t c0 = mulh_channel(a, ch, right);
        const int32_t *acc = a->acc + (size_t)p0 * (size_t)k + (size_t)ch;
        int8_t *out = a->out + (size_t)p0 * (size_t)k + (size_t)ch;
        for (p = p0; p < p1; p++, acc += k, out += k)
            *out = mulh_one(&c0, *acc, lo, hi, right);
    }
}

void tw_ne16_requant_s8_mulh_tflite(const tw_ne16_rq_args_t *a, int core_id, int n_cores)
{
    requant_mulh(a, core_id, n_cores, 0);
}

void tw_ne16_requant_s8_mulh_tflite_right(const tw_ne16_rq_args_t *a, int core_id, int n_cores)
{
    requant_mulh(a, core_id, n_cores, 1);
}
