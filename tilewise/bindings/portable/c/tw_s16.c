/*
 * tw_s16.c — 16x8 convolution and fully connected of one HWC tile (contract in tw_s16.h): a
 * direct loop per output value with an int64 accumulator (TFLite's 16x8 reference kernels).
 */
#include "tw_s16.h"

#include "tw_requant.h"

/* Accumulate output value (p, k) with the C-tiling flags: start, then either store the partial
 * sum or requantize. */
static void finish(const tw_conv16_args_t *a, int p, int k, int64_t acc)
{
    size_t i = (size_t)p * (size_t)a->out_c + (size_t)k;
    if (!(a->acc_flags & TW_ACC_LAST))
        a->psum[i] = (int32_t)acc;
    else if (a->out_bytes == 1)
        ((int8_t *)a->out)[i] = (int8_t)tw_requant16(&a->rq, acc, k);
    else
        ((int16_t *)a->out)[i] = (int16_t)tw_requant16(&a->rq, acc, k);
}

/* Σ x[c]·w[c] over n channels: in int32 when the caller proved every accumulator fits (acc32),
 * else each product widened to int64. */
static inline int64_t dot16(const int16_t *x, const int8_t *w, int n, int acc32)
{
    int c;
    if (acc32) {
        int32_t s = 0;
        for (c = 0; c < n; c++) s += (int32_t)x[c] * w[c];
        return s;
    } else {
        int64_t s = 0;
        for (c = 0; c < n; c++) s += (int64_t)((int32_t)x[c] * w[c]);
        return s;
    }
}

static int64_t start(const tw_conv16_args_t *a, int p, int k)
{
    if (a->acc_flags & TW_ACC_FIRST)
        return a->bias ? a->bias[k] : 0;
    return a->psum[(size_t)p * (size_t)a->out_c + (size_t)k];
}

void tw_conv2d_s16(const tw_conv16_args_t *a, int core_id, int n_cores)
{
    const tw_window_t *g = &a->win;
    int p_begin, p_end, p, oy, ox, k, fy, fx, c;

    /* output pixels over the cores (rows would leave cores idle on a 1-D or few-row tile) */
    tw_core_range(g->out_h * g->out_w, core_id, n_cores, &p_begin, &p_end);
    for (p = p_begin; p < p_end; p++) {
        oy = p / g->out_w;
        ox = p % g->out_w;
        {
            for (k = 0; k < a->out_c; k++) {
                int64_t acc = start(a, p, k);
                const int8_t *wk = a->w + (size_t)k * g->k_h * g->k_w * a->in_c;
                for (fy = 0; fy < g->k_h; fy++) {
                    int iy = oy * g->s_h - g->pad_t + fy * g->d_h;
                    for (fx = 0; fx < g->k_w; fx++) {
                        int ix = ox * g->s_w - g->pad_l + fx * g->d_w;
                        const int8_t *wt = wk + ((size_t)fy * g->k_w + fx) * a->in_c;
                        if (iy < 0 || iy >= g->in_h || ix < 0 || ix >= g->in_w) {
                            for (c = 0; c < a->in_c; c++)
                                acc += (int64_t)a->pad_value * wt[c];
                        } else {
                            acc += dot16(a->in + ((size_t)iy * g->in_w + ix) * a->in_c, wt, a->in_c,
                                         a->acc32);
                        }
                    }
                }
                finish(a, p, k, acc);
            }
        }
    }
}

void tw_fully_connected_s16(const tw_conv16_args_t *a, int core_id, int n_cores)
{
    int k_begin, k_end, k;

    tw_core_range(a->out_c, core_id, n_cores, &k_begin, &k_end);
    for (k = k_begin; k < k_end; k++) {
        const int8_t *wk = a->w + (size_t)k * a->in_c;
        int64_t acc = start(a, 0, k);
        acc += dot16(a->in, wk, a->in_c, a->acc32);
        finish(a, 0, k, acc);
    }
}

static void add_or_sub16(const tw_add_params_t *p, const int16_t *a, const int16_t *b, int16_t *out,
                         int n, int sign, int core_id, int n_cores)
{
    int begin, end, i;
    tw_core_range(n, core_id, n_cores, &begin, &end);
    for (i = begin; i < end; i++) out[i] = (int16_t)tw_add_value(p, a[i], b[i], sign);
}

void tw_add_s16(const tw_add_params_t *p, const int16_t *a, const int16_t *b, int16_t *out, int n,
                int core_id, int n_cores)
{
    add_or_sub16(p, a, b, out, n, 1, core_id, n_cores);
}

void tw_sub_s16(const tw_add_params_t *p, const int16_t *a, const int16_t *b, int16_t *out, int n,
                int core_id, int n_cores)
{
    add_or_sub16(p, a, b, out, n, -1, core_id, n_cores);
}

void tw_mul_s16(const tw_mul_params_t *p, const int16_t *a, const int16_t *b, int16_t *out, int n,
                int core_id, int n_cores)
{
    int begin, end, i;
    tw_core_range(n, core_id, n_cores, &begin, &end);
    for (i = begin; i < end; i++) out[i] = (int16_t)tw_mul_value(p, a[i], b[i]);
}

void tw_depthwise_s16(const tw_conv16_args_t *a, int core_id, int n_cores)
{
    const tw_window_t *g = &a->win;
    int p_begin, p_end, p, oy, ox, k, fy, fx;

    /* output pixels over the cores (rows would leave cores idle on a 1-D or few-row tile) */
    tw_core_range(g->out_h * g->out_w, core_id, n_cores, &p_begin, &p_end);
    for (p = p_begin; p < p_end; p++) {
        oy = p / g->out_w;
        ox = p % g->out_w;
        {
            for (k = 0; k < a->out_c; k++) {
                int64_t acc = start(a, p, k);
                for (fy = 0; fy < g->k_h; fy++) {
                    int iy = oy * g->s_h - g->pad_t + fy * g->d_h;
                    for (fx = 0; fx < g->k_w; fx++) {
                        int ix = ox * g->s_w - g->pad_l + fx * g->d_w;
                        int32_t w = a->w[((size_t)fy * g->k_w + fx) * a->out_c + k];
                        int32_t x = (iy < 0 || iy >= g->in_h || ix < 0 || ix >= g->in_w)
                                        ? a->pad_value
                                        : a->in[((size_t)iy * g->in_w + ix) * a->in_c + k];
                        acc += (int64_t)(x * w);
                    }
                }
                finish(a, p, k, acc);
            }
        }
    }
}

/* is_max: the maximum of the valid taps, else their rounded average (TFLite's rounding division:
 * to nearest, ties away from zero). */
static void pool16(const tw_pool16_args_t *a, int is_max, int core_id, int n_cores)
{
    const tw_window_t *g = &a->win;
    int p_begin, p_end, p, oy, ox, c, y, x;
    tw_core_range(g->out_h * g->out_w, core_id, n_cores, &p_begin, &p_end);
    for (p = p_begin; p < p_end; p++) {
        oy = p / g->out_w;
        ox = p % g->out_w;
        {
            int y0, y1, x0, x1;
            int16_t *out_px = a->out + ((size_t)oy * g->out_w + ox) * a->c;
            tw_clipped_window(g, oy, ox, &y0, &y1, &x0, &x1);
            for (c = 0; c < a->c; c++) {
                int32_t sum = 0, count = 0, best = INT32_MIN, v;
                for (y = y0; y < y1; y++)
                    for (x = x0; x < x1; x++) {
                        v = a->in[((size_t)y * g->in_w + x) * a->c + c];
                        sum += v;
                        if (v > best) best = v;
                        count++;
                    }
                if (is_max)
                    v = best;
                else if (count == 0)
                    v = 0;
                else
                    v = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
                out_px[c] = (int16_t)tw_clamp32(v, a->qmin, a->qmax);
            }
        }
    }
}

void tw_avgpool_s16(const tw_pool16_args_t *a, int core_id, int n_cores)
{
    pool16(a, 0, core_id, n_cores);
}

void tw_maxpool_s16(const tw_pool16_args_t *a, int core_id, int n_cores)
{
    pool16(a, 1, core_id, n_cores);
}
