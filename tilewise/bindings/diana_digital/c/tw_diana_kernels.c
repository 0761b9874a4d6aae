/*
 * tw_diana_kernels.c — the host core's side of a digital-accelerator layer (contract in
 * tw_diana_kernels.h).
 */
#include "tw_diana_kernels.h"

void tw_diana_requant_s8(const int32_t *acc, const tw_requant_t *rq, int8_t *out, int n, int k)
{
    int p, c;
    for (p = 0; p < n; p++) {
        for (c = 0; c < k; c++)
            out[p * k + c] = tw_requant(rq, acc[p * k + c], c);
    }
}
