/*
 * tw_elementwise.h — int8 elementwise ADD / SUB / MUL with requantization, TFLite semantics
 * (tensorflow/lite/kernels/internal/reference/integer_ops/add.h, sub, mul.h; BUILTIN_REF).
 *
 * CALL CONTRACT (for the code generator)
 *   a, b, out are n int8 elements each (same shape, no broadcasting; in HWC any tile of the
 *   output maps to the same-shaped tiles of a and b). out may alias a or b (in place).
 *
 *   ADD / SUB (tw_add_s8 / tw_sub_s8), with MBQM = MultiplyByQuantizedMultiplier (tw_requant.h):
 *       sa  = MBQM((a - a_zp) * 2^left_shift, a_mult, a_shift)
 *       sb  = MBQM((b - b_zp) * 2^left_shift, b_mult, b_shift)
 *       out = clamp(MBQM(sa +/- sb, out_mult, out_shift) + out_zp, qmin, qmax)
 *   left_shift is 20 for int8 in TFLite; the input multipliers come from s_a / (2·max(s_a,s_b)),
 *   the output one from 2·max(s_a,s_b) / (2^left_shift · s_out) (TFLite add.cc / sub.cc Prepare).
 *   TFLite applies these with MultiplyByQuantizedMultiplierSmallerThanOneExp, which equals MBQM
 *   for the shift <= 0 those multipliers always have.
 *
 *   MUL (tw_mul_s8):
 *       out = clamp(MBQM((a - a_zp) * (b - b_zp), out_mult, out_shift) + out_zp, qmin, qmax)
 *   with out_mult/out_shift from s_a·s_b/s_out.
 *
 *   ADD, onnx mode (tw_add_onnx_s8) — onnxruntime's QLinearAdd (MlasQLinearAdd, AVX2 path;
 *   golden/onnx_ops.py `add`), in float32 with fused multiply-adds (one rounding each):
 *       r   = fmaf(a, ratio_a, fmaf(b, ratio_b, fixed))
 *       out = clamp(nearbyintf(r), qmin, qmax)       (round half to even, default rounding mode)
 *   with ratio_a = s_a/s_out, ratio_b = s_b/s_out, fixed = zp_out - ratio_a·zp_a - ratio_b·zp_b as
 *   the frontend computes them (frontend/onnx_qparams.py). `a` is onnxruntime's "A" operand
 *   (OnnxAddParams.a_index): the caller passes the inputs in that order.
 *
 *   tw_add_onnx_u8 is the same for uint8 tensors, which tilewise stores biased, as u - 128 (the
 *   byte u ^ 0x80, tilewise/passes/signed.py): it computes on the uint8 values a + 128, b + 128,
 *   clamps to [qmin, qmax] in the uint8 domain and stores y - 128 — the float steps see exactly
 *   onnxruntime's operands, so it is bit-exact where re-biasing `fixed` would not be.
 *
 *   tw_add_onnx_exact_s8 is the same QLinearAdd in integers (issue 27; golden/onnx_requant_exact.py's
 *   proof: rint(fl(X)) from an exact X = x / 2^shift): t(b) = fmaf(b, ratio_b, fixed) is one of
 *   256 float32 values, so X = a·ratio_a + t(b) is exactly x / 2^shift with
 *       x = a·ma + tb[b + 128],   ma = ratio_a·2^shift,   tb[b + 128] = t(b)·2^shift (+ 128·ma
 *   for a uint8 a, stored as a - 128), integers the compiler computes (bindings/portable/
 *   elementwise.py) with shift >= 33 large enough for both and |x| < 2^62; then
 *       out = clamp(tw_onnx_rq_round_p_hi(x, shift), qmin, qmax) - out_off
 *   (qmin, qmax in the output's values, out_off 128 for a uint8 output stored biased).
 *
 *   LOOKUP TABLE (tw_lut_s8) — out[i] = table[in[i] + 128]: TFLite's int8/uint8 LOGISTIC (and any
 *   256-entry table op; golden/activation.py `logistic`, table indexed by q - qmin). A uint8
 *   tensor stored as u - 128 gives the same index u; the caller stores the table's entries as
 *   the output is stored (uint8: value - 128).
 *
 *   CONCAT of two tensors (tw_concat2_s8) — onnxruntime's QLinearConcat (golden/onnx_ops.py
 *   `concat`): viewed as [outer][inner_a] and [outer][inner_b] (outer = product of the dims
 *   before the axis), out[o] = a[o] then b[o], each element passed through its input's 256-entry
 *   table (indexed by stored byte + 128: the requantized value sat(rint(s_x·(x − zp_x) / s_y) +
 *   zp_y) as stored), or copied when the table is NULL (same scale and zero point). Core split:
 *   outer rows.
 *
 *   Core split: element ranges, chunk = ceil(n / n_cores). Same args on every core; barrier after.
 */
#ifndef TW_ELEMENTWISE_H
#define TW_ELEMENTWISE_H

#include <stdint.h>

#include "tw_common.h"
#include "tw_requant.h"

typedef struct {
    int32_t a_zp, a_mult, a_shift;
    int32_t b_zp, b_mult, b_shift;
    int32_t left_shift;
    int32_t out_mult, out_shift, out_zp;
    int32_t qmin, qmax;
} tw_add_params_t;

typedef struct {
    int32_t a_zp, b_zp;
    int32_t out_mult, out_shift, out_zp;
    int32_t qmin, qmax;
} tw_mul_params_t;

typedef struct {
    float ratio_a, ratio_b, fixed;
    int32_t qmin, qmax;
} tw_add_onnx_params_t;

typedef struct {
    int64_t ma;             /* ratio_a · 2^shift */
    int32_t shift;          /* in [33, 62] */
    int32_t qmin, qmax;     /* in the output's values */
    int32_t out_off;        /* 128 for a uint8 output (stored as u - 128), else 0 */
    int64_t tb[256];        /* by stored b + 128: fmaf(b, ratio_b, fixed)·2^shift (+ 128·ma) */
} tw_add_onnx_exact_params_t;

/* One element of TFLite's ADD (sign = +1) or SUB (sign = -1) on values a, b (int8, uint8 as
 * stored, or int16): the contract's arithmetic, the sum wrapping in int32 as the golden model's
 * wrap32, the output zero point added in 64 bits; clamped to [qmin, qmax]. */
static inline int32_t tw_add_value(const tw_add_params_t *p, int32_t a, int32_t b, int sign)
{
    int32_t xa = (int32_t)((uint32_t)(a - p->a_zp) << p->left_shift);
    int32_t xb = (int32_t)((uint32_t)(b - p->b_zp) << p->left_shift);
    int32_t sa = tw_mbqm(xa, p->a_mult, p->a_shift);
    int32_t sb = tw_mbqm(xb, p->b_mult, p->b_shift);
    uint32_t usb = sign > 0 ? (uint32_t)sb : 0u - (uint32_t)sb;
    int32_t raw = (int32_t)((uint32_t)sa + usb);
    int64_t y = (int64_t)tw_mbqm(raw, p->out_mult, p->out_shift) + p->out_zp;
    return (int32_t)(y < p->qmin ? p->qmin : y > p->qmax ? p->qmax : y);
}

/* One element of TFLite's MUL on values a, b: the product of the offset values (int32, wrapping
 * as the golden model's wrap32 when 16-bit operands with zero points overflow it), MBQM, the
 * output zero point, the clamp. */
static inline int32_t tw_mul_value(const tw_mul_params_t *p, int32_t a, int32_t b)
{
    int32_t prod = (int32_t)(uint32_t)(uint64_t)((int64_t)(a - p->a_zp) * (int64_t)(b - p->b_zp));
    int64_t y = (int64_t)tw_mbqm(prod, p->out_mult, p->out_shift) + p->out_zp;
    return (int32_t)(y < p->qmin ? p->qmin : y > p->qmax ? p->qmax : y);
}

void tw_add_s8(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out, int n,
               int core_id, int n_cores);
void tw_sub_s8(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out, int n,
               int core_id, int n_cores);
void tw_mul_s8(const tw_mul_params_t *p, const int8_t *a, const int8_t *b, int8_t *out, int n,
               int core_id, int n_cores);
void tw_add_onnx_s8(const tw_add_onnx_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores);
void tw_lut_s8(const int8_t *table, const int8_t *in, int8_t *out, int n, int core_id, int n_cores);
/* ADD BY TABLES (tw_add_table_s8): out[i] = clamp((tables[(uint8_t)a[i]] + tables[256 +
 * (uint8_t)b[i]]) >> shift, qmin, qmax) — both inputs' tables (a's then b's, 256 int32 each)
 * indexed by the stored byte as unsigned, shift in [0, 31], the clamp as stored: the integer
 * exports' requantized adds (golden/int_ops.py table_add). The caller proves no sum of two
 * entries overflows int32. out may alias a or b. */
void tw_add_table_s8(const int32_t *tables, int32_t shift, int32_t qmin, int32_t qmax, const int8_t *a,
                     const int8_t *b, int8_t *out, int n, int core_id, int n_cores);
void tw_concat2_s8(const int8_t *a, const int8_t *lut_a, int inner_a, const int8_t *b,
                   const int8_t *lut_b, int inner_b, int8_t *out, int outer, int core_id, int n_cores);
void tw_add_onnx_u8(const tw_add_onnx_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores);
void tw_add_onnx_exact_s8(const tw_add_onnx_exact_params_t *p, const int8_t *a, const int8_t *b,
                          int8_t *out, int n, int core_id, int n_cores);

#endif /* TW_ELEMENTWISE_H */
