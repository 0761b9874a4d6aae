/*
 * tw_pulp_elementwise.h — int8 ADD / SUB / MUL with TFLite's requantization on the RI5CY
 * cluster: the portable tw_elementwise.h contract (same parameter structs, same arithmetic,
 * bit-exact with golden/elementwise.py; out may alias a or b), with every
 * MultiplyByQuantizedMultiplier in 32-bit arithmetic (tw_pulp_requant.h: mul + mulh, no 64-bit
 * C) and the clamp as p.max / p.min. The multipliers must not be -2^31 (the bindings check).
 * onnxruntime's QLinearAdd is float32 work either way (soft-float on rv32imc): the family keeps
 * the portable tw_add_onnx_s8 / _u8 for it.
 *
 * Core split: elements, balanced (tw_pulp_common.h). Same args on every core; barrier after.
 */
#ifndef TW_PULP_ELEMENTWISE_H
#define TW_PULP_ELEMENTWISE_H

#include <stdint.h>

#include "tw_elementwise.h"

void tw_pulp_add_s8(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores);
void tw_pulp_sub_s8(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores);
void tw_pulp_mul_s8(const tw_mul_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores);

#endif /* TW_PULP_ELEMENTWISE_H */
