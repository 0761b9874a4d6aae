/*
 * tw_onnx_requant_exact.h — onnxruntime's float requantization of an int32 accumulator,
 *     y = clamp(rint(fl(fl(acc) * scale)) + zp, qmin, qmax)
 * (fl: to float32, nearest even; rint: half to even; MLAS), computed bit for bit with integer
 * operations only: tilewise/golden/onnx_requant_exact.py, whose docstring holds the proof.
 * Standalone C99, int32/int64 only, no float. Used by tw_requant.h (onnx mode) and the pulp
 * family's tw_pulp_requant.h (whose common path is tw_onnx_rq_round_hi's, in its own words).
 *
 * Constants of a float32 scale s >= 0 (tw_onnx_rq_init, or computed by the compiler):
 *   s = 0, subnormal or < 2^-32  ->  mult = 0, shift = 8 (every output is zp, clamped);
 *   s > 2^22                     ->  those of 2^22 (the same clamped outputs);
 *   otherwise s = M * 2^E, 2^23 <= M < 2^24  ->  mult = M << 7 (< 2^31), shift = 7 - E in [8, 62].
 *
 * Per output: a = fl(acc) (a rare branch: |acc| > 2^24), p = a * mult (32x32 -> 64; |p| < 2^62),
 * h = msb(p ^ (p >> 63)) >> 24 (half an ulp of the float32 product, in units of 2^-shift),
 * e = bit_shift(p) - 1, Y = (p + 2^(shift-1) + (h ^ e)) >> shift. Y is exact while |Y| < 2^22 and
 * has the right sign and a magnitude >= 2^22 beyond, so clamp(Y + zp) is exact whenever
 * qmin - zp and qmax - zp lie in [-2^22, 2^22] (int8, uint8, int16 outputs).
 * Where shift >= 33 (s < 1/4) the rounding point and h lie in p's high word: tw_onnx_rq_round_hi
 * is the same in 32-bit operations after the multiply (on Cortex-M4, gcc -O2: ~20 instructions
 * per output with the clamp, SMULL and CLZ among them).
 */
#ifndef TW_ONNX_REQUANT_EXACT_H
#define TW_ONNX_REQUANT_EXACT_H

#include <stdint.h>

/* the constants of one output channel's scale */
typedef struct {
    int32_t mult;   /* M << 7, 0 for a scale < 2^-32 */
    int32_t shift;  /* 7 - E, in [8, 62] */
} tw_onnx_rq_t;

/* constants of the float32 scale with IEEE-754 bits `bits`; returns 0, or -1 for a negative,
 * infinite or NaN scale (-0.0 is 0) */
static inline int tw_onnx_rq_init(tw_onnx_rq_t *c, uint32_t bits)
{
    uint32_t e8 = (bits >> 23) & 0xFFu, frac = bits & 0x7FFFFFu;
    if (e8 == 0xFFu || ((bits >> 31) && (bits & 0x7FFFFFFFu)))
        return -1;
    if (e8 > 149u || (e8 == 149u && frac)) {   /* > 2^22 */
        e8 = 149u;
        frac = 0;
    }
    if (e8 < 127u - 32u) {                     /* 0, subnormal, < 2^-32 */
        c->mult = 0;
        c->shift = 8;
    } else {
        c->mult = (int32_t)((frac | 0x800000u) << 7);
        c->shift = (int32_t)(157u - e8);
    }
    return 0;
}

/* the value of the highest set bit of x (0 for 0) */
static inline uint64_t tw_onnx_rq_msb64(uint64_t x)
{
#if defined(__GNUC__)
    return x ? (uint64_t)1 << (63 - __builtin_clzll(x)) : 0;
#else
    x |= x >> 1; x |= x >> 2; x |= x >> 4; x |= x >> 8; x |= x >> 16; x |= x >> 32;
    return x ^ (x >> 1);
#endif
}

/* x >> n, arithmetic (floor) for either sign (C leaves >> of a negative value to the implementation) */
static inline int64_t tw_onnx_rq_asr64(int64_t x, int n)
{
    return x < 0 ? ~(~x >> n) : x >> n;
}

/* fl(acc): acc rounded to 24 significant bits, nearest even (acc itself where |acc| <= 2^24) */
static inline int64_t tw_onnx_rq_float32_of_int(int32_t acc)
{
    int64_t a = acc;
    if ((uint32_t)acc + (1u << 24) > (2u << 24)) {     /* |acc| > 2^24 */
        int64_t half = (int64_t)(tw_onnx_rq_msb64((uint64_t)(a < 0 ? -a : a)) >> 24);   /* 2^(k-1) */
        a = (a + half - 1 + ((a & (half << 1)) != 0)) & -(half << 1);
    }
    return a;
}

/* p = fl(acc) * mult: a 32x32 -> 64 multiply; acc is rounded first where |acc| > 2^24 (rare) */
static inline int64_t tw_onnx_rq_product(int32_t acc, int32_t mult)
{
    if ((uint32_t)acc + (1u << 24) > (2u << 24))
        return tw_onnx_rq_float32_of_int(acc) * (int64_t)mult;
    return (int64_t)acc * mult;
}

/* Y = rint(fl(X)) for X = p / 2^shift exactly (steps 3-4: any integer |p| < 2^62, shift in
 * [1, 62]); exact while |Y| < 2^22 */
static inline int64_t tw_onnx_rq_round_p(int64_t p, int32_t shift)
{
    int64_t h = (int64_t)(tw_onnx_rq_msb64((uint64_t)(p ^ -(int64_t)(p < 0))) >> 24);
    int64_t e = (int64_t)(((uint64_t)p >> shift) & 1) - 1;
    return tw_onnx_rq_asr64(p + ((int64_t)1 << (shift - 1)) + (h ^ e), shift);
}

/* Y = rint(fl(fl(acc) * s)) for the constants (mult, shift) of s; exact while |Y| < 2^22 */
static inline int64_t tw_onnx_rq_round(int32_t acc, int32_t mult, int32_t shift)
{
    return tw_onnx_rq_round_p(tw_onnx_rq_product(acc, mult), shift);
}

/* the highest set bit of x != 0 */
static inline uint32_t tw_onnx_rq_msb32(uint32_t x)
{
#if defined(__GNUC__)
    return 0x80000000u >> __builtin_clz(x);
#else
    x |= x >> 1; x |= x >> 2; x |= x >> 4; x |= x >> 8; x |= x >> 16;
    return x ^ (x >> 1);
#endif
}

/* tw_onnx_rq_round for shift >= 33 (scales < 1/4) in 32-bit words after the multiply, the form
 * for a 32-bit core: the rounding point and half an ulp lie in the high word hi of p
 * (h = msb(hi ^ sign) << 8); where hi ^ sign = 0, |X| <= 1/2 and any h in [0, 2^8] gives 0, so
 * msb(... | 1) needs no zero test. The sum p + 2^(shift-1) + (h ^ e) is added as two words
 * (one carry) and its high word shifted by shift - 32. Y fits int32. */
static inline int32_t tw_onnx_rq_round_p_hi(uint64_t p, int32_t shift);

static inline int32_t tw_onnx_rq_round_hi(int32_t acc, int32_t mult, int32_t shift)
{
    return tw_onnx_rq_round_p_hi((uint64_t)tw_onnx_rq_product(acc, mult), shift);
}

/* tw_onnx_rq_round_p for shift >= 33 in 32-bit words (the two's complement bits of p; |p| <
 * 2^62): as tw_onnx_rq_round_hi after its multiply. Y fits int32. */
static inline int32_t tw_onnx_rq_round_p_hi(uint64_t p, int32_t shift)
{
    uint32_t hi = (uint32_t)(p >> 32), lo = (uint32_t)p, rr = (uint32_t)shift - 32u;
    uint32_t msb = tw_onnx_rq_msb32((hi ^ (0u - (hi >> 31))) | 1u);
    uint32_t e = ((hi >> rr) & 1u) - 1u;
    uint32_t slo = lo + ((msb << 8) ^ e);
    uint32_t shi = hi + (1u << (rr - 1u)) + ((msb >> 24) ^ e) + (slo < lo);
    int32_t y = (int32_t)(shi ^ 0x80000000u) - INT32_MAX - 1;          /* two's complement value of shi */
    return y < 0 ? ~(~y >> rr) : y >> rr;
}

/* y = clamp(rint(fl(fl(acc) * s)) + zp, qmin, qmax); needs qmin - zp, qmax - zp within +-2^22 */
static inline int32_t tw_onnx_rq(int32_t acc, const tw_onnx_rq_t *c, int32_t zp, int32_t qmin, int32_t qmax)
{
    int64_t y = tw_onnx_rq_round(acc, c->mult, c->shift) + zp;
    return y < qmin ? qmin : y > qmax ? qmax : (int32_t)y;
}

#endif /* TW_ONNX_REQUANT_EXACT_H */
