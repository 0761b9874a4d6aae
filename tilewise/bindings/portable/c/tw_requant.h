/*
 * tw_requant.h — requantization of an int32 accumulator to int8: the three modes of DESIGN.md
 * "Integer semantics", bit-exact with tilewise/golden/requant.py.
 *
 *   TW_RQ_TFLITE  y = clamp(MultiplyByQuantizedMultiplier(acc, M0[k], shift[k]) + zp)
 *                 MBQM = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(acc << max(shift,0),
 *                 M0), max(-shift,0)) — TFLite common.h / gemmlowp fixedpoint.h, double rounding
 *                 (the default build); shift > 0 is a left shift.
 *   TW_RQ_TFLITE_SINGLE  the same with TFLite's single-rounding MultiplyByQuantizedMultiplier:
 *                 round(acc·M0 / 2^(31-shift)), ties toward +inf, in 64 bits (TFLITE_SINGLE_ROUNDING
 *                 builds; what LiteRT's int8 FULLY_CONNECTED computes — golden Requant.rounding
 *                 == "single").
 *   TW_RQ_SHIFT   y = clamp(floor((k[k]·acc + lambda[k]) / 2^d[k]) + zp) in 64-bit — DORY/PULP-NN's
 *                 "(k·phi + lambda) >> d" (seed 004 §3.3.1 footnote, seed 001 §4.1).
 *   TW_RQ_ONNX    y = clamp(round_half_even((float)acc * scale[k]) + zp) with float32 rounding —
 *                 onnxruntime's QLinear* output requantization — computed exactly in integers
 *                 (tw_onnx_requant_exact.h): mult[k], shift[k] the compiler's constants of the
 *                 float32 scale (golden/onnx_requant_exact.py), or, mult NULL, scale[k] itself.
 *   TW_RQ_ADC     DIANA's analog output chain: a6 = clamp(floor(acc / divisor), adc_min, adc_max)
 *                 (floor division, also of a negative acc), then the shift mode's
 *                 clamp(floor((mult[k]·a6 + lambda[k]) / 2^shift[k]) + zp) in 64-bit, with
 *                 mult = m, lambda = a, shift = s (golden/requant.py "adc").
 *   TW_RQ_DIV     NEMO's exported chain: q = post_mult·(mult[k]·acc + lambda[k]) in 64-bit, then
 *                 q / div_d (> 0) toward zero (div_trunc = 1, onnxruntime's int64 Div) or down;
 *                 + zp, clamp (golden/requant.py "div"; the frontend proves nothing leaves int64).
 *
 * clamp is to [qmin, qmax] (fused ReLU/ReLU6 are folded into them by the compiler).
 *
 * Call contract: per-channel arrays are indexed by the TILE-LOCAL output channel — for a tile of
 * output channels [k0, k0 + K_tile) the caller passes pointers already offset by k0. With
 * per_channel = 0 element 0 serves every channel. Arrays the mode does not use may be NULL.
 */
#ifndef TW_REQUANT_H
#define TW_REQUANT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tw_common.h"
#include "tw_onnx_requant_exact.h"

#define TW_RQ_TFLITE 0
#define TW_RQ_SHIFT 1
#define TW_RQ_ONNX 2
#define TW_RQ_TFLITE_SINGLE 3
#define TW_RQ_ADC 4
#define TW_RQ_DIV 5

typedef struct {
    int mode;                 /* TW_RQ_TFLITE | _TFLITE_SINGLE | TW_RQ_SHIFT | _ONNX | _ADC */
    int per_channel;          /* 1: arrays indexed by channel; 0: element 0 for all */
    const int32_t *mult;      /* tflite(_single): Q31 M0; shift: k; adc: m; onnx: M·2^7 */
    const int32_t *shift;     /* tflite(_single): exponent (+ = left); shift: d, adc: s (right,
                                 0..63); onnx: r in [8, 62] */
    const int32_t *lambda;    /* shift: lambda, adc: a (NULL = 0) */
    int32_t divisor;          /* adc: D > 0 (unused by the other modes) */
    int32_t adc_min, adc_max; /* adc: the ADC's output range */
    int64_t post_mult;        /* div: m after mult·acc + lambda */
    int64_t div_d;            /* div: the divisor D > 0 */
    int div_trunc;            /* div: 1 = round toward zero, 0 = floor */
    const float *scale;       /* onnx without mult / shift: s_x*s_w/s_y (float32) */
    int32_t zero_point;       /* output zero point */
    int32_t qmin, qmax;       /* output clamp, within [-128, 127] */
} tw_requant_t;

/* gemmlowp SaturatingRoundingDoublingHighMul: round(a*b / 2^31), ties away from zero, with the
 * single overflow case (INT32_MIN * INT32_MIN) saturated. */
static inline int32_t tw_srdhm(int32_t a, int32_t b)
{
    int64_t ab, nudge;
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    ab = (int64_t)a * (int64_t)b;
    nudge = ab >= 0 ? (1LL << 30) : (1 - (1LL << 30));
    return (int32_t)((ab + nudge) / (1LL << 31));   /* C division truncates toward zero */
}

/* gemmlowp RoundingDivideByPOT: x / 2^e rounded to nearest, ties away from zero; 0 <= e <= 31. */
static inline int32_t tw_rounding_divide_by_pot(int32_t x, int e)
{
    int32_t mask = (int32_t)((1LL << e) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return tw_asr32(x, e) + (remainder > threshold ? 1 : 0);
}

/* TFLite MultiplyByQuantizedMultiplier(int32 x, int32 M0, int shift). The left shift wraps like
 * the reference's int32 arithmetic (golden: wrap32(x << left)). */
static inline int32_t tw_mbqm(int32_t x, int32_t m0, int32_t shift)
{
    int left = shift > 0 ? shift : 0;
    int right = shift > 0 ? 0 : -shift;
    int32_t shifted = (int32_t)((uint32_t)x << left);
    return tw_rounding_divide_by_pot(tw_srdhm(shifted, m0), right);
}

/* Single-rounding MultiplyByQuantizedMultiplier: round(x * M0 / 2^(31 - shift)), ties toward
 * +inf (TFLITE_SINGLE_ROUNDING in common.h); shift <= 30. */
static inline int32_t tw_mbqm_single(int32_t x, int32_t m0, int32_t shift)
{
    int total = 31 - shift;
    int64_t v = (int64_t)x * m0 + ((int64_t)1 << (total - 1));
    return (int32_t)tw_asr64(v, total);
}

/* floor(a / d) for d > 0 (C's division truncates toward zero). */
static inline int32_t tw_floor_div(int32_t a, int32_t d)
{
    int32_t q = a / d;
    return (a % d != 0 && a < 0) ? q - 1 : q;
}

/* q / d for d > 0, toward zero (trunc = 1) or down (trunc = 0); C's division truncates. */
static inline int64_t tw_div64(int64_t q, int64_t d, int trunc)
{
    int64_t r = q / d;
    return (!trunc && q % d != 0 && q < 0) ? r - 1 : r;
}

/* clamp(tw_div64(q, d, trunc), lo, hi) (lo <= hi) without the 64-bit division (__divdi3 on rv32,
 * hundreds of cycles) where it is not needed: a quotient below lo or above hi is decided by one
 * comparison with lo·d or (hi + 1)·d, and one inside is lo + (q − lo·d) / d with q − lo·d in
 * [0, (hi − lo + 1)·d) — a 32-bit unsigned division when that fits (an 8-bit output and d < 2^24:
 * NEMO's 2^d − 1 divisors), after halving both while d is even and it does not (floor(y / d) =
 * floor((y >> 1) / (d >> 1)): a power of two's shift). The truncating division differs from the
 * floor only for a negative q with a remainder: one more. */
static inline int64_t tw_div64_clamp(int64_t q, int64_t d, int trunc, int64_t lo, int64_t hi)
{
    int64_t base, r;
    uint64_t y, dd, span, lost = 0;
    if (d >= ((int64_t)1 << 32) || lo < -((int64_t)1 << 30) || hi >= ((int64_t)1 << 30)) {
        r = tw_div64(q, d, trunc);
        return r < lo ? lo : r > hi ? hi : r;
    }
    base = lo * d;
    if (q < base) return lo;                  /* floor(q / d) < lo, and trunc <= floor + 1 */
    if (q >= (hi + 1) * d) return hi;         /* floor(q / d) >= hi + 1, and trunc >= floor */
    y = (uint64_t)(q - base);                 /* in [0, (hi - lo + 1)·d) */
    dd = (uint64_t)d;
    span = (uint64_t)(hi - lo + 1) * dd;
    while (span > 0xFFFFFFFFu && (dd & 1u) == 0) {
        lost |= y & 1u;
        y >>= 1;
        dd >>= 1;
        span >>= 1;
    }
    if (span <= 0xFFFFFFFFu) {
        uint32_t y32 = (uint32_t)y, d32 = (uint32_t)dd, quo = y32 / d32;
        r = lo + (int64_t)quo;
        return (trunc && q < 0 && (lost || y32 != quo * d32)) ? r + 1 : r;
    }
    r = lo + (int64_t)(y / dd);
    return (trunc && q < 0 && (lost || y % dd != 0)) ? r + 1 : r;
}

/* DIANA's ADC: clamp(floor(acc / divisor), adc_min, adc_max). */
static inline int32_t tw_adc_code(int32_t acc, int32_t divisor, int32_t adc_min, int32_t adc_max)
{
    int32_t q = tw_floor_div(acc, divisor);
    return q < adc_min ? adc_min : q > adc_max ? adc_max : q;
}

/* onnx mode: rint(fl(fl(acc)·scale[i])) in integer arithmetic (tw_onnx_requant_exact.h), from
 * the compiler's constants (mult[i], shift[i]: golden/onnx_requant_exact.py `constants`) or,
 * when a caller gives only the float32 scale (mult NULL), from its bits; exact within +-2^22, of
 * the right sign and magnitude >= 2^22 beyond (the int8 clamp then gives the golden answer). */
static inline int64_t tw_onnx_round(const tw_requant_t *rq, int32_t acc, int i)
{
    tw_onnx_rq_t c;
    uint32_t bits;
    if (rq->mult)
        return tw_onnx_rq_round(acc, rq->mult[i], rq->shift[i]);
    c.mult = 0;
    c.shift = 8;
    memcpy(&bits, &rq->scale[i], sizeof bits);
    (void)tw_onnx_rq_init(&c, bits);
    return tw_onnx_rq_round(acc, c.mult, c.shift);
}

/* Requantize accumulator `acc` of tile-local output channel `k` to int8. The sum with the zero
 * point and the clamp are done in 64 bits, as in the golden model. */
static inline int8_t tw_requant(const tw_requant_t *rq, int32_t acc, int k)
{
    int i = rq->per_channel ? k : 0;
    int64_t y;
    if (rq->mode == TW_RQ_TFLITE) {
        y = (int64_t)tw_mbqm(acc, rq->mult[i], rq->shift[i]);
    } else if (rq->mode == TW_RQ_TFLITE_SINGLE) {
        y = (int64_t)tw_mbqm_single(acc, rq->mult[i], rq->shift[i]);
    } else if (rq->mode == TW_RQ_SHIFT || rq->mode == TW_RQ_ADC) {
        if (rq->mode == TW_RQ_ADC)
            acc = tw_adc_code(acc, rq->divisor, rq->adc_min, rq->adc_max);
        y = (int64_t)acc * rq->mult[i] + (rq->lambda ? rq->lambda[i] : 0);
        y = tw_asr64(y, (int)rq->shift[i]);
    } else if (rq->mode == TW_RQ_DIV) {
        y = ((int64_t)acc * rq->mult[i] + (rq->lambda ? rq->lambda[i] : 0)) * rq->post_mult;
        y = tw_div64_clamp(y, rq->div_d, rq->div_trunc, (int64_t)rq->qmin - rq->zero_point,
                           (int64_t)rq->qmax - rq->zero_point);
    } else {
        y = tw_onnx_round(rq, acc, i);
    }
    y += rq->zero_point;
    if (y < rq->qmin) y = rq->qmin;
    if (y > rq->qmax) y = rq->qmax;
    return (int8_t)y;
}

#endif /* TW_REQUANT_H */
