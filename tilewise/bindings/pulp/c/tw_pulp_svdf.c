/* tw_pulp_svdf.c — LiteRT's integer SVDF on the cluster (tw_pulp_svdf.h). */
#include "tw_pulp_svdf.h"

#include <stddef.h>

#include "tw_hal.h"
#include "tw_pulp_common.h"
#include "tw_requant.h"

#define R4(n) ((((size_t)(n)) + 3u) & ~(size_t)3u)

static void svdf_body(void *arg)
{
    const tw_pulp_svdf_t *a = (const tw_pulp_svdf_t *)arg;
    const int core = tw_core_id(), cores = tw_core_count();
    const int32_t C = a->inputs, F = a->filters, M = a->memory, U = F / a->rank, row = F * M;
    int8_t *wf = a->l1;
    int16_t *wt = (int16_t *)(void *)(a->l1 + R4(F * C));
    int32_t *bias = (int32_t *)(void *)((int8_t *)wt + R4(2 * F * M));
    int16_t *state = (int16_t *)(void *)((int8_t *)bias + 4 * (a->bias ? U : 0));
    int8_t *x = (int8_t *)state + R4(2 * a->batch * row);
    int8_t *y = x + R4(a->batch * C);
    int32_t b, f, c, m, u, r;
    int f0, f1, u0, u1;

    if (core == 0) {
        tw_dma_id_t ids[5];
        int n = 0, i;
        ids[n++] = tw_dma_copy_1d(wf, (void *)a->w_feature, (uint32_t)(F * C), TW_DMA_L2_TO_L1);
        ids[n++] = tw_dma_copy_1d(wt, (void *)a->w_time, (uint32_t)(2 * F * M), TW_DMA_L2_TO_L1);
        if (a->bias)
            ids[n++] = tw_dma_copy_1d(bias, (void *)a->bias, (uint32_t)(4 * U), TW_DMA_L2_TO_L1);
        ids[n++] = tw_dma_copy_1d(state, a->state, (uint32_t)(2 * a->batch * row), TW_DMA_L2_TO_L1);
        ids[n++] = tw_dma_copy_1d(x, (void *)a->x, (uint32_t)(a->batch * C), TW_DMA_L2_TO_L1);
        for (i = 0; i < n; i++)
            tw_dma_wait(ids[i]);
    }
    tw_barrier();
    tw_pulp_share(F, core, cores, &f0, &f1);
    tw_pulp_share(U, core, cores, &u0, &u1);
    for (b = 0; b < a->batch; b++) {
        int16_t *st = state + (size_t)b * row;
        const int8_t *xb = x + (size_t)b * C;
        for (f = f0; f < f1; f++) {           /* 1., 2.: the filter's row one step on, its newest value */
            int16_t *sf = st + (size_t)f * M;
            const int8_t *w = wf + (size_t)f * C;
            int32_t acc = 0;
            for (m = 0; m + 1 < M; m++)
                sf[m] = sf[m + 1];
            for (c = 0; c < C; c++)
                acc += (int32_t)w[c] * ((int32_t)xb[c] - a->x_zp);
            acc = tw_mbqm(acc, a->m1, a->s1);
            sf[M - 1] = (int16_t)(acc < -32768 ? -32768 : acc > 32767 ? 32767 : acc);
        }
        tw_barrier();
        for (u = u0; u < u1; u++) {           /* 3., 4.: time weights, rank reduction, requant */
            uint32_t acc = a->bias ? (uint32_t)bias[u] : 0u;
            for (r = 0; r < a->rank; r++) {
                const int16_t *w = wt + (size_t)(u * a->rank + r) * M;
                const int16_t *sv = st + (size_t)(u * a->rank + r) * M;
                for (m = 0; m < M; m++)
                    acc += (uint32_t)((int32_t)w[m] * (int32_t)sv[m]);
            }
            {
                int32_t v = tw_mbqm((int32_t)acc, a->m2, a->s2) + a->y_zp;
                y[(size_t)b * U + u] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
            }
        }
        tw_barrier();
    }
    if (core == 0) {
        tw_dma_id_t ids = tw_dma_copy_1d(state, a->state, (uint32_t)(2 * a->batch * row), TW_DMA_L1_TO_L2);
        tw_dma_wait(tw_dma_copy_1d(y, a->y, (uint32_t)(a->batch * U), TW_DMA_L1_TO_L2));
        tw_dma_wait(ids);
    }
}

void tw_pulp_svdf(const tw_pulp_svdf_t *a, int cores)
{
    tw_fork(cores, svdf_body, (void *)a);
}
