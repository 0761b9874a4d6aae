/*
 * tw_ne16_kernels.c — the cluster's side of an NE16 layer (contract in tw_ne16_kernels.h).
 */
#include "tw_ne16_kernels.h"

#include <stddef.h>

void tw_ne16_to_u8(uint8_t *u, const int8_t *x, int n)
{
    int i = 0;
    if ((((uintptr_t)u | (uintptr_t)x) & 3u) == 0) {
        /* a word at a time: one lw, xor, sw (tw_pulp_lw / tw_pulp_sw: one instruction each on
         * the cluster, memcpy on Arm, bytes on the host) */
        for (; i + 4 <= n; i += 4)
            tw_pulp_sw((int8_t *)(void *)(u + i), tw_pulp_lw(x + i) ^ 0x80808080u);
    }
    for (; i < n; i++)
        u[i] = (uint8_t)((uint8_t)x[i] ^ 0x80u);
}

void tw_ne16_to_u8_part(uint8_t *u, const int8_t *x, int n, int core_id, int n_cores)
{
    /* word-aligned cuts, so that each core's part keeps the word path */
    int lo = (int)((long)n * core_id / n_cores) & ~3;
    int hi = core_id + 1 == n_cores ? n : (int)((long)n * (core_id + 1) / n_cores) & ~3;
    if (hi > lo)
        tw_ne16_to_u8(u + lo, x + lo, hi - lo);
}

/* acc + bias modulo 2^32 (the layer's accumulator). */
TW_PULP_INLINE int32_t acc_of(const int32_t *acc, const int32_t *bias, int j)
{
    return (int32_t)((uint32_t)acc[j] + (uint32_t)bias[j]);
}

/* Channels [k0, k0 + n) of one pixel: acc, bias and words read in order (w at channel k0), four
 * outputs per store (tw_pulp_rq4: the Arm build clamps them four lanes at a time). */
TW_PULP_INLINE void requant_run(const int32_t *acc, const int32_t *bias, const int32_t *w,
                                int8_t *out, int n, const tw_pulp_clip_t *clip, const int mode)
{
    int j;
    for (j = 0; j + 4 <= n; j += 4, w += 16)
        tw_pulp_sw(out + j, tw_pulp_rq4(w, clip, acc_of(acc, bias, j), acc_of(acc, bias, j + 1),
                                        acc_of(acc, bias, j + 2), acc_of(acc, bias, j + 3),
                                        mode));
    for (; j < n; j++, w += 4) {
        tw_pulp_rqch_t c = tw_pulp_rq_channel(w, 1, 0);
        out[j] = tw_pulp_rq(&c, clip, acc_of(acc, bias, j), mode);
    }
}

/* The core's equal run of the n·k outputs [begin, end), walked pixel by pixel: the rest of the
 * first pixel's channels, whole pixels, the first channels of the last one. */
TW_PULP_INLINE void requant(const tw_ne16_rq_args_t *a, int core, int cores, const int mode)
{
    tw_pulp_clip_t clip = tw_pulp_clip(a->rq.qmin, a->rq.qmax, a->rq.zero_point);
    const int32_t *const acc = a->acc, *const bias = a->bias, *const words = a->rq.words;
    int8_t *const out = a->out;
    const int k = a->k, total = a->n * a->k;
    int i = (int)((long)total * core / cores), end = (int)((long)total * (core + 1) / cores);
    int ch = i % k;
    while (i < end) {
        int run = k - ch < end - i ? k - ch : end - i;
        requant_run(acc + i, bias + ch, words + 4 * ch, out + i, run, &clip, mode);
        i += run;
        ch = 0;
    }
}

#define TW_NE16_RQ_DEF(name, mode)                                                            \
    void tw_ne16_requant_s8_##name(const tw_ne16_rq_args_t *a, int core_id, int n_cores)       \
    {                                                                                         \
        requant(a, core_id, n_cores, mode);                                                   \
    }

TW_PULP_VARIANTS(TW_NE16_RQ_DEF)
