/*
 * tw_svdf.h — LiteRT's integer SVDF (int8 input and output, int16 state), one core, whole layer.
 *
 * Semantics (LiteRT kernels/svdf.cc, reference_ops::EvalIntegerSVDF; tilewise golden/svdf.py):
 * for each batch row b, with F filters of M memory values (state row: filter f's values at
 * f·M .. f·M + M − 1, oldest first), U = F / rank units:
 *   1. the state row moves one value left;
 *   2. state[f·M + M − 1] = clamp_int16(MBQM(Σ_c w_feature[f·C + c]·(x[c] − x_zp), m1, s1));
 *   3. acc[u] = bias[u] + Σ_{r < rank} Σ_m w_time[(u·rank + r)·M + m]·state[(u·rank + r)·M + m]
 *      (int32, wrapping as the reference's int32 sums);
 *   4. y[u] = clamp_int8(MBQM(acc[u], m2, s2) + y_zp).
 * MBQM: TFLite's double-rounding MultiplyByQuantizedMultiplier (tw_requant.h tw_mbqm). `bias` may
 * be NULL. The state is the caller's: it keeps it between calls (the generated network.c gives
 * it its static place in the memory plan; network.h declares the reset that zeroes it).
 */
#ifndef TW_SVDF_H
#define TW_SVDF_H

#include <stdint.h>

void tw_svdf_s8(const int8_t *x, int16_t *state, int8_t *y, const int8_t *w_feature,
                const int16_t *w_time, const int32_t *bias, int32_t batch, int32_t inputs,
                int32_t filters, int32_t memory, int32_t rank, int32_t x_zp, int32_t m1, int32_t s1,
                int32_t m2, int32_t s2, int32_t y_zp);

#endif /* TW_SVDF_H */
