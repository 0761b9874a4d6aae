/*
 * tw_matmul.c — 4x2 register-blocked int8 MatMul (see tw_matmul.h; seed 004 §3.3.3).
 */
#include "tw_matmul.h"

#include <stddef.h>

static inline int32_t acc_init(const tw_mm_sink_t *s, int pix, int k)
{
    if (s->flags & TW_ACC_FIRST)
        return s->bias ? s->bias[k] : 0;
    return s->psum[(size_t)pix * s->row + k];
}

static inline void acc_store(const tw_mm_sink_t *s, int pix, int k, int32_t acc)
{
    acc = tw_acc_wrap(acc, s->acc_bits);
    if (s->flags & TW_ACC_LAST)
        s->out[(size_t)pix * s->row + k] = tw_requant(s->rq, acc, k);
    else
        s->psum[(size_t)pix * s->row + k] = acc;
}

/* Two pixels: 4 channels x 2 pixels per iteration, then one channel at a time. */
static void matmul_2px(const int8_t *x0, const int8_t *x1, int p0, int p1,
                       const int8_t *w, int len, int k_begin, int k_end, const tw_mm_sink_t *s)
{
    int k = k_begin;
    int j;
    for (; k + 4 <= k_end; k += 4) {
        const int8_t *w0 = w + (size_t)k * len;
        const int8_t *w1 = w0 + len;
        const int8_t *w2 = w1 + len;
        const int8_t *w3 = w2 + len;
        /* aCP: output channel k+C, pixel P */
        int32_t a00 = acc_init(s, p0, k), a01 = acc_init(s, p1, k);
        int32_t a10 = acc_init(s, p0, k + 1), a11 = acc_init(s, p1, k + 1);
        int32_t a20 = acc_init(s, p0, k + 2), a21 = acc_init(s, p1, k + 2);
        int32_t a30 = acc_init(s, p0, k + 3), a31 = acc_init(s, p1, k + 3);
        for (j = 0; j < len; j++) {
            int32_t in0 = x0[j], in1 = x1[j];
            int32_t c0 = w0[j], c1 = w1[j], c2 = w2[j], c3 = w3[j];
            a00 += c0 * in0; a01 += c0 * in1;
            a10 += c1 * in0; a11 += c1 * in1;
            a20 += c2 * in0; a21 += c2 * in1;
            a30 += c3 * in0; a31 += c3 * in1;
        }
        acc_store(s, p0, k, a00);     acc_store(s, p1, k, a01);
        acc_store(s, p0, k + 1, a10); acc_store(s, p1, k + 1, a11);
        acc_store(s, p0, k + 2, a20); acc_store(s, p1, k + 2, a21);
        acc_store(s, p0, k + 3, a30); acc_store(s, p1, k + 3, a31);
    }
    for (; k < k_end; k++) {          /* leftover channels: 1x2 */
        const int8_t *wk = w + (size_t)k * len;
        int32_t a0 = acc_init(s, p0, k), a1 = acc_init(s, p1, k);
        for (j = 0; j < len; j++) {
            a0 += wk[j] * x0[j];
            a1 += wk[j] * x1[j];
        }
        acc_store(s, p0, k, a0);
        acc_store(s, p1, k, a1);
    }
}

/* One pixel (the odd one out): 4 channels per iteration, then one at a time. */
static void matmul_1px(const int8_t *x0, int p0, const int8_t *w, int len,
                       int k_begin, int k_end, const tw_mm_sink_t *s)
{
    int k = k_begin;
    int j;
    for (; k + 4 <= k_end; k += 4) {
        const int8_t *w0 = w + (size_t)k * len;
        const int8_t *w1 = w0 + len;
        const int8_t *w2 = w1 + len;
        const int8_t *w3 = w2 + len;
        int32_t a0 = acc_init(s, p0, k), a1 = acc_init(s, p0, k + 1);
        int32_t a2 = acc_init(s, p0, k + 2), a3 = acc_init(s, p0, k + 3);
        for (j = 0; j < len; j++) {
            int32_t in0 = x0[j];
            a0 += w0[j] * in0;
            a1 += w1[j] * in0;
            a2 += w2[j] * in0;
            a3 += w3[j] * in0;
        }
        acc_store(s, p0, k, a0);
        acc_store(s, p0, k + 1, a1);
        acc_store(s, p0, k + 2, a2);
        acc_store(s, p0, k + 3, a3);
    }
    for (; k < k_end; k++) {
        const int8_t *wk = w + (size_t)k * len;
        int32_t a0 = acc_init(s, p0, k);
        for (j = 0; j < len; j++)
            a0 += wk[j] * x0[j];
        acc_store(s, p0, k, a0);
    }
}

void tw_matmul_s8(const int8_t *col0, const int8_t *col1, int pix0, int pix1,
                  const int8_t *w, int len, int k_begin, int k_end, const tw_mm_sink_t *sink)
{
    if (col1)
        matmul_2px(col0, col1, pix0, pix1, w, len, k_begin, k_end, sink);
    else
        matmul_1px(col0, pix0, w, len, k_begin, k_end, sink);
}

void tw_matmul_fill_s8(int8_t value, int pix, const int8_t *w, int len, int k_begin, int k_end,
                       const tw_mm_sink_t *sink)
{
    int k, j;
    for (k = k_begin; k < k_end; k++) {
        const int8_t *wk = w + (size_t)k * len;
        int32_t a0 = acc_init(sink, pix, k);
        for (j = 0; j < len; j++)
            a0 += wk[j] * value;
        acc_store(sink, pix, k, a0);
    }
}
