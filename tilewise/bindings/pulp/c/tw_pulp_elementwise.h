/*
 * tw_pulp_elementwise.h — int8 ADD / SUB / MUL with TFLite's requantization on the RI5CY
 * cluster: the portable tw_elementwise.h contract (same parameter structs, same arithmetic,
 * bit-exact with golden/elementwise.py; out may alias a or b), with every
 * MultiplyByQuantizedMultiplier in 32-bit arithmetic (tw_pulp_requant.h: mul + mulh, no 64-bit
 * C) and the clamp as p.max / p.min. The multipliers must not be -2^31 (the bindings check).
 * onnxruntime's QLinearAdd: tw_pulp_add_onnx_exact_s8 is the portable tw_add_onnx_exact_s8
 * (integers, its parameter struct) with the rounding in 32-bit words (p.fl1 / clz); where
 * those integers do not exist the family keeps the portable float tw_add_onnx_s8 / _u8. Where
 * bindings/pulp/addfold.py fold_onnx proves it for the layer (every pair of codes), the onnx add
 * runs in the folded form below too, on tables the compiler computes (tw_pulp_add_fold_copy).
 *
 * ADD / SUB run on per-layer tables of both inputs' scaled values (tw_pulp_elementwise.c): in
 * the folded form (tw_pulp_add_fold_*) the output's requantization and zero point are folded
 * into the tables and an element is two table reads, an add-and-shift and the clamp — exact
 * where bindings/pulp/addfold.py proves it for the layer by enumerating every pair of codes;
 * elsewhere tw_pulp_add_s8 requantizes every sum.
 *
 * Core split: elements, balanced (tw_pulp_common.h). Same args on every core; barrier after.
 */
#ifndef TW_PULP_ELEMENTWISE_H
#define TW_PULP_ELEMENTWISE_H

#include <stdint.h>

#include "tw_elementwise.h"

/* Entries of each input's table (int8 values -128..127). */
#define TW_PULP_ADD_VALUES 256

/* The tables of an ADD (sub = 0) or SUB (sub = 1): `tables` holds 2·TW_PULP_ADD_VALUES int32,
 * a's then b's scaled value of every int8 input (b's negated for SUB). Every core computes its
 * share; a barrier must follow before tw_pulp_add_s8 reads them. */
void tw_pulp_add_tables(const tw_add_params_t *p, int32_t *tables, int sub, int core_id,
                        int n_cores);
/* out = clamp(MBQM(tables_a[a] + tables_b[b], out) + out_zp): ADD or SUB by its tables. right:
 * the output's MBQM in the one-rounding form (TW_PULP_RQ_TFLITE_RIGHT), exact when out_shift is
 * in [-31, -1] and |a table sum| + 2^(-out_shift - 1) <= INT32_MAX (the caller checks). */
void tw_pulp_add_s8(const tw_add_params_t *p, const int32_t *tables, int right,
                    const int8_t *a, const int8_t *b, int8_t *out, int n, int core_id,
                    int n_cores);
/* The folded form's constants (bindings/pulp/addfold.py Fold): table entry of input x's scaled
 * value v = (v·out_mult + (x_hi:x_lo)) >> k, 64-bit, in [0, 63]; the output (TA + TB) >> shift,
 * shift in [0, 31]. */
typedef struct {
    int32_t a_lo, a_hi, b_lo, b_hi;
    int32_t k, shift;
} tw_add_fold_t;

/* The folded tables of an ADD (sub = 0) or SUB (sub = 1) into `tables` (2·TW_PULP_ADD_VALUES
 * int32): a's then b's entry of every int8 input, indexed by the input's byte as unsigned
 * (entry u for the value (int8_t)u). Every core computes its share; a barrier must follow. */
void tw_pulp_add_fold_tables(const tw_add_params_t *p, const tw_add_fold_t *f, int32_t *tables,
                             int sub, int core_id, int n_cores);
/* The folded tables of an onnx add (bindings/pulp/addfold.py fold_onnx, computed at compile
 * time: `src`, 2·TW_PULP_ADD_VALUES int32 in the layout above) copied into `tables`. Every core
 * copies its share; a barrier must follow. */
void tw_pulp_add_fold_copy(const int32_t *src, int32_t *tables, int core_id, int n_cores);
/* out = clamp((TA[a] + TB[b]) >> shift, qmin, qmax) on the folded tables (p: the clamp). */
void tw_pulp_add_fold_s8(const tw_add_params_t *p, const int32_t *tables, int32_t shift,
                         const int8_t *a, const int8_t *b, int8_t *out, int n, int core_id,
                         int n_cores);
void tw_pulp_add_onnx_exact_s8(const tw_add_onnx_exact_params_t *p, const int8_t *a,
                               const int8_t *b, int8_t *out, int n, int core_id, int n_cores);
void tw_pulp_mul_s8(const tw_mul_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores);

#endif /* TW_PULP_ELEMENTWISE_H */
