/*
 * tw_pulp_pool.c — int8 max / average / global average pooling with channel SIMD (contract in
 * tw_pulp_pool.h; seed 004 §3.3.1: "the SIMD max4 built-in ... optimize the max-pooling kernel").
 */
#include "tw_pulp_pool.h"

#include "tw_pulp_common.h"
#include "tw_pulp_requant.h"

/* one-hot words: pv.sdotsp.b with E[i] adds lane i */
#define E0 0x00000001u
#define E1 0x00000100u
#define E2 0x00010000u
#define E3 0x01000000u

/* Windows of more taps than this divide instead of multiplying (tw_pulp_pool.h). */
#define RECIPROCAL_MAX_TAPS 5780

/* TFLite's rounded division sum / n (half away from zero, C division's truncation) by the
 * multiplier m of n (0: divide). */
static int32_t rounded_div(int32_t sum, int32_t n, uint32_t m)
{
    uint32_t big = (sum < 0 ? 0u - (uint32_t)sum : (uint32_t)sum) + (uint32_t)(n >> 1), q;
    if (n <= 0)
        return 0;
    q = n == 1 ? big : (m ? tw_pulp_mulhu(big, m) : big / (uint32_t)n);
    return (int32_t)(sum < 0 ? 0u - q : q);
}

static uint32_t reciprocal(int32_t n)
{
    return n >= 2 && n <= RECIPROCAL_MAX_TAPS ? 0xFFFFFFFFu / (uint32_t)n + 1u : 0u;
}

/* One output pixel's window clipped to the tile: rows [y[0], y[1]), columns [x[0], x[1]). */
static void window(const tw_window_t *g, int oy, int ox, int y[2], int x[2])
{
    int top = oy * g->s_h - g->pad_t, left = ox * g->s_w - g->pad_l;
    y[0] = tw_pulp_max(top, 0);
    y[1] = tw_pulp_min(top + g->k_h, g->in_h);
    x[0] = tw_pulp_max(left, 0);
    x[1] = tw_pulp_min(left + g->k_w, g->in_w);
}

/* Channels [c0, c1) of output pixel p: the max of the valid taps. */
static void max_pixel(const tw_pool_args_t *a, const int y[2], const int x[2], int8_t *out,
                      int c0, int c1)
{
    const tw_window_t *g = &a->win;
    tw_v4_t lo = (uint8_t)a->qmin * 0x01010101u, hi = (uint8_t)a->qmax * 0x01010101u;
    int c = c0, iy, ix;
    for (; c + 4 <= c1; c += 4) {
        tw_v4_t m = 0x80808080u;
        for (iy = y[0]; iy < y[1]; iy++) {
            const int8_t *px = a->in + ((size_t)iy * g->in_w + x[0]) * a->c + c;
            for (ix = x[0]; ix < x[1]; ix++, px += a->c)
                m = tw_pulp_max4(m, tw_pulp_lw(px));
        }
        tw_pulp_sw(out + c, tw_pulp_min4(tw_pulp_max4(m, lo), hi));
    }
    for (; c < c1; c++) {
        int32_t m = -128;
        for (iy = y[0]; iy < y[1]; iy++)
            for (ix = x[0]; ix < x[1]; ix++)
                m = tw_pulp_max(m, a->in[((size_t)iy * g->in_w + ix) * a->c + c]);
        out[c] = (int8_t)tw_pulp_clamp(m, a->qmin, a->qmax);
    }
}

/* Channels [c0, c1) of output pixel p: the rounded average of the valid taps. */
static void avg_pixel(const tw_pool_args_t *a, const int y[2], const int x[2], int8_t *out,
                      int c0, int c1, int32_t n, uint32_t m)
{
    const tw_window_t *g = &a->win;
    int c = c0, iy, ix;
    for (; c + 4 <= c1; c += 4) {
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (iy = y[0]; iy < y[1]; iy++) {
            const int8_t *px = a->in + ((size_t)iy * g->in_w + x[0]) * a->c + c;
            for (ix = x[0]; ix < x[1]; ix++, px += a->c) {
                tw_v4_t v = tw_pulp_lw(px);
                s0 = tw_pulp_sdotp4(s0, v, E0);
                s1 = tw_pulp_sdotp4(s1, v, E1);
                s2 = tw_pulp_sdotp4(s2, v, E2);
                s3 = tw_pulp_sdotp4(s3, v, E3);
            }
        }
        out[c] = (int8_t)tw_pulp_clamp(rounded_div(s0, n, m), a->qmin, a->qmax);
        out[c + 1] = (int8_t)tw_pulp_clamp(rounded_div(s1, n, m), a->qmin, a->qmax);
        out[c + 2] = (int8_t)tw_pulp_clamp(rounded_div(s2, n, m), a->qmin, a->qmax);
        out[c + 3] = (int8_t)tw_pulp_clamp(rounded_div(s3, n, m), a->qmin, a->qmax);
    }
    for (; c < c1; c++) {
        int32_t s = 0;
        for (iy = y[0]; iy < y[1]; iy++)
            for (ix = x[0]; ix < x[1]; ix++)
                s += a->in[((size_t)iy * g->in_w + ix) * a->c + c];
        out[c] = (int8_t)tw_pulp_clamp(rounded_div(s, n, m), a->qmin, a->qmax);
    }
}

/* The tile's (output pixel, channel group) items, this core's run (tw_pulp_common.h). */
TW_PULP_INLINE void pool_tile(const tw_pool_args_t *a, int core, int cores, const int avg)
{
    const tw_window_t *g = &a->win;
    int pixels = g->out_h * g->out_w, blocks = (a->c + 3) >> 2;
    int groups = tw_pulp_groups(pixels, blocks, cores);
    int begin, end, it, p, grp, oy, ox, y[2], x[2], n = 0;
    uint32_t m = 0;

    tw_pulp_share(pixels * groups, core, cores, &begin, &end);
    p = begin / groups;
    grp = begin - p * groups;
    oy = p / g->out_w;
    ox = p - oy * g->out_w;
    for (it = begin; it < end; it++) {
        int b0, b1, c1;
        tw_pulp_group_blocks(blocks, grp, groups, &b0, &b1);
        c1 = 4 * b1 < a->c ? 4 * b1 : a->c;
        window(g, oy, ox, y, x);
        if (avg) {
            int32_t taps = (y[1] - y[0]) * (x[1] - x[0]);
            if (taps != n) {
                n = taps;
                m = reciprocal(n);
            }
            avg_pixel(a, y, x, a->out + (size_t)p * a->c, 4 * b0, c1, n, m);
        } else {
            max_pixel(a, y, x, a->out + (size_t)p * a->c, 4 * b0, c1);
        }
        if (++grp == groups) {
            grp = 0;
            p++;
            if (++ox == g->out_w) {
                ox = 0;
                oy++;
            }
        }
    }
}

void tw_pulp_maxpool_s8(const tw_pool_args_t *a, int core_id, int n_cores)
{
    pool_tile(a, core_id, n_cores, 0);
}

void tw_pulp_avgpool_s8(const tw_pool_args_t *a, int core_id, int n_cores)
{
    pool_tile(a, core_id, n_cores, 1);
}

/* The sums over `pixels` pixels (`stride` bytes apart) of the 4 channels at in. */
static void sum4(const int8_t *in, int pixels, int stride, int32_t s[4])
{
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int pairs = pixels >> 1;
#if TW_PULP_ASM
    if (pairs > 0) {
        tw_v4_t v0, v1;
        uint32_t e0 = E0, e1 = E1, e2 = E2, e3 = E3;
        __asm__ volatile(
            TW_PULP_LOOP(20)   /* a body of 10 */
            TW_PULP_P_LW_RR("%[v0]", "%[p]", "%[st]") TW_PULP_P_LW_RR("%[v1]", "%[p]", "%[st]")
            TW_PULP_SDOTP("%[s0]", "%[v0]", "%[e0]") TW_PULP_SDOTP("%[s1]", "%[v0]", "%[e1]")
            TW_PULP_SDOTP("%[s2]", "%[v0]", "%[e2]") TW_PULP_SDOTP("%[s3]", "%[v0]", "%[e3]")
            TW_PULP_SDOTP("%[s0]", "%[v1]", "%[e0]") TW_PULP_SDOTP("%[s1]", "%[v1]", "%[e1]")
            TW_PULP_SDOTP("%[s2]", "%[v1]", "%[e2]") TW_PULP_SDOTP("%[s3]", "%[v1]", "%[e3]")
            TW_PULP_LOOP_END
            : [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [p] "+r"(in),
              [v0] "=&r"(v0), [v1] "=&r"(v1)
            : [n] "r"(pairs), [st] "r"(stride), [e0] "r"(e0), [e1] "r"(e1), [e2] "r"(e2),
              [e3] "r"(e3)
            : "memory");
    }
#else
    int i;
    for (i = 0; i < 2 * pairs; i++, in += stride) {
        tw_v4_t v = tw_pulp_lw(in);
        s0 = tw_pulp_sdotp4(s0, v, E0);
        s1 = tw_pulp_sdotp4(s1, v, E1);
        s2 = tw_pulp_sdotp4(s2, v, E2);
        s3 = tw_pulp_sdotp4(s3, v, E3);
    }
#endif
    if (pixels & 1) {
        tw_v4_t v = tw_pulp_lw(in);
        s0 = tw_pulp_sdotp4(s0, v, E0);
        s1 = tw_pulp_sdotp4(s1, v, E1);
        s2 = tw_pulp_sdotp4(s2, v, E2);
        s3 = tw_pulp_sdotp4(s3, v, E3);
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
}

/* What both global pools share: the input, its running sums and the output. */
typedef struct {
    const int8_t *in;
    int pixels, c;
    int32_t *acc;
    int flags;
    int32_t in_zp;
    int8_t *out;
} global_t;

/* Global pooling of this core's channels: 4-channel blocks (tw_pulp_common.h), the sums of
 * x - in_zp continued from acc unless TW_ACC_FIRST, written back unless TW_ACC_LAST; on the last
 * tile each channel's output is the requantization `words` of `mode` (one set for every channel),
 * the rounded division by `divisor` (1: none) and the clamp. */
TW_PULP_INLINE void global_pool(const global_t *g, int core, int cores,
                                const tw_pulp_rqch_t *words, int divisor,
                                const tw_pulp_clip_t *clip, const int mode)
{
    int blocks = (g->c + 3) >> 2, b0, b1, c, c1, j;
    uint32_t m = reciprocal(divisor);
    int32_t offset = g->pixels * g->in_zp;

    tw_pulp_share(blocks, core, cores, &b0, &b1);
    c1 = 4 * b1 < g->c ? 4 * b1 : g->c;
    for (c = 4 * b0; c < c1; c += 4) {
        int32_t s[4] = {0, 0, 0, 0};
        int n = c1 - c < 4 ? c1 - c : 4;
        if (n == 4) {
            sum4(g->in + c, g->pixels, g->c, s);
        } else {
            for (j = 0; j < n; j++) {
                const int8_t *px = g->in + c + j;
                int i;
                for (i = 0; i < g->pixels; i++)
                    s[j] += tw_pulp_lb_step(&px, g->c);
            }
        }
        for (j = 0; j < n; j++) {
            int32_t acc = s[j] - offset + ((g->flags & TW_ACC_FIRST) ? 0 : g->acc[c + j]);
            if (!(g->flags & TW_ACC_LAST)) {
                g->acc[c + j] = acc;
            } else {
                int32_t r = rounded_div(tw_pulp_rq_raw(words, acc, mode), divisor, m);
                g->out[c + j] = (int8_t)(tw_pulp_clamp(r, clip->lo, clip->hi) + clip->zp);
            }
        }
    }
}

void tw_pulp_global_avgpool_s8(const tw_gap_args_t *a, int core_id, int n_cores)
{
    global_t g = {a->in, a->pixels, a->c, a->acc, a->acc_flags, a->in_zp, a->out};
    tw_pulp_rqch_t words = tw_pulp_rq_tflite(a->mult, a->shift);
    tw_pulp_clip_t clip = tw_pulp_clip(a->qmin, a->qmax, a->out_zp);
    global_pool(&g, core_id, n_cores, &words, a->divisor, &clip, TW_RQ_TFLITE);
}

void tw_pulp_global_avgpool_rq_s8_onnx(const tw_gap_rq_args_t *a, int core_id, int n_cores)
{
    global_t g = {a->in, a->pixels, a->c, a->acc, a->acc_flags, a->in_zp, a->out};
    int32_t w[4];
    tw_pulp_rqch_t words;
    tw_pulp_clip_t clip = tw_pulp_clip(a->rq.qmin, a->rq.qmax, a->rq.zero_point);
    tw_pulp_rq_words(&a->rq, 1, TW_RQ_ONNX, w);
    words = tw_pulp_rq_channel(w, 1, 0);
    global_pool(&g, core_id, n_cores, &words, 1, &clip, TW_RQ_ONNX);
}
