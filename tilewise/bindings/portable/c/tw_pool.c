/*
 * tw_pool.c — int8 average / max / global average pooling (contract in tw_pool.h). Rows split
 * over cores for windowed pooling, channels for global pooling (seed 004 §3.3.2).
 */
#include "tw_pool.h"

#include <math.h>
#include <stddef.h>

#include "tw_requant.h"

/* TFLite's rounding division: to nearest, ties away from zero (C division truncates). */
static int32_t rounded_div(int32_t sum, int32_t count)
{
    return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

void tw_clipped_window(const tw_window_t *g, int oy, int ox, int *y0, int *y1, int *x0, int *x1)
{
    int top = oy * g->s_h - g->pad_t;
    int left = ox * g->s_w - g->pad_l;
    *y0 = top < 0 ? 0 : top;
    *x0 = left < 0 ? 0 : left;
    *y1 = top + g->k_h > g->in_h ? g->in_h : top + g->k_h;
    *x1 = left + g->k_w > g->in_w ? g->in_w : left + g->k_w;
}

void tw_avgpool_s8(const tw_pool_args_t *a, int core_id, int n_cores)
{
    const tw_window_t *g = &a->win;
    int p_begin, p_end, p, oy, ox, c, y, x;
    tw_core_range(g->out_h * g->out_w, core_id, n_cores, &p_begin, &p_end);
    for (p = p_begin; p < p_end; p++) {
        oy = p / g->out_w;
        ox = p % g->out_w;
        {
            int y0, y1, x0, x1;
            int8_t *out_px = a->out + ((size_t)oy * g->out_w + ox) * a->c;
            tw_clipped_window(g, oy, ox, &y0, &y1, &x0, &x1);
            for (c = 0; c < a->c; c++) {
                int32_t sum = 0, count = 0;
                for (y = y0; y < y1; y++)
                    for (x = x0; x < x1; x++) {
                        sum += a->in[((size_t)y * g->in_w + x) * a->c + c];
                        count++;
                    }
                out_px[c] = (int8_t)tw_clamp32(count ? rounded_div(sum, count) : 0, a->qmin, a->qmax);
            }
        }
    }
}

void tw_avgpool_onnx_s8(const tw_pool_args_t *a, const tw_avgpool_onnx_params_t *p, int core_id,
                        int n_cores)
{
    const tw_window_t *g = &a->win;
    int px_begin, px_end, px, oy, ox, c, y, x;
    tw_core_range(g->out_h * g->out_w, core_id, n_cores, &px_begin, &px_end);
    for (px = px_begin; px < px_end; px++) {
        oy = px / g->out_w;
        ox = px % g->out_w;
        {
            int y0, y1, x0, x1;
            int8_t *out_px = a->out + ((size_t)oy * g->out_w + ox) * a->c;
            int count;
            tw_clipped_window(g, oy, ox, &y0, &y1, &x0, &x1);
            count = p->count_include_pad ? g->k_h * g->k_w : (y1 - y0) * (x1 - x0);
            for (c = 0; c < a->c; c++) {
                float sum = 0.0f, v, q;
                int32_t r;
                for (y = y0; y < y1; y++)
                    for (x = x0; x < x1; x++) {
                        float d = p->x_scale *
                                  (float)((int32_t)a->in[((size_t)y * g->in_w + x) * a->c + c] - p->x_zp);
                        sum = sum + d;
                    }
                v = sum / (float)count;
                v = v / p->y_scale;
                v = v + (float)p->y_zp;
                q = nearbyintf(v);
                /* bound before converting (out-of-range float->int is undefined) */
                if (q > 1073741824.0f) q = 1073741824.0f;
                if (q < -1073741824.0f) q = -1073741824.0f;
                r = tw_clamp32((int32_t)q, p->qmin, p->qmax);
                out_px[c] = (int8_t)(r - p->out_offset);
            }
        }
    }
}

void tw_maxpool_s8(const tw_pool_args_t *a, int core_id, int n_cores)
{
    const tw_window_t *g = &a->win;
    int p_begin, p_end, p, oy, ox, c, y, x;
    tw_core_range(g->out_h * g->out_w, core_id, n_cores, &p_begin, &p_end);
    for (p = p_begin; p < p_end; p++) {
        oy = p / g->out_w;
        ox = p % g->out_w;
        {
            int y0, y1, x0, x1;
            int8_t *out_px = a->out + ((size_t)oy * g->out_w + ox) * a->c;
            tw_clipped_window(g, oy, ox, &y0, &y1, &x0, &x1);
            for (c = 0; c < a->c; c++) {
                int32_t m = -128;
                for (y = y0; y < y1; y++)
                    for (x = x0; x < x1; x++) {
                        int32_t v = a->in[((size_t)y * g->in_w + x) * a->c + c];
                        if (v > m) m = v;
                    }
                out_px[c] = (int8_t)tw_clamp32(m, a->qmin, a->qmax);
            }
        }
    }
}

void tw_global_avgpool_s8(const tw_gap_args_t *a, int core_id, int n_cores)
{
    int c_begin, c_end, c, p;
    tw_core_range(a->c, core_id, n_cores, &c_begin, &c_end);
    for (c = c_begin; c < c_end; c++) {
        int32_t acc = (a->acc_flags & TW_ACC_FIRST) ? 0 : a->acc[c];
        for (p = 0; p < a->pixels; p++)
            acc += a->in[(size_t)p * a->c + c] - a->in_zp;
        if (a->acc_flags & TW_ACC_LAST) {
            int32_t y = tw_mbqm(acc, a->mult, a->shift);
            if (a->divisor > 1)
                y = rounded_div(y, a->divisor);
            a->out[c] = (int8_t)tw_clamp32(y + a->out_zp, a->qmin, a->qmax);
        } else {
            a->acc[c] = acc;
        }
    }
}

void tw_global_avgpool_rq_s8(const tw_gap_rq_args_t *a, int core_id, int n_cores)
{
    int c_begin, c_end, c, p;
    tw_core_range(a->c, core_id, n_cores, &c_begin, &c_end);
    for (c = c_begin; c < c_end; c++) {
        int32_t acc = (a->acc_flags & TW_ACC_FIRST) ? 0 : a->acc[c];
        for (p = 0; p < a->pixels; p++)
            acc += a->in[(size_t)p * a->c + c] - a->in_zp;
        if (a->acc_flags & TW_ACC_LAST)
            a->out[c] = tw_requant(&a->rq, acc, c);
        else
            a->acc[c] = acc;
    }
}
