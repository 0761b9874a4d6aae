/*
 * tw_pulp_lstm.c — the LSTM on the cluster (tw_pulp_lstm.h: contract and L1 layout).
 */
#include "tw_pulp_lstm.h"

#include <string.h>

#include "tw_hal.h"
#include "tw_pulp_common.h"
#include "tw_pulp_matmul.h"
#include "tw_requant.h"

#define ROUND4(v) (((v) + 3) & ~3)

static inline int32_t sat16(int32_t v)
{
    return v > 32767 ? 32767 : v < -32768 ? -32768 : v;
}

static void lstm_body(void *arg)
{
    const tw_pulp_lstm_t *a = (const tw_pulp_lstm_t *)arg;
    const tw_lstm_t lp = *a->p;   /* the constants on this core's stack (L1 on the cluster) */
    const tw_lstm_t *p = &lp;
    const int core = tw_core_id(), cores = tw_core_count();
    const int H = p->n_cell, I = p->n_input, IP = ROUND4(I), HP = ROUND4(H);
    int32_t *b = (int32_t *)(void *)a->l1;
    int16_t *c = (int16_t *)(void *)(a->l1 + 32 * H);
    int8_t *h = a->l1 + 32 * H + ROUND4(2 * H);
    int8_t *x = h + 2 * HP;
    const int8_t *wx = a->w_x, *wh = a->w_h;
    int k0, k1, n, t, k;

    tw_pulp_share(H, core, cores, &k0, &k1);
    memcpy(b + 8 * k0, a->b + 8 * k0, (size_t)(k1 - k0) * 32);
    if (a->weights_l1) {
        int8_t *w = x + 2 * IP;
        memcpy(w + (size_t)k0 * 4 * IP, a->w_x + (size_t)k0 * 4 * IP, (size_t)(k1 - k0) * 4 * IP);
        memcpy(w + (size_t)H * 4 * IP + (size_t)k0 * 4 * HP, a->w_h + (size_t)k0 * 4 * HP,
               (size_t)(k1 - k0) * 4 * HP);
        wx = w;
        wh = w + (size_t)H * 4 * IP;
    }
    if (core == 0) {   /* the padding lanes only (their weights are 0: any value would do) */
        memset(h + H, 0, (size_t)(HP - H));
        memset(h + HP + H, 0, (size_t)(HP - H));
        memset(x + I, 0, (size_t)(IP - I));
        memset(x + IP + I, 0, (size_t)(IP - I));
    }
    for (n = 0; n < a->batch; n++) {
        for (k = k0; k < k1; k++) {
            h[k] = (int8_t)p->state_zp;
            c[k] = 0;
        }
        if (core == 0)
            memcpy(x, a->x + (size_t)(a->time_major ? n : n * a->steps) * I, (size_t)I);
        tw_barrier();
        for (t = 0; t < a->steps; t++) {
            const int8_t *xt = x + (t & 1) * IP, *ht = h + (t & 1) * HP;
            int8_t *hn = h + ((t + 1) & 1) * HP;
            const int32_t row = a->time_major ? t * a->batch + n : n * a->steps + t;
            int8_t *y = a->y + (size_t)row * H;
            for (k = k0; k < k1; k++) {
                const int32_t *bk = b + 8 * k;
                int32_t ax[8], ah[8];
                int16_t g[4];
                int j;
                ax[0] = bk[0]; ax[2] = bk[2]; ax[4] = bk[4]; ax[6] = bk[6];
                ah[0] = bk[1]; ah[2] = bk[3]; ah[4] = bk[5]; ah[6] = bk[7];
                tw_pulp_dot_4x1_rows(xt, wx + (size_t)k * 4 * IP, IP, 1, IP, 0, ax);
                tw_pulp_dot_4x1_rows(ht, wh + (size_t)k * 4 * HP, HP, 1, HP, 0, ah);
                for (j = 0; j < 4; j++) {
                    int32_t v = sat16(tw_mbqm(ax[2 * j], p->in_mult[j], p->in_shift[j]));
                    g[j] = (int16_t)sat16(tw_mbqm(ah[2 * j], p->rec_mult[j], p->rec_shift[j]) + v);
                }
                hn[k] = y[k] = tw_lstm_cell(p, g[0], g[1], g[2], g[3], &c[k]);
            }
            if (core == 0 && t + 1 < a->steps) {
                const int32_t next = a->time_major ? (t + 1) * a->batch + n : n * a->steps + t + 1;
                memcpy(x + ((t + 1) & 1) * IP, a->x + (size_t)next * I, (size_t)I);
            }
            tw_barrier();
        }
    }
}

void tw_pulp_lstm(const tw_pulp_lstm_t *a, int cores)
{
    tw_fork(cores, lstm_body, (void *)a);
}
