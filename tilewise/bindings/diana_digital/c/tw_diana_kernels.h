/*
 * tw_diana_kernels.h — what a layer file run on DIANA's digital accelerator calls: the job API
 * (tw_diana_digital.h) and the host core's requantization of a job's int32 outputs (below).
 *
 * tw_diana_requant_s8(acc, rq, out, n, k): out[p][c] = tw_requant(rq, acc[p][c], c) for the n
 * pixels x k channels of a tile (tw_requant.h: the portable kernels' requantization in the
 * layer's mode, per-channel words indexed by the tile-local channel). One core.
 */
#ifndef TW_DIANA_KERNELS_H
#define TW_DIANA_KERNELS_H

#include <stdint.h>

#include "tw_diana_digital.h"
#include "tw_requant.h"

void tw_diana_requant_s8(const int32_t *acc, const tw_requant_t *rq, int8_t *out, int n, int k);

#endif /* TW_DIANA_KERNELS_H */
