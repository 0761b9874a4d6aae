/*
 * tw_pulp_depthwise.c — int8 depthwise convolution, planar row ring per core and pv.sdotsp.b
 * along the kernel rows (contract and layout in tw_pulp_depthwise.h).
 */
#include "tw_pulp_depthwise.h"

#include "tw_pulp_common.h"
#include "tw_pulp_requant.h"

/* Widths of a core's buffers: W4 weight bytes per kernel row, RL bytes per ring row. */
static void widths(const tw_window_t *g, int *w4, int *rl)
{
    *w4 = (g->k_w + 3) & ~3;
    *rl = ((g->out_w - 1) * g->s_w + *w4 + 3) & ~3;
}

size_t tw_pulp_depthwise_s8_scratch(const tw_window_t *win, int n_cores)
{
    int w4, rl;
    widths(win, &w4, &rl);
    return (size_t)n_cores * (size_t)win->k_h * (size_t)(rl + w4);
}

/* Padded input row r (row r - pad_t of the tile) of channel c into dst: pad_l pad values, the
 * channel's values along the row, pad values up to rl bytes. */
static void fill_row(const tw_dw_args_t *a, int r, int c, int8_t *dst, int rl)
{
    const tw_window_t *g = &a->win;
    int iy = r - g->pad_t, n = rl - g->pad_l;
    if (iy < 0 || iy >= g->in_h || n <= 0) {
        tw_pulp_fill(dst, a->pad_value, rl);
        return;
    }
    if (n > g->in_w)
        n = g->in_w;
    tw_pulp_fill(dst, a->pad_value, g->pad_l);
    tw_pulp_gather(dst + g->pad_l, a->in + (size_t)iy * g->in_w * a->in_c + c, a->in_c, n);
    tw_pulp_fill(dst + g->pad_l + n, a->pad_value, rl - g->pad_l - n);
}

/* Channel c's weights [k_h][k_w] as k_h rows of w4 bytes, zero lanes after the k_w taps. */
static void load_weights(const tw_dw_args_t *a, int c, int8_t *wrow, int w4)
{
    const tw_window_t *g = &a->win;
    const int8_t *w = a->w + (size_t)c * g->k_h * g->k_w;
    int fy, fx;
    for (fy = 0; fy < g->k_h; fy++)
        for (fx = 0; fx < w4; fx++)
            wrow[fy * w4 + fx] = fx < g->k_w ? w[fy * g->k_w + fx] : 0;
}

/* Ring row of kernel row fy when kernel row 0 is in slot slot0. */
static int8_t *ring_row(int8_t *ring, int slot0, int fy, int kh, int rl)
{
    int s = slot0 + fy;
    return ring + (s >= kh ? s - kh : s) * rl;
}

/* One output row: out_w outputs of channel c, kernel row 0 in ring slot slot0. */
TW_PULP_INLINE void output_row(const tw_dw_args_t *a, int8_t *ring, int slot0, int rl,
                               const int8_t *wrow, int w4, int32_t bias, int8_t *o,
                               const tw_pulp_rqch_t *ch, const tw_pulp_clip_t *clip,
                               const int mode)
{
    const tw_window_t *g = &a->win;
    int ox, fy, j, step = g->s_w, kh = g->k_h;
    if (kh == 3 && w4 == 4) {              /* k_w <= 4 taps: one word per kernel row */
        const int8_t *q0 = ring_row(ring, slot0, 0, 3, rl), *q1 = ring_row(ring, slot0, 1, 3, rl);
        const int8_t *q2 = ring_row(ring, slot0, 2, 3, rl);
        tw_v4_t v0 = tw_pulp_lw(wrow), v1 = tw_pulp_lw(wrow + 4), v2 = tw_pulp_lw(wrow + 8);
        for (ox = 0; ox < g->out_w; ox++) {
            int32_t acc = tw_pulp_sdotp4(bias, tw_pulp_lw(q0), v0);
            acc = tw_pulp_sdotp4(acc, tw_pulp_lw(q1), v1);
            acc = tw_pulp_sdotp4(acc, tw_pulp_lw(q2), v2);
            q0 += step;
            q1 += step;
            q2 += step;
            *o = tw_pulp_rq(ch, clip, acc, mode);
            o += a->in_c;
        }
        return;
    }
    for (ox = 0; ox < g->out_w; ox++) {
        int32_t acc = bias;
        for (fy = 0; fy < kh; fy++) {
            const int8_t *q = ring_row(ring, slot0, fy, kh, rl) + ox * step;
            for (j = 0; j < w4; j += 4)
                acc = tw_pulp_sdotp4(acc, tw_pulp_lw(q + j), tw_pulp_lw(wrow + fy * w4 + j));
        }
        *o = tw_pulp_rq(ch, clip, acc, mode);
        o += a->in_c;
    }
}

/* Output rows [oy0, oy1) of channel c, the ring refilled row by row (slot of padded row r:
 * r mod k_h, tracked without division). */
TW_PULP_INLINE void channel_rows(const tw_dw_args_t *a, const tw_pulp_rq_t *rq, int c, int oy0,
                                 int oy1, int8_t *ring, int8_t *wrow, int rl, int w4,
                                 const tw_pulp_clip_t *clip, const int mode)
{
    const tw_window_t *g = &a->win;
    int kh = g->k_h, oy, next = -1, slot0 = (oy0 * g->s_h) % kh;
    int32_t bias = a->bias ? a->bias[c] : 0;
    tw_pulp_rqch_t ch = tw_pulp_rq_channel(rq->words, rq->n, c);

    load_weights(a, c, wrow, w4);
    for (oy = oy0; oy < oy1; oy++) {
        int r0 = oy * g->s_h, r;
        for (r = next > r0 ? next : r0; r < r0 + kh; r++)
            fill_row(a, r, c, ring_row(ring, slot0, r - r0, kh, rl), rl);
        next = r0 + kh;
        output_row(a, ring, slot0, rl, wrow, w4, bias,
                   a->out + (size_t)oy * g->out_w * a->in_c + c, &ch, clip, mode);
        slot0 += g->s_h;
        while (slot0 >= kh)
            slot0 -= kh;
    }
}

TW_PULP_INLINE void depthwise(const tw_pulp_dw_args_t *d, int core, int cores, const int mode)
{
    const tw_dw_args_t *a = &d->a;
    const tw_window_t *g = &a->win;
    tw_pulp_clip_t clip = tw_pulp_clip(d->rq.qmin, d->rq.qmax, d->rq.zero_point);
    int w4, rl, begin, end, it;
    int8_t *ring, *wrow;

    widths(g, &w4, &rl);
    ring = d->scratch + (size_t)core * (size_t)g->k_h * (size_t)(rl + w4);
    wrow = ring + (size_t)g->k_h * rl;
    tw_pulp_share(a->in_c * g->out_h, core, cores, &begin, &end);
    for (it = begin; it < end;) {
        int c = it / g->out_h, oy0 = it - c * g->out_h;
        int oy1 = g->out_h < oy0 + (end - it) ? g->out_h : oy0 + (end - it);
        channel_rows(a, &d->rq, c, oy0, oy1, ring, wrow, rl, w4, &clip, mode);
        it += oy1 - oy0;
    }
}

#define TW_PULP_DW_DEF(name, mode)                                                          \
    void tw_pulp_depthwise_s8_##name(const tw_pulp_dw_args_t *a, int core_id, int n_cores)   \
    {                                                                                       \
        depthwise(a, core_id, n_cores, mode);                                               \
    }

TW_PULP_DW_DEF(tflite, TW_RQ_TFLITE)
TW_PULP_DW_DEF(tflite_single, TW_RQ_TFLITE_SINGLE)
TW_PULP_DW_DEF(shift, TW_RQ_SHIFT)
TW_PULP_DW_DEF(shift32, TW_PULP_RQ_SHIFT32)
TW_PULP_DW_DEF(onnx, TW_RQ_ONNX)
