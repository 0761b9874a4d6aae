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

/* Padded input row r (row r - pad_t of the tile) of channel c into dst (word-aligned): rl bytes
 * of pad value (rl / 4 word stores), then the channel's values along the row at pad_l (a short
 * row byte by byte, a long one through tw_pulp_gather's hardware loop). */
TW_PULP_INLINE void fill_row(const tw_dw_args_t *a, int r, int c, int8_t *dst, int rl)
{
    const tw_window_t *g = &a->win;
    const int8_t *src;
    tw_v4_t pad = (uint8_t)a->pad_value * 0x01010101u;
    int iy = r - g->pad_t, n = rl - g->pad_l, in_w = g->in_w, stride = a->in_c, i;
    for (i = 0; i < rl; i += 4)
        tw_pulp_sw(dst + i, pad);
    if (iy < 0 || iy >= g->in_h || n <= 0)
        return;
    if (n > in_w)
        n = in_w;
    src = a->in + (size_t)iy * in_w * stride + c;
    dst += g->pad_l;
    if (n >= 16) {
        tw_pulp_gather(dst, src, stride, n);
        return;
    }
    for (i = 0; i < n; i++)
        dst[i] = (int8_t)tw_pulp_lb_step(&src, stride);
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

/* The out_w outputs of one output row of a kernel of 3 rows of at most 4 taps: rows q0, q1, q2
 * of the ring, weight words v[0..3), one output every `stride` bytes from o. */
TW_PULP_INLINE void row3(const int8_t *q0, const int8_t *q1, const int8_t *q2, const tw_v4_t *v,
                         int32_t bias, int out_w, int step, int8_t *o, int stride,
                         tw_pulp_rqch_t c, tw_pulp_clip_t cl, const int mode)
{
    tw_v4_t v0 = v[0], v1 = v[1], v2 = v[2];
    int ox;
    for (ox = 0; ox < out_w; ox++) {
        int32_t acc = tw_pulp_sdotp4(bias, tw_pulp_lw_step(&q0, step), v0);
        acc = tw_pulp_sdotp4(acc, tw_pulp_lw_step(&q1, step), v1);
        acc = tw_pulp_sdotp4(acc, tw_pulp_lw_step(&q2, step), v2);
        *o = tw_pulp_rq(&c, &cl, acc, mode);
        o += stride;
    }
}

/* One output row of any kernel: kernel row fy in ring slot slot0 + fy (mod k_h), its weights
 * wrow + fy·w4 as w4 / 4 words. */
TW_PULP_INLINE void row_any(const tw_dw_args_t *a, int8_t *ring, int slot0, int rl,
                            const int8_t *wrow, int w4, int32_t bias, int8_t *o,
                            tw_pulp_rqch_t c, tw_pulp_clip_t cl, const int mode)
{
    const tw_window_t *g = &a->win;
    int ox, fy, j;
    for (ox = 0; ox < g->out_w; ox++) {
        int32_t acc = bias;
        for (fy = 0; fy < g->k_h; fy++) {
            const int8_t *q = ring_row(ring, slot0, fy, g->k_h, rl) + ox * g->s_w;
            for (j = 0; j < w4; j += 4)
                acc = tw_pulp_sdotp4(acc, tw_pulp_lw(q + j), tw_pulp_lw(wrow + fy * w4 + j));
        }
        *o = tw_pulp_rq(&c, &cl, acc, mode);
        o += a->in_c;
    }
}

/* Output rows [oy0, oy1) of channel c, the ring refilled row by row: padded input row r in slot
 * r mod k_h, tracked without division (kernel row 0 of output row oy in slot0). */
TW_PULP_INLINE void channel_rows(const tw_dw_args_t *a, const tw_pulp_rq_t *rq, int c, int oy0,
                                 int oy1, int8_t *ring, int8_t *wrow, int rl, int w4,
                                 const tw_pulp_clip_t *clip, const int mode)
{
    const tw_window_t *g = &a->win;
    int kh = g->k_h, sh = g->s_h, oy, next = -1, slot0 = (oy0 * sh) % kh;
    int32_t bias = a->bias ? a->bias[c] : 0;
    tw_pulp_rqch_t ch = tw_pulp_rq_channel(rq->words, rq->n, c);
    tw_v4_t v[3] = {0, 0, 0};
    int8_t *o = a->out + (size_t)oy0 * g->out_w * a->in_c + c;
    int fast = kh == 3 && w4 == 4, row_bytes = g->out_w * a->in_c;

    load_weights(a, c, wrow, w4);
    if (fast) {
        v[0] = tw_pulp_lw(wrow);
        v[1] = tw_pulp_lw(wrow + 4);
        v[2] = tw_pulp_lw(wrow + 8);
    }
    for (oy = oy0; oy < oy1; oy++, o += row_bytes) {
        int r0 = oy * sh, r;
        for (r = next > r0 ? next : r0; r < r0 + kh; r++)
            fill_row(a, r, c, ring_row(ring, slot0, r - r0, kh, rl), rl);
        next = r0 + kh;
        if (fast)
            row3(ring_row(ring, slot0, 0, 3, rl), ring_row(ring, slot0, 1, 3, rl),
                 ring_row(ring, slot0, 2, 3, rl), v, bias, g->out_w, g->s_w, o, a->in_c, ch,
                 *clip, mode);
        else
            row_any(a, ring, slot0, rl, wrow, w4, bias, o, ch, *clip, mode);
        slot0 += sh;
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
TW_PULP_DW_DEF(tflite_right, TW_PULP_RQ_TFLITE_RIGHT)
TW_PULP_DW_DEF(onnx, TW_RQ_ONNX)
