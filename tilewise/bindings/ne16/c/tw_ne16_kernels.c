/*
 * tw_ne16_kernels.c — the cluster's side of an NE16 layer (contract in tw_ne16_kernels.h).
 */
#include "tw_ne16_kernels.h"

#include <stddef.h>
#include <string.h>

void tw_ne16_to_u8(uint8_t *u, const int8_t *x, int n)
{
    int i = 0;
    if ((((uintptr_t)u | (uintptr_t)x) & 3u) == 0) {
        for (; i + 4 <= n; i += 4) {
            uint32_t v;
            memcpy(&v, x + i, 4);
            v ^= 0x80808080u;
            memcpy(u + i, &v, 4);
        }
    }
    for (; i < n; i++)
        u[i] = (uint8_t)((uint8_t)x[i] ^ 0x80u);
}

TW_PULP_INLINE void requant(const tw_ne16_rq_args_t *a, int core, int cores, const int mode)
{
    tw_pulp_clip_t clip = tw_pulp_clip(a->rq.qmin, a->rq.qmax, a->rq.zero_point);
    int total = a->n * a->k, begin = (int)((long)total * core / cores);
    int end = (int)((long)total * (core + 1) / cores), i, k;
    if (begin >= end)
        return;
    k = begin % a->k;
    for (i = begin; i < end; i++) {
        tw_pulp_rqch_t c = tw_pulp_rq_channel(a->rq.words, a->rq.n, k);
        int32_t acc = (int32_t)((uint32_t)a->acc[i] + (uint32_t)a->bias[k]);
        a->out[i] = tw_pulp_rq(&c, &clip, acc, mode);
        if (++k == a->k)
            k = 0;
    }
}

#define TW_NE16_RQ_DEF(name, mode)                                                            \
    void tw_ne16_requant_s8_##name(const tw_ne16_rq_args_t *a, int core_id, int n_cores)       \
    {                                                                                         \
        requant(a, core_id, n_cores, mode);                                                   \
    }

TW_PULP_VARIANTS(TW_NE16_RQ_DEF)
