/*
 * tw_pulp_svdf.h — LiteRT's integer SVDF (tw_svdf.h tw_svdf_s8, golden/svdf.py) on the cluster's
 * cores (bindings/pulp/svdf.py), bit for bit the portable kernel's arithmetic.
 *
 * Core 0 moves the layer's operands into L1 by DMA (the feature and time weights, the bias, the
 * int16 state of every batch row, the input); per batch row the cores split the filters — each
 * shifts its filters' state rows by one step and writes their newest column (the feature product
 * over C, requantized into int16: tw_mbqm, saturated) — then, after a barrier, the units — each
 * unit's time product over its rank filters' M steps (LiteRT's uint32 accumulation), requantized
 * into int8; core 0 moves the state and the outputs back. Shifting filter by filter equals the
 * portable kernel's shift of the whole row: the one value a filter's row takes from the next
 * filter's is its newest column, which the feature product overwrites.
 *
 * L1 (`l1`, the layer's scratch, word-aligned; bindings/pulp/svdf.py l1_layout is the same):
 *   w_feature int8 [F][C] | w_time int16 [F][M] | bias int32 [U] | state int16 [B][F·M] |
 *   x int8 [B][C] | y int8 [B][U]   (each part rounded up to 4 bytes)
 */
#ifndef TW_PULP_SVDF_H
#define TW_PULP_SVDF_H

#include <stdint.h>

typedef struct {
    const int8_t *x;           /* L2 [B][C] */
    int16_t *state;            /* L2 [B][F·M], updated in place */
    int8_t *y;                 /* L2 [B][U] */
    const int8_t *w_feature;   /* [F][C] */
    const int16_t *w_time;     /* [F][M] */
    const int32_t *bias;       /* [U] or NULL */
    int8_t *l1;
    int32_t batch, inputs, filters, memory, rank;
    int32_t x_zp, m1, s1, m2, s2, y_zp;
} tw_pulp_svdf_t;

/* Called outside a fork; forks `cores` cores itself. */
void tw_pulp_svdf(const tw_pulp_svdf_t *a, int cores);

#endif /* TW_PULP_SVDF_H */
