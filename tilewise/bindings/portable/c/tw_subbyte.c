/*
 * tw_subbyte.c — the portable sub-byte kernels (contract and packed layout in tw_subbyte.h).
 */
#include "tw_subbyte.h"

#include <stdint.h>

/* The input value of tap (iy, ix) at channel c, or the pad value outside the input. */
static int32_t tap(const tw_sb_conv_t *g, const int8_t *in, int iy, int ix, int c)
{
    if (iy < 0 || iy >= g->in_h || ix < 0 || ix >= g->in_w)
        return g->pad_value;
    return tw_sb_act(in, ((int32_t)iy * g->in_w + ix) * g->in_c + c, g->x_bits);
}

/* The accumulator of output pixel (oy, ox), channel k, before requantization. */
static int32_t accumulate(const tw_sb_conv_t *g, const int8_t *in, const int8_t *w, int32_t acc,
                          int oy, int ox, int k)
{
    int fy, fx, c;
    for (fy = 0; fy < g->k_h; fy++) {
        int iy = oy * g->s_h - g->pad_t + fy;
        for (fx = 0; fx < g->k_w; fx++) {
            int ix = ox * g->s_w - g->pad_l + fx;
            if (g->depthwise) {
                int32_t wi = ((int32_t)fy * g->k_w + fx) * g->out_c + k;
                acc += tap(g, in, iy, ix, k) * tw_sb_weight(w, wi, g->w_bits);
                continue;
            }
            for (c = 0; c < g->in_c; c++) {
                int32_t wi = (((int32_t)k * g->k_h + fy) * g->k_w + fx) * g->in_c + c;
                acc += tap(g, in, iy, ix, c) * tw_sb_weight(w, wi, g->w_bits);
            }
        }
    }
    return acc;
}

void tw_sb_conv(const tw_sb_conv_t *g, const int8_t *in, const int8_t *w, const int32_t *bias,
                const tw_requant_t *rq, int8_t *out)
{
    int oy, ox, k;
    for (oy = 0; oy < g->out_h; oy++) {
        for (ox = 0; ox < g->out_w; ox++) {
            for (k = 0; k < g->out_c; k++) {
                int32_t acc = accumulate(g, in, w, bias ? bias[k] : 0, oy, ox, k);
                int32_t o = ((int32_t)oy * g->out_w + ox) * g->out_c + k;
                acc = tw_acc_wrap(acc, g->acc_bits);
                tw_sb_store(out, o, g->y_bits, (int32_t)tw_requant(rq, acc, k));
            }
        }
    }
}

void tw_sb_maxpool(const tw_sb_conv_t *g, const int8_t *in, int32_t qmin, int32_t qmax,
                   int8_t *out)
{
    int oy, ox, k, fy, fx;
    for (oy = 0; oy < g->out_h; oy++) {
        for (ox = 0; ox < g->out_w; ox++) {
            for (k = 0; k < g->out_c; k++) {
                int32_t m = INT32_MIN;
                for (fy = 0; fy < g->k_h; fy++) {
                    int iy = oy * g->s_h - g->pad_t + fy;
                    for (fx = 0; fx < g->k_w; fx++) {
                        int ix = ox * g->s_w - g->pad_l + fx;
                        int32_t v;
                        if (iy < 0 || iy >= g->in_h || ix < 0 || ix >= g->in_w)
                            continue;
                        v = tw_sb_act(in, ((int32_t)iy * g->in_w + ix) * g->in_c + k, g->x_bits);
                        m = v > m ? v : m;
                    }
                }
                m = m < qmin ? qmin : m > qmax ? qmax : m;
                tw_sb_store(out, ((int32_t)oy * g->out_w + ox) * g->out_c + k, g->y_bits, m);
            }
        }
    }
}
