/*
 * tw_pulp_lstm16.c — the 16x8 LSTM on the cluster (tw_pulp_lstm16.h: contract and L1 layout).
 */
#include "tw_pulp_lstm16.h"

#include <string.h>

#include "tw_hal.h"
#include "tw_pulp_common.h"
#include "tw_pulp_isa.h"

#define ROUND2(v) (((v) + 1) & ~1)
#define ROUND8(v) (((v) + 7) & ~7)

/* pv.sdotsp.h: acc + a.lo*b.lo + a.hi*b.hi (int16 lanes into int32); smlad on ARMv7E-M. */
TW_PULP_INLINE int32_t sdot2(int32_t acc, tw_v4_t a, tw_v4_t b)
{
#if TW_PULP_ASM
    __asm__(".insn r 0x57, 0, 0x5C, %0, %1, %2" : "+r"(acc) : "r"(a), "r"(b));
    return acc;
#elif TW_PULP_ARM
    return __smlad(a, b, acc);
#else
    return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a & 0xFFFFu) * (int16_t)(b & 0xFFFFu))
                     + (uint32_t)((int32_t)(int16_t)(a >> 16) * (int16_t)(b >> 16)));
#endif
}

/* acc[g] = sum over n (even) int16 terms of v . w[g][:], the four rows w + g*n. */
TW_PULP_INLINE void dot_4x1(const int16_t *v, const int16_t *w, int n, int32_t *acc)
{
    const int8_t *pv = (const int8_t *)(const void *)v, *pw = (const int8_t *)(const void *)w;
    const int stride = 2 * n;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int j;
    for (j = 0; j < 2 * n; j += 4) {
        tw_v4_t xv = tw_pulp_lw(pv + j);
        a0 = sdot2(a0, xv, tw_pulp_lw(pw + j));
        a1 = sdot2(a1, xv, tw_pulp_lw(pw + stride + j));
        a2 = sdot2(a2, xv, tw_pulp_lw(pw + 2 * stride + j));
        a3 = sdot2(a3, xv, tw_pulp_lw(pw + 3 * stride + j));
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

static void lstm16_body(void *arg)
{
    const tw_pulp_lstm16_t *a = (const tw_pulp_lstm16_t *)arg;
    const tw_lstm16_t lp = *a->p;   /* the constants on this core's stack (L1 on the cluster) */
    const tw_lstm16_t *p = &lp;
    const int core = tw_core_id(), cores = tw_core_count();
    const int H = p->n_cell, I = p->n_input, IP = ROUND2(I), HP = ROUND2(H);
    int64_t *b = (int64_t *)(void *)a->l1;
    int16_t *c = (int16_t *)(void *)(a->l1 + 32 * H);
    int16_t *h = (int16_t *)(void *)(a->l1 + 32 * H + ROUND8(2 * H));
    int16_t *x = h + 2 * HP;
    const int16_t *wx = a->w_x, *wh = a->w_h;
    int k0, k1, n, t, k;

    tw_pulp_share(H, core, cores, &k0, &k1);
    memcpy(b + 4 * k0, a->b + 4 * k0, (size_t)(k1 - k0) * 32);
    if (a->weights_l1) {
        int16_t *w = x + 2 * IP;
        memcpy(w + (size_t)k0 * 4 * IP, a->w_x + (size_t)k0 * 4 * IP, (size_t)(k1 - k0) * 8 * IP);
        memcpy(w + (size_t)H * 4 * IP + (size_t)k0 * 4 * HP, a->w_h + (size_t)k0 * 4 * HP,
               (size_t)(k1 - k0) * 8 * HP);
        wx = w;
        wh = w + (size_t)H * 4 * IP;
    }
    if (core == 0) {   /* the padding lanes only (their weights are 0: any value would do) */
        if (HP > H) h[H] = h[HP + H] = 0;
        if (IP > I) x[I] = x[IP + I] = 0;
    }
    for (n = 0; n < a->batch; n++) {
        for (k = k0; k < k1; k++) {
            h[k] = 0;
            c[k] = 0;
        }
        if (core == 0)
            memcpy(x, a->x + (size_t)(a->time_major ? n : n * a->steps) * I, (size_t)I * 2);
        tw_barrier();
        for (t = 0; t < a->steps; t++) {
            const int16_t *xt = x + (t & 1) * IP, *ht = h + (t & 1) * HP;
            int16_t *hn = h + ((t + 1) & 1) * HP;
            const int32_t row = a->time_major ? t * a->batch + n : n * a->steps + t;
            int16_t *y = a->y + (size_t)row * H;
            for (k = k0; k < k1; k++) {
                const int64_t *bk = b + 4 * k;
                int32_t ax[4], ah[4];
                int16_t g[4];
                int j;
                dot_4x1(xt, wx + (size_t)k * 4 * IP, IP, ax);
                dot_4x1(ht, wh + (size_t)k * 4 * HP, HP, ah);
                for (j = 0; j < 4; j++) {
                    int32_t v = tw_lstm16_rescale(ax[j] + bk[j], p->in_mult[j], p->in_shift[j])
                              + tw_lstm16_rescale(ah[j], p->rec_mult[j], p->rec_shift[j]);
                    g[j] = (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
                }
                hn[k] = y[k] = tw_lstm16_cell(p, g[0], g[1], g[2], g[3], &c[k]);
            }
            if (core == 0 && t + 1 < a->steps) {
                const int32_t next = a->time_major ? (t + 1) * a->batch + n : n * a->steps + t + 1;
                memcpy(x + ((t + 1) & 1) * IP, a->x + (size_t)next * I, (size_t)I * 2);
            }
            tw_barrier();
        }
    }
}

void tw_pulp_lstm16(const tw_pulp_lstm16_t *a, int cores)
{
    tw_fork(cores, lstm16_body, (void *)a);
}
