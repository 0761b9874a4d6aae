/*
 * tw_common.c — checks shared by the windowed kernels (tile geometry contract in tw_common.h).
 */
#include "tw_common.h"

int tw_window_valid(const tw_window_t *g)
{
    int eff_h, eff_w;
    if (g->in_h < 1 || g->in_w < 1 || g->out_h < 1 || g->out_w < 1) return 0;
    if (g->k_h < 1 || g->k_w < 1 || g->s_h < 1 || g->s_w < 1 || g->d_h < 1 || g->d_w < 1) return 0;
    if (g->pad_t < 0 || g->pad_l < 0 || g->pad_b < 0 || g->pad_r < 0) return 0;
    eff_h = g->d_h * (g->k_h - 1) + 1;
    eff_w = g->d_w * (g->k_w - 1) + 1;
    /* the last output pixel's window must end inside input + padding */
    if ((g->out_h - 1) * g->s_h + eff_h > g->pad_t + g->in_h + g->pad_b) return 0;
    if ((g->out_w - 1) * g->s_w + eff_w > g->pad_l + g->in_w + g->pad_r) return 0;
    return 1;
}
