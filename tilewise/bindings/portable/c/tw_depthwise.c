/*
 * tw_depthwise.c — int8 depthwise convolution of one HWC tile, output channels split over cores
 * (seed 001 §4.3, seed 004 §3.3.2). Contract in tw_depthwise.h.
 */
#include "tw_depthwise.h"

#include <stddef.h>

void tw_depthwise_s8(const tw_dw_args_t *a, int core_id, int n_cores)
{
    const tw_window_t *g = &a->win;
    int out_c = a->in_c * a->depth_mult;
    int k_begin, k_end, oy, ox, k, fy, fx;

    tw_core_range(out_c, core_id, n_cores, &k_begin, &k_end);
    for (oy = 0; oy < g->out_h; oy++) {
        for (ox = 0; ox < g->out_w; ox++) {
            int8_t *out_px = a->out + ((size_t)oy * g->out_w + ox) * out_c;
            for (k = k_begin; k < k_end; k++) {
                int c = k / a->depth_mult;
                int32_t acc = a->bias ? a->bias[k] : 0;
                for (fy = 0; fy < g->k_h; fy++) {
                    int iy = oy * g->s_h - g->pad_t + fy * g->d_h;
                    for (fx = 0; fx < g->k_w; fx++) {
                        int ix = ox * g->s_w - g->pad_l + fx * g->d_w;
                        int32_t x = a->pad_value;
                        if (iy >= 0 && iy < g->in_h && ix >= 0 && ix < g->in_w)
                            x = a->in[((size_t)iy * g->in_w + ix) * a->in_c + c];
                        acc += x * a->w[((size_t)fy * g->k_w + fx) * out_c + k];
                    }
                }
                out_px[k] = tw_requant(&a->rq, tw_acc_wrap(acc, a->acc_bits), k);
            }
        }
    }
}
