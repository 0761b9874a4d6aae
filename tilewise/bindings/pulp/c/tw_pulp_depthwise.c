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

/* Pixels per ring row of the Arm path (below): the padded input span of a tile's output row. */
static int arm_ring_px(const tw_window_t *g)
{
    return (g->out_w - 1) * g->s_w + g->k_w;
}

size_t tw_pulp_depthwise_s8_scratch(const tw_window_t *win, int n_cores)
{
    int w4, rl;
    size_t planar;
    widths(win, &w4, &rl);
    planar = (size_t)n_cores * (size_t)win->k_h * (size_t)(rl + w4);
#if TW_PULP_ARM
    {   /* the Arm path's ring: k_h rows of arm_ring_px pixels of two words, per core */
        size_t ring = (size_t)n_cores * (size_t)win->k_h * 8u * (size_t)arm_ring_px(win);
        return ring > planar ? ring : planar;
    }
#else
    (void)arm_ring_px;
    return planar;
#endif
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

#if TW_PULP_ARM
/* The Arm DSP path (Cortex-M4/M7): four channels of one output pixel at a time.
 * A group of four channels keeps a ring of k_h padded input rows of (out_w - 1)·s_w + k_w pixels
 * in the core's scratch, each pixel the group's four input values already unpacked to two
 * halfword-pair words, (x0, x2) and (x1, x3) (sxtb16 and sxtb16 ror 8, once per input value and
 * group instead of once per tap), the padding as the pad value's pair; the weights of every tap
 * likewise, wx[2t] = (w0, w2), wx[2t + 1] = (w1, w3), gathered from the channel-major layout once
 * per group onto the stack. A tap is then two ldrd and four 16x16 MACs (smlabb / smlatt, the
 * channels in the bottom and top halves), a 3x3 window straight code from three ring rows, the
 * four outputs requantized into one word (tw_pulp_rq4). Kernels of up to TW_DW_ARM_TAPS taps;
 * larger ones and the channels left after the groups of four take the planar path. */
#define TW_DW_ARM_TAPS 25

/* The (w0, w2), (w1, w3) halfword pairs of channels c..c+3 at every tap into wx[2·taps]. */
static void arm_weights(const tw_dw_args_t *a, int c, int32_t *wx)
{
    int taps = a->win.k_h * a->win.k_w, t;
    const int8_t *w = a->w + (size_t)c * taps;
    for (t = 0; t < taps; t++) {
        uint32_t v = tw_pulp_pack4(w[t], w[taps + t], w[2 * taps + t], w[3 * taps + t]);
        tw_pulp_unpack2(wx + 2 * t, v);
    }
}

/* Padded input row iy (tile row; outside [0, in_h) all padding) of channels c..c+3 into the ring
 * row dst: px pixel pairs, the input's columns from pad_l on, the pad pair elsewhere. */
static void arm_fill(const tw_dw_args_t *a, int iy, int c, int32_t *dst, int px)
{
    const tw_window_t *g = &a->win;
    int32_t pad = (int32_t)__sxtb16((uint8_t)a->pad_value * 0x01010101u);
    int x = 0, n = 0, cstep = a->in_c;
    if (iy >= 0 && iy < g->in_h) {
        n = px - g->pad_l < g->in_w ? px - g->pad_l : g->in_w;
        for (; x < g->pad_l && x < px; x++, dst += 2)
            dst[0] = dst[1] = pad;
        if (n > 0) {
            const int8_t *src = a->in + (size_t)iy * g->in_w * cstep + c;
            for (x += n; n > 0; n--, src += cstep, dst += 2)
                tw_pulp_unpack2(dst, tw_pulp_lw(src));
        }
    }
    for (; x < px; x++, dst += 2)
        dst[0] = dst[1] = pad;
}

/* The four accumulators of channels c..c+3 (a struct of scalars: kept in registers). */
typedef struct {
    int32_t a0, a1, a2, a3;
} arm_acc4_t;

/* s += input pair x[0] = (x0, x2), x[1] = (x1, x3) times tap weight pair wt (the same halves). */
TW_PULP_INLINE arm_acc4_t arm_tap(arm_acc4_t s, const int32_t *x, const int32_t *wt)
{
    s.a0 = __smlabb(x[0], wt[0], s.a0);
    s.a2 = __smlatt(x[0], wt[0], s.a2);
    s.a1 = __smlabb(x[1], wt[1], s.a1);
    s.a3 = __smlatt(x[1], wt[1], s.a3);
    return s;
}

/* The accumulators from the bias of channels c..c+3 (0 without one). */
TW_PULP_INLINE arm_acc4_t arm_bias(const int32_t *bias)
{
    arm_acc4_t s = {0, 0, 0, 0};
    if (bias) {
        s.a0 = bias[0];
        s.a1 = bias[1];
        s.a2 = bias[2];
        s.a3 = bias[3];
    }
    return s;
}

/* Output rows [oy0, oy1) of channels c..c+3 (the ring at `ring`); k3: the kernel is 3x3 (a
 * compile-time constant: its nine taps straight code). */
TW_PULP_INLINE void arm_group_rows(const tw_pulp_dw_args_t *d, int c, int oy0, int oy1,
                                   int32_t *ring, const tw_pulp_clip_t *clip, const int k3,
                                   const int mode)
{
    const tw_dw_args_t *a = &d->a;
    const tw_window_t *g = &a->win;
    int32_t wx[2 * TW_DW_ARM_TAPS];
    const int32_t *rows[TW_DW_ARM_TAPS];
    int kh = k3 ? 3 : g->k_h, kw = k3 ? 3 : g->k_w, sh = g->s_h, px = arm_ring_px(g);
    int step = 2 * g->s_w, oy, ox, fy, fx, next = -1, slot0 = (oy0 * sh) % kh;
    const int32_t *bias = a->bias ? a->bias + c : NULL;
    const int32_t *words = d->rq.words + 4 * c;

    arm_weights(a, c, wx);
    for (oy = oy0; oy < oy1; oy++) {
        int r0 = oy * sh, r;
        int8_t *o = a->out + (size_t)oy * g->out_w * a->in_c + c;
        for (r = next > r0 ? next : r0; r < r0 + kh; r++) {
            int s = slot0 + r - r0;
            arm_fill(a, r - g->pad_t, c, ring + (size_t)(s >= kh ? s - kh : s) * 2 * px, px);
        }
        next = r0 + kh;
        if (k3) {
            /* the three ring rows from slot0 directly (no rows[] loop: kws' rows are 5 pixels) */
            size_t row = (size_t)2 * px;
            const int32_t *q0 = ring + slot0 * row;
            const int32_t *q1 = ring + (slot0 == 2 ? 0 : slot0 + 1) * row;
            const int32_t *q2 = ring + (slot0 == 0 ? 2 : slot0 - 1) * row;
            for (ox = 0; ox < g->out_w; ox++, q0 += step, q1 += step, q2 += step,
                 o += a->in_c) {
                arm_acc4_t s = arm_bias(bias);
                const int32_t *wt = wx;
                /* the weights read through wt at each pixel: without the empty asm, which hides
                 * that wt is wx, gcc hoisted the 18 weight words out of the pixel loop into
                 * stack slots of their own, copied them there at every output row (42
                 * instructions) and reloaded each from there at every pixel anyway; the input
                 * pairs now load as one ldrd */
                __asm__("" : "+r"(wt));
                s = arm_tap(s, q0, wt);
                s = arm_tap(s, q0 + 2, wt + 2);
                s = arm_tap(s, q0 + 4, wt + 4);
                s = arm_tap(s, q1, wt + 6);
                s = arm_tap(s, q1 + 2, wt + 8);
                s = arm_tap(s, q1 + 4, wt + 10);
                s = arm_tap(s, q2, wt + 12);
                s = arm_tap(s, q2 + 2, wt + 14);
                s = arm_tap(s, q2 + 4, wt + 16);
                tw_pulp_sw(o, tw_pulp_rq4(words, clip, s.a0, s.a1, s.a2, s.a3, mode));
            }
        } else {
            for (fy = 0; fy < kh; fy++) {
                int s = slot0 + fy;
                rows[fy] = ring + (size_t)(s >= kh ? s - kh : s) * 2 * px;
            }
            for (ox = 0; ox < g->out_w; ox++, o += a->in_c) {
                arm_acc4_t s = arm_bias(bias);
                const int32_t *wt = wx;
                for (fy = 0; fy < kh; fy++)
                    for (fx = 0; fx < kw; fx++, wt += 2)
                        s = arm_tap(s, rows[fy] + ox * step + 2 * fx, wt);
                tw_pulp_sw(o, tw_pulp_rq4(words, clip, s.a0, s.a1, s.a2, s.a3, mode));
            }
        }
        slot0 += sh;
        while (slot0 >= kh)
            slot0 -= kh;
    }
}

/* The groups of four channels, (group, output row) items split over the cores, each core's ring
 * at its own place in the scratch; the channels left over (in_c mod 4) return to the caller's
 * planar path. */
TW_PULP_INLINE void arm_depthwise(const tw_pulp_dw_args_t *d, int core, int cores,
                                  const tw_pulp_clip_t *clip, const int mode)
{
    const tw_window_t *g = &d->a.win;
    int groups = d->a.in_c >> 2, begin, end, it;
    int32_t *ring = (int32_t *)(void *)d->scratch + (size_t)core * g->k_h * 2 * arm_ring_px(g);
    tw_pulp_share(groups * g->out_h, core, cores, &begin, &end);
    for (it = begin; it < end;) {
        int grp = it / g->out_h, oy0 = it - grp * g->out_h;
        int oy1 = g->out_h < oy0 + (end - it) ? g->out_h : oy0 + (end - it);
        if (g->k_h == 3 && g->k_w == 3)
            arm_group_rows(d, 4 * grp, oy0, oy1, ring, clip, 1, mode);
        else
            arm_group_rows(d, 4 * grp, oy0, oy1, ring, clip, 0, mode);
        it += oy1 - oy0;
    }
}
#endif

TW_PULP_INLINE void depthwise(const tw_pulp_dw_args_t *d, int core, int cores, const int mode)
{
    const tw_dw_args_t *a = &d->a;
    const tw_window_t *g = &a->win;
    tw_pulp_clip_t clip = tw_pulp_clip(d->rq.qmin, d->rq.qmax, d->rq.zero_point);
    int w4, rl, begin, end, it, c_first = 0;
    int8_t *ring, *wrow;

#if TW_PULP_ARM
    if (g->k_h * g->k_w <= TW_DW_ARM_TAPS) {
        arm_depthwise(d, core, cores, &clip, mode);
        c_first = a->in_c & ~3;
        if (c_first == a->in_c)
            return;
    }
#endif
    widths(g, &w4, &rl);
    ring = d->scratch + (size_t)core * (size_t)g->k_h * (size_t)(rl + w4);
    wrow = ring + (size_t)g->k_h * rl;
    tw_pulp_share((a->in_c - c_first) * g->out_h, core, cores, &begin, &end);
    for (it = begin; it < end;) {
        int c = c_first + it / g->out_h, oy0 = it - (c - c_first) * g->out_h;
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

TW_PULP_VARIANTS(TW_PULP_DW_DEF)
