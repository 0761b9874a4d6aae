/*
 * tw_pulp_conv.c — int8 conv2d (im2col + 4x2 MatMul) and 1x1 conv of one HWC tile on the RI5CY
 * cluster (contract in tw_pulp_conv.h; seed 004 §3.3.1–3.3.3).
 */
#include "tw_pulp_conv.h"

#include <string.h>

#include "tw_pulp_common.h"
#include "tw_pulp_matmul.h"
#include "tw_pulp_matmul_arm.h"

static int round4(int n)
{
    return (n + 3) & ~3;
}

/* Scratch bytes per core of the Arm path (TW_PULP_ARM): the two columns' pairs, 4·round4(len)
 * bytes, and for a kernel larger than 1x1 an int8 field to build a receptive field with padding
 * in, round4(len) more. */
static size_t arm_core_scratch(int len, int im2col)
{
    return (size_t)(im2col ? 5 : 4) * (size_t)round4(len);
}

size_t tw_pulp_conv2d_s8_scratch(const tw_window_t *win, int in_c, int n_cores)
{
    int len = win->k_h * win->k_w * in_c;
#if TW_PULP_ARM
    return (size_t)n_cores * arm_core_scratch(len, win->k_h * win->k_w > 1);
#else
    (void)arm_core_scratch;
    return (size_t)n_cores * 2u * (size_t)round4(len);
#endif
}

/* An output pixel of the tile as (row, column), stepped without division. */
typedef struct {
    int oy, ox;
} pixel_t;

static pixel_t pixel_at(const tw_window_t *g, int p)
{
    pixel_t x;
    x.oy = p / g->out_w;
    x.ox = p - x.oy * g->out_w;
    return x;
}

static pixel_t pixel_next(const tw_window_t *g, pixel_t x)
{
    if (++x.ox == g->out_w) {
        x.ox = 0;
        x.oy++;
    }
    return x;
}

/* A core's run of (pixel pair, channel group) items (tw_pulp_common.h): the tile's pixel pairs in
 * row-major order, each cut into `groups` 4-channel-block groups when there are fewer pairs than
 * cores. walk_start gives the core's first item, walk_item the current one's pixels and output
 * channels [k0, k1), walk_next steps on. */
typedef struct {
    int it, end, pair, grp, groups, blocks, pixels;
    pixel_t x;
} walk_t;

TW_PULP_INLINE walk_t walk_start(const tw_conv_args_t *a, int core, int cores)
{
    const tw_window_t *g = &a->win;
    walk_t w;
    int pairs;
    w.pixels = g->out_h * g->out_w;
    pairs = (w.pixels + 1) >> 1;
    w.blocks = (a->out_c + 3) >> 2;
    w.groups = tw_pulp_groups(pairs, w.blocks, cores);
    tw_pulp_share(pairs * w.groups, core, cores, &w.it, &w.end);
    w.pair = w.it / w.groups;
    w.grp = w.it - w.pair * w.groups;
    w.x = pixel_at(g, 2 * w.pair);
    return w;
}

/* The current item: its first pixel *p (the pair's), whether it has a second (*two), and its
 * output channels [*k0, *k1). */
TW_PULP_INLINE void walk_item(const tw_conv_args_t *a, const walk_t *w, int *p, int *two, int *k0,
                              int *k1)
{
    int b0, b1;
    *p = 2 * w->pair;
    *two = *p + 1 < w->pixels;
    tw_pulp_group_blocks(w->blocks, w->grp, w->groups, &b0, &b1);
    *k0 = 4 * b0;
    *k1 = 4 * b1 < a->out_c ? 4 * b1 : a->out_c;
}

TW_PULP_INLINE void walk_next(const tw_window_t *g, walk_t *w)
{
    w->it++;
    if (++w->grp == w->groups) {
        w->grp = 0;
        w->pair++;
        w->x = pixel_next(g, pixel_next(g, w->x));
    }
}

/* The receptive field of output pixel x into col: per kernel row, the taps inside the tile are
 * one contiguous run of the HWC buffer (copied at once), those outside are the pad value. */
static void im2col_pixel(const tw_conv_args_t *a, pixel_t x, int8_t *col)
{
    const tw_window_t *g = &a->win;
    int c = a->in_c, row = g->k_w * c, oy = x.oy, ox = x.ox;
    int iy = oy * g->s_h - g->pad_t, ix = ox * g->s_w - g->pad_l;
    int lo = ix < 0 ? -ix : 0;                                    /* first tap inside */
    int hi = g->in_w - ix < g->k_w ? g->in_w - ix : g->k_w;       /* one past the last */
    int fy, inside;
    if (hi < lo)
        hi = lo;
    inside = (hi - lo) * c;
    for (fy = 0; fy < g->k_h; fy++, iy++, col += row) {
        if (iy < 0 || iy >= g->in_h || inside == 0) {
            tw_pulp_fill(col, a->pad_value, row);
            continue;
        }
        if (lo > 0)
            tw_pulp_fill(col, a->pad_value, lo * c);
        tw_pulp_copy(col + lo * c, a->in + ((size_t)iy * g->in_w + ix + lo) * c, inside);
        if (hi < g->k_w)
            tw_pulp_fill(col + hi * c, a->pad_value, (g->k_w - hi) * c);
    }
}

/* The first input byte of output pixel x's receptive field when the whole field lies inside the
 * tile (no padding tap): its k_h kernel rows are runs of k_w·in_c bytes, in_w·in_c apart, that the
 * MatMul reads in place (tw_pulp_dot_4x2_rows). NULL when the field reaches into the padding. */
static const int8_t *window_in_place(const tw_conv_args_t *a, pixel_t x)
{
    const tw_window_t *g = &a->win;
    int iy = x.oy * g->s_h - g->pad_t, ix = x.ox * g->s_w - g->pad_l;
    if (iy < 0 || iy + g->k_h > g->in_h || ix < 0 || ix + g->k_w > g->in_w)
        return NULL;
    return a->in + ((size_t)iy * g->in_w + (size_t)ix) * a->in_c;
}

/* The input pixel read by output pixel x of a 1x1 conv, or NULL when it lies in the padding. */
static const int8_t *pointwise_column(const tw_conv_args_t *a, pixel_t x)
{
    const tw_window_t *g = &a->win;
    int iy = x.oy * g->s_h - g->pad_t, ix = x.ox * g->s_w - g->pad_l;
    if (iy < 0 || iy >= g->in_h || ix < 0 || ix >= g->in_w)
        return NULL;
    return a->in + ((size_t)iy * g->in_w + (size_t)ix) * a->in_c;
}

/* A padded pixel of a 1x1 conv: every input value is pad_value, acc += pad_value·sum(w[k]). */
TW_PULP_INLINE void pad_pixel(const tw_conv_args_t *a, int p, int k0, int k1,
                              const tw_pulp_sink_t *s, const int mode)
{
    int k, j;
    for (k = k0; k < k1; k++) {
        const int8_t *wk = a->w + (size_t)k * a->in_c;
        int32_t acc[2];
        tw_pulp_acc_init(s, k, 1, p, 0, 0, acc);
        for (j = 0; j < a->in_c; j++)
            acc[0] += a->pad_value * wk[j];
        tw_pulp_finish(s, k, 1, p, 0, 0, acc, mode);
    }
}

/* The output channels [k0, k1) of pixels p (at x) and p + 1 (when `two`) of a 1x1 conv. */
TW_PULP_INLINE void pointwise_pair(const tw_conv_args_t *a, int p, pixel_t x, int two, int k0,
                                   int k1, const tw_pulp_sink_t *s, const int mode)
{
    const int8_t *c0 = pointwise_column(a, x);
    const int8_t *c1 = two ? pointwise_column(a, pixel_next(&a->win, x)) : NULL;
    if (c0 && (c1 || !two)) {
        tw_pulp_mm_cols(c0, c1, p, p + 1, a->w, a->in_c, k0, k1, s, mode);
        return;
    }
    if (c0)
        tw_pulp_mm_cols(c0, NULL, p, 0, a->w, a->in_c, k0, k1, s, mode);
    else
        pad_pixel(a, p, k0, k1, s, mode);
    if (two && c1)
        tw_pulp_mm_cols(c1, NULL, p + 1, 0, a->w, a->in_c, k0, k1, s, mode);
    else if (two)
        pad_pixel(a, p + 1, k0, k1, s, mode);
}

#if TW_PULP_ARM
/* Output pixel x's receptive field (a 1x1 conv: its input pixel) as pairs at dst (the pixel's
 * slot in the column buffer: tw_pulp_matmul_arm.h, its even lanes at dst[0], odd ones at
 * dst[half], 2·half words a step): unpacked in place, kernel row by kernel row, when the field
 * lies inside the tile and a kernel row is whole steps (k_w·in_c a multiple of 4), else built in
 * `field` first (the padding filled in); a 1x1 conv's padded pixel is pad pairs. */
TW_PULP_INLINE void arm_column_at(const tw_conv_args_t *a, pixel_t x, int32_t *dst,
                                  int8_t *field, int im2col, const int half)
{
    const tw_window_t *g = &a->win;
    int seg = g->k_w * a->in_c, len = im2col ? g->k_h * seg : a->in_c, fy, i;
    const int8_t *f;
    if (!im2col) {
        f = pointwise_column(a, x);
        if (f) {
            tw_pulp_arm_unpack_at(dst, f, len, half);
            return;
        }
        for (i = 0; i < len; i += 4, dst += 2 * half)
            tw_pulp_arm_pairs_at(dst, (uint8_t)a->pad_value * 0x01010101u, half);
        return;
    }
    f = window_in_place(a, x);
    if (f && (seg & 3) == 0) {
        for (fy = 0; fy < g->k_h; fy++, f += (size_t)g->in_w * a->in_c)
            dst = tw_pulp_arm_unpack_at(dst, f, seg, half);
        return;
    }
    im2col_pixel(a, x, field);
    tw_pulp_arm_unpack_at(dst, field, len, half);
}

/* arm_column_at in the 2x2 MatMul's column layout (two pixels). */
static void arm_column(const tw_conv_args_t *a, pixel_t x, int32_t *dst, int8_t *field,
                       int im2col)
{
    arm_column_at(a, x, dst, field, im2col, 2);
}

/* Both kernels on Arm, the whole reduction in this tile and len >= 4: per pixel pair the two
 * columns unpacked once (arm_column), then the 2x2 MatMul over the pair's output channels
 * (tw_pulp_arm_mm_whole); the work split as conv_tile's. */
TW_PULP_INLINE void conv_tile_arm(const tw_pulp_conv_args_t *t, int core, int cores,
                                  const int im2col, const int mode)
{
    const tw_conv_args_t *a = &t->a;
    const tw_window_t *g = &a->win;
    tw_pulp_clip_t clip = tw_pulp_clip(t->rq.qmin, t->rq.qmax, t->rq.zero_point);
    int len = im2col ? g->k_h * g->k_w * a->in_c : a->in_c;
    int32_t *col = (int32_t *)(void *)(a->im2col + (size_t)core * arm_core_scratch(len, im2col));
    int8_t *field = (int8_t *)(void *)(col + tw_pulp_arm_col_words(len));
    int built = -1;
    walk_t w;

    for (w = walk_start(a, core, cores); w.it < w.end; walk_next(g, &w)) {
        int p, two, k0, k1;
        int8_t *oa;
        walk_item(a, &w, &p, &two, &k0, &k1);
        oa = a->out + (size_t)p * a->out_c;
        if (built != w.pair) {
            arm_column(a, w.x, col, field, im2col);
            if (two)
                arm_column(a, pixel_next(g, w.x), col + 1, field, im2col);
            built = w.pair;
        }
        if (two)
            tw_pulp_arm_mm_whole(col, a->w, len, k0, k1, a->bias, t->rq.words, oa,
                                 oa + a->out_c, &clip, 1, mode);
        else
            tw_pulp_arm_mm_whole(col, a->w, len, k0, k1, a->bias, t->rq.words, oa, oa, &clip,
                                 0, mode);
    }
}
#endif

/* Both kernels: the tile's pixel pairs (x channel groups when pairs < cores), this core's run
 * (tw_pulp_common.h). im2col != 0: a pair whose receptive fields both lie inside the tile is read
 * in place, kernel row by kernel row, when the reduction is whole in this tile, the channel run
 * is whole 4-channel blocks and a kernel row is whole words (k_w·in_c a multiple of 4: one
 * hardware loop over rows x words); any other pair gets its receptive fields built in the core's
 * im2col buffers (the padding filled in) — also a kernel row of k_w·in_c = 4n + r, r > 0 (a
 * 3-channel first layer's 9 bytes), whose in-place rows would each end in a masked word step:
 * one run of the whole field is cheaper than k_h of them (GVSoC, the example's 3x3x3 conv: 49.1k
 * against 50.9k cycles). */
TW_PULP_INLINE void conv_tile(const tw_pulp_conv_args_t *t, int core, int cores,
                              const int im2col, const int mode)
{
    const tw_conv_args_t *a = &t->a;
    const tw_window_t *g = &a->win;
    int len = im2col ? g->k_h * g->k_w * a->in_c : a->in_c;
#if TW_PULP_ARM
    if (a->acc_flags == TW_ACC_WHOLE && len >= 4 && a->im2col) {
        conv_tile_arm(t, core, cores, im2col, mode);
        return;
    }
#endif
    tw_pulp_sink_t s = tw_pulp_sink(a->bias, a->psum, a->out, a->out_c, a->acc_flags, &t->rq);
    int8_t *col0 = im2col ? a->im2col + (size_t)core * 2u * (size_t)round4(len) : NULL;
    int8_t *col1 = col0 ? col0 + round4(len) : NULL;
    int built = -1;
    int seg = g->k_w * a->in_c, gap = (g->in_w - g->k_w) * a->in_c;
    int whole = a->acc_flags == TW_ACC_WHOLE;
    walk_t w;

    for (w = walk_start(a, core, cores); w.it < w.end; walk_next(g, &w)) {
        int p, two, k0, k1;
        pixel_t x = w.x;
        walk_item(a, &w, &p, &two, &k0, &k1);
        if (im2col) {
            /* whole 4-channel blocks of a whole reduction: one MatMul call site, its columns
             * read in place or from the im2col buffers (one run) */
            int blocks_whole = whole && ((k1 - k0) & 3) == 0;
            const int8_t *f0 = NULL, *f1 = NULL;
            int rows = 1, run = len, skip = 0;
            if (blocks_whole && seg >= 4 && (seg & 3) == 0) {
                f0 = window_in_place(a, x);
                f1 = two ? window_in_place(a, pixel_next(g, x)) : NULL;
            }
            if (f0 && (f1 || !two)) {
                rows = g->k_h;
                run = seg;
                skip = gap;
            } else {
                if (built != w.pair) {
                    im2col_pixel(a, x, col0);
                    if (two)
                        im2col_pixel(a, pixel_next(g, x), col1);
                    built = w.pair;
                }
                f0 = col0;
                f1 = two ? col1 : NULL;
            }
            if (blocks_whole)
                tw_pulp_mm_rows(f0, f1, p, p + 1, a->w, len, rows, run, skip, k0, k1, &s, mode);
            else
                tw_pulp_mm_cols(f0, f1, p, p + 1, a->w, len, k0, k1, &s, mode);
        } else {
            pointwise_pair(a, p, x, two, k0, k1, &s, mode);
        }
    }
}

#define TW_PULP_CONV_DEF(name, mode)                                                        \
    void tw_pulp_conv2d_s8_##name(const tw_pulp_conv_args_t *a, int core_id, int n_cores)    \
    {                                                                                       \
        conv_tile(a, core_id, n_cores, 1, mode);                                            \
    }                                                                                       \
    void tw_pulp_conv1x1_s8_##name(const tw_pulp_conv_args_t *a, int core_id, int n_cores)   \
    {                                                                                       \
        conv_tile(a, core_id, n_cores, 0, mode);                                            \
    }

TW_PULP_VARIANTS(TW_PULP_CONV_DEF)

#if TW_PULP_ARM || !TW_PULP_ASM
/*
 * The conv and 1x1 conv with weights stored widened to int16 (tw_pulp_conv2d_s8w16_*,
 * tw_pulp_conv1x1_s8w16_*: built for Arm, and in plain C for a host build of an Arm target's
 * project, never for the cluster; bindings/pulp/widened.py `conv_layout` lays the weights out at
 * codegen). A kernel row's k_w·in_c values are a multiple of 4 (the binding's check), so a
 * receptive field of len = k_h·k_w·in_c values is len / 4 whole steps and its rows unpack in
 * place; the whole reduction is in the tile (the binding never tiles c); one core (the Arm
 * modules have one).
 *
 * Built for Arm: per quad of output pixels (the tile's, row-major; the last quad may have fewer:
 * the columns of the missing pixels are left as they are and their outputs not stored) the four
 * receptive fields unpacked once to int16 pairs (arm_column_at, four-pixel layout), then per
 * block of two output channels the 2x4 MatMul (tw_pulp_arm_mm2x4w, no sxtb16 in its loop) from
 * the bias and the eight outputs requantized as two words (tw_pulp_rq4c). Weights of a block:
 * per step of 4 values the words (k even, k + 1 even, k odd, k + 1 odd), even = values (0, 2)
 * and odd = (1, 3) as (low, high) halfwords; an odd out_c's last block has a zero channel k + 1
 * (its outputs not stored).
 *
 * Scratch (the binding's im2col_bytes_w16): the column buffer, 8·len + 4 bytes (8 words a step,
 * and the word the MatMul's last step reads ahead), then for a kernel larger than 1x1 an int8
 * receptive field of len bytes to build a padded one in.
 */
static size_t w16_col_bytes(int len)
{
    return 8u * (size_t)len + 4u;
}

#if TW_PULP_ARM
/* The word v of outputs (pixel j, channel k), (j, k + 1), (j + 1, k), (j + 1, k + 1) stored at o
 * (pixel j's channel k; pixels out_c bytes apart): `two` channels (a pixel's two as one
 * halfword store, any alignment), `px` (1 or 2) pixels. */
TW_PULP_INLINE void w16_store(int8_t *o, int out_c, int two, int px, uint32_t v)
{
    if (two) {
        uint16_t h[2] = {(uint16_t)v, (uint16_t)(v >> 16)};
        memcpy(o, &h[0], 2);
        if (px > 1)
            memcpy(o + out_c, &h[1], 2);
        return;
    }
    o[0] = (int8_t)v;
    if (px > 1)
        o[out_c] = (int8_t)(v >> 16);
}

TW_PULP_INLINE void conv_w16(const tw_pulp_conv_args_t *t, int core, const int im2col,
                             const int mode)
{
    const tw_conv_args_t *a = &t->a;
    const tw_window_t *g = &a->win;
    tw_pulp_clip_t clip = tw_pulp_clip(t->rq.qmin, t->rq.qmax, t->rq.zero_point);
    const int len = im2col ? g->k_h * g->k_w * a->in_c : a->in_c, kn = a->out_c;
    const int pixels = g->out_h * g->out_w, steps = len >> 2;
    const int32_t *bias = a->bias, *words = t->rq.words;
    int32_t *col = (int32_t *)(void *)a->im2col;
    int8_t *field = a->im2col + w16_col_bytes(len);
    pixel_t x = pixel_at(g, 0);
    int p, j, k;
    if (core != 0)
        return;
    for (p = 0; p < pixels; p += 4) {
        int n = pixels - p < 4 ? pixels - p : 4;
        int8_t *o = a->out + (size_t)p * kn;
        const int32_t *w = (const int32_t *)(const void *)a->w;
        for (j = 0; j < n; j++, x = pixel_next(g, x))
            arm_column_at(a, x, col + j, field, im2col, 4);
        for (k = 0; k < kn; k += 2, o += 2) {
            int two = k + 1 < kn;
            tw_pulp_rqch_t c0 = tw_pulp_rq_channel(words, 0, k);
            tw_pulp_rqch_t c1 = two ? tw_pulp_rq_channel(words, 0, k + 1) : c0;
            int32_t acc[8];
            uint32_t v01, v23;
            acc[0] = acc[1] = acc[2] = acc[3] = bias ? bias[k] : 0;
            acc[4] = acc[5] = acc[6] = acc[7] = bias && two ? bias[k + 1] : 0;
            w = tw_pulp_arm_mm2x4w(col, w, steps, acc);
            v01 = tw_pulp_rq4c(&c0, &c1, &c0, &c1, &clip, acc[0], acc[4], acc[1], acc[5], mode);
            v23 = tw_pulp_rq4c(&c0, &c1, &c0, &c1, &clip, acc[2], acc[6], acc[3], acc[7], mode);
            w16_store(o, kn, two, n, v01);
            if (n > 2)
                w16_store(o + 2 * kn, kn, two, n - 2, v23);
        }
    }
}
#else
/* The same arithmetic in plain C, output by output (the layout above read halfword by halfword;
 * the receptive field built in the scratch by im2col_pixel, 1x1 too). */
TW_PULP_INLINE void conv_w16(const tw_pulp_conv_args_t *t, int core, const int im2col,
                             const int mode)
{
    const tw_conv_args_t *a = &t->a;
    const tw_window_t *g = &a->win;
    tw_pulp_sink_t s = tw_pulp_sink(a->bias, a->psum, a->out, a->out_c, a->acc_flags, &t->rq);
    const int len = g->k_h * g->k_w * a->in_c, pixels = g->out_h * g->out_w;
    const int16_t *w16 = (const int16_t *)(const void *)a->w;
    int8_t *field = a->im2col;
    pixel_t x = pixel_at(g, 0);
    int p, k, i;
    (void)im2col;
    (void)w16_col_bytes;
    if (core != 0)
        return;
    for (p = 0; p < pixels; p++, x = pixel_next(g, x)) {
        im2col_pixel(a, x, field);
        for (k = 0; k < a->out_c; k++) {
            /* channel k's halfwords: its block's 2·len, at 2·(k & 1) in each word pair */
            const int16_t *wk = w16 + (size_t)(k >> 1) * 2u * (size_t)len + 2 * (k & 1);
            int32_t acc[2];
            uint32_t sum;
            tw_pulp_acc_init(&s, k, 1, p, 0, 0, acc);
            sum = (uint32_t)acc[0];
            /* value i: step i / 4, the odd word for an odd i, halfword (i >> 1) & 1 */
            for (i = 0; i < len; i++)
                sum += (uint32_t)(field[i] * wk[8 * (i >> 2) + 4 * (i & 1) + ((i >> 1) & 1)]);
            acc[0] = (int32_t)sum;
            tw_pulp_finish(&s, k, 1, p, 0, 0, acc, mode);
        }
    }
}
#endif

#define TW_PULP_CONVW_DEF(name, mode)                                                       \
    void tw_pulp_conv2d_s8w16_##name(const tw_pulp_conv_args_t *a, int core_id, int n_cores) \
    {                                                                                       \
        (void)n_cores;                                                                      \
        conv_w16(a, core_id, 1, mode);                                                      \
    }                                                                                       \
    void tw_pulp_conv1x1_s8w16_##name(const tw_pulp_conv_args_t *a, int core_id,            \
                                      int n_cores)                                          \
    {                                                                                       \
        (void)n_cores;                                                                      \
        conv_w16(a, core_id, 0, mode);                                                      \
    }

TW_PULP_VARIANTS(TW_PULP_CONVW_DEF)
#endif /* TW_PULP_ARM || !TW_PULP_ASM */
