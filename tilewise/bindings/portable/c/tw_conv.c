/*
 * tw_conv.c — int8 convolution of one HWC tile: im2col + 4x2 MatMul (seed 004 §3.3.1–3.3.3),
 * output rows split over cores (§3.3.2). Contract in tw_conv.h.
 */
#include "tw_conv.h"

#include <string.h>

#include "tw_matmul.h"

size_t tw_conv2d_s8_scratch(const tw_window_t *win, int in_c, int n_cores)
{
    return (size_t)n_cores * 2u * (size_t)win->k_h * (size_t)win->k_w * (size_t)in_c;
}

/* Fill `col` with the receptive field of output pixel (oy, ox): k_h x k_w taps of in_c values,
 * in the weights' (fy, fx, c) order; taps outside the tile read the pad value. */
static void im2col_pixel(const tw_conv_args_t *a, int oy, int ox, int8_t *col)
{
    const tw_window_t *g = &a->win;
    int fy, fx;
    for (fy = 0; fy < g->k_h; fy++) {
        int iy = oy * g->s_h - g->pad_t + fy * g->d_h;
        for (fx = 0; fx < g->k_w; fx++) {
            int ix = ox * g->s_w - g->pad_l + fx * g->d_w;
            if (iy < 0 || iy >= g->in_h || ix < 0 || ix >= g->in_w)
                memset(col, a->pad_value, (size_t)a->in_c);
            else
                memcpy(col, a->in + ((size_t)iy * g->in_w + ix) * a->in_c, (size_t)a->in_c);
            col += a->in_c;
        }
    }
}

static tw_mm_sink_t conv_sink(const tw_conv_args_t *a)
{
    tw_mm_sink_t s;
    s.bias = a->bias;
    s.psum = a->psum;
    s.out = a->out;
    s.row = a->out_c;
    s.flags = a->acc_flags;
    s.rq = &a->rq;
    s.acc_bits = a->acc_bits;
    return s;
}

void tw_conv2d_s8(const tw_conv_args_t *a, int core_id, int n_cores)
{
    const tw_window_t *g = &a->win;
    int len = g->k_h * g->k_w * a->in_c;
    int8_t *col0 = a->im2col + (size_t)core_id * 2u * (size_t)len;
    int8_t *col1 = col0 + len;
    tw_mm_sink_t sink = conv_sink(a);
    int pair_begin, pair_end, p, p_end;

    /* pairs of output pixels over the cores (rows would leave cores idle on a 1-D tile);
     * p: the tile-local pixel index oy * out_w + ox */
    tw_core_range((g->out_h * g->out_w + 1) / 2, core_id, n_cores, &pair_begin, &pair_end);
    p = 2 * pair_begin;
    p_end = 2 * pair_end < g->out_h * g->out_w ? 2 * pair_end : g->out_h * g->out_w;
    for (; p + 2 <= p_end; p += 2) {
        im2col_pixel(a, p / g->out_w, p % g->out_w, col0);
        im2col_pixel(a, (p + 1) / g->out_w, (p + 1) % g->out_w, col1);
        tw_matmul_s8(col0, col1, p, p + 1, a->w, len, 0, a->out_c, &sink);
    }
    if (p < p_end) {
        im2col_pixel(a, p / g->out_w, p % g->out_w, col0);
        tw_matmul_s8(col0, NULL, p, 0, a->w, len, 0, a->out_c, &sink);
    }
}

/* Input pixel read by output pixel p of a 1x1 convolution, or NULL when it is padding. */
static const int8_t *pointwise_column(const tw_conv_args_t *a, int p)
{
    const tw_window_t *g = &a->win;
    int iy = (p / g->out_w) * g->s_h - g->pad_t;
    int ix = (p % g->out_w) * g->s_w - g->pad_l;
    if (iy < 0 || iy >= g->in_h || ix < 0 || ix >= g->in_w)
        return NULL;
    return a->in + ((size_t)iy * g->in_w + (size_t)ix) * a->in_c;
}

/* One pixel of a pointwise convolution: its input column, or the pad value everywhere. */
static void pointwise_pixel(const tw_conv_args_t *a, int p, const tw_mm_sink_t *sink)
{
    const int8_t *col = pointwise_column(a, p);
    if (col)
        tw_matmul_s8(col, NULL, p, 0, a->w, a->in_c, 0, a->out_c, sink);
    else
        tw_matmul_fill_s8(a->pad_value, p, a->w, a->in_c, 0, a->out_c, sink);
}

void tw_conv1x1_s8(const tw_conv_args_t *a, int core_id, int n_cores)
{
    const tw_window_t *g = &a->win;
    tw_mm_sink_t sink = conv_sink(a);
    int pair_begin, pair_end, p, p_end;

    tw_core_range((g->out_h * g->out_w + 1) / 2, core_id, n_cores, &pair_begin, &pair_end);
    p = 2 * pair_begin;
    p_end = 2 * pair_end < g->out_h * g->out_w ? 2 * pair_end : g->out_h * g->out_w;
    for (; p + 2 <= p_end; p += 2) {
        const int8_t *c0 = pointwise_column(a, p), *c1 = pointwise_column(a, p + 1);
        if (c0 && c1) {
            tw_matmul_s8(c0, c1, p, p + 1, a->w, a->in_c, 0, a->out_c, &sink);
        } else {
            pointwise_pixel(a, p, &sink);
            pointwise_pixel(a, p + 1, &sink);
        }
    }
    if (p < p_end)
        pointwise_pixel(a, p, &sink);
}
