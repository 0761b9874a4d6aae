/*
 * tw_pulp_requant.h — requantization of an int32 accumulator to int8 in 32-bit arithmetic, one
 * inlined call per output, the mode fixed at compile time: bit-exact with tilewise/golden/
 * requant.py and golden/fixedpoint.py, the portable tw_requant.h's contract.
 *
 * Each output channel's requantization is four int32 words (m, a, b, c) derived at compile time
 * (bindings/pulp/constants.py; tw_pulp_rq_words() is the same derivation in C), so that a kernel
 * loads them instead of recomputing shifts and masks for every block of outputs:
 *   TW_RQ_TFLITE  m = M0, a = left = max(shift, 0), b = e = max(-shift, 0), c = 2^e - 1.
 *                 MBQM(acc) = RoundingDivideByPOT(SRDHM(acc << left, M0), e), double rounding.
 *                 SRDHM(x, M0) = round(x·M0 / 2^31) with ties away from zero and the C division's
 *                 truncation equals floor((x·M0 + 2^30) / 2^31) for every product (both branches
 *                 of the nudge give it): 2·mulh + (((lo >> 30) + 1) >> 1) with lo the low product
 *                 word. The one product it misses, (-2^31)·(-2^31), needs M0 = -2^31, which the
 *                 bindings refuse (TFLite's QuantizeMultiplier never makes one).
 *                 RDBPOT(x, e) = (x >> e) + ((x & c) > (c >> 1) + (x < 0)) (gemmlowp's form).
 *   TW_RQ_TFLITE_SINGLE  m = M0, c = total = 31 - shift in [1, 62], (b:a) = 2^(total-1) as a
 *                 high and a low word: round(acc·M0 / 2^total), ties up, is the 64-bit sum of
 *                 the product (mulh:mul) and (b:a) with a carry, shifted: a funnel shift, or
 *                 the high word alone when total >= 32.
 *   TW_RQ_SHIFT   m = k, (b:a) = lambda sign-extended, c = d in [0, 63]: floor((k·acc + lambda)
 *                 / 2^d) with 64-bit semantics, the same two-word sum and shift, saturated to
 *                 int32 when the 64-bit value does not fit (the clamp then gives the golden
 *                 model's answer).
 *   TW_PULP_RQ_SHIFT32  m = k, a = lambda, c = min(d, 31): the same when k·acc + lambda fits
 *                 int32 for every accumulator the layer can produce (the binding proves it from
 *                 the weights and bias, bindings/pulp/constants.py): one p.mac and one shift —
 *                 PULP-NN's QntPack "(k·φ + λ) >> d" (seed 004 §3.3.1, footnote 2).
 *   TW_PULP_RQ_TFLITE_RIGHT  m = M0, a = h = 2^(e-1), b = e in [1, 31], c = 0: TW_RQ_TFLITE when
 *                 every shift is negative (no left shift), y + h cannot overflow and |acc| < 2^30
 *                 for the layer's accumulators (the binding proves all three,
 *                 bindings/pulp/constants.py): RDBPOT(y, e) = (y + 2^(e-1) - [y < 0]) >> e, ties
 *                 away from zero in four instructions instead of seven; on Arm SRDHM is one
 *                 smmulr of 2·acc (tw_pulp_srdhm30).
 *   TW_RQ_ONNX    onnxruntime's rint(fl(fl(acc) · scale)) (float32 products, half to even) in
 *                 integers (tw_onnx_requant_exact.h, golden/onnx_requant_exact.py, whose
 *                 `constants` give mult and shift r of the scale): m = mult; for r >= 33 (scales
 *                 < 1/4, the usual case) a = 2^25 + 1, b = 2^(rr - 1), c = rr = r - 32, the
 *                 common path tw_onnx_rq_round_hi in 32-bit words (one mul + mulh / one smull,
 *                 p.fl1 / clz), taken while (uint32)(acc + 2^24) < a, i.e. |acc| <= 2^24;
 *                 for r <= 32 a = b = 0, c = r, and every output (also |acc| > 2^24, which
 *                 float32 rounds first) goes through the 64-bit tw_onnx_rq_round.
 *   TW_PULP_RQ_ONNX24  TW_RQ_ONNX where the binding proves |acc| <= 2^24 for every accumulator
 *                 of the layer and r >= 33 (scale < 1/4; a zero scale, mult = 0, takes r = 33)
 *                 for every channel (bindings/pulp/constants.py onnx24_fits), per channel either
 *                 the linear form (m >= 0: (mulh(acc << a, m) + b) >> c, four instructions,
 *                 where bindings/pulp/onnx_linear.py proves it exact for the channel's
 *                 accumulators and the output clamp) or the exact form: m = -mult,
 *                 a = 31 - rr, b = 2^(rr-1) - 1, c = rr = r - 32. No range check and no 64-bit
 *                 path: tw_pulp_rq_onnx24, tw_onnx_rq_round_p_hi with the terms the bound makes
 *                 constant folded (|p| < 2^55, so |hi| <= 2^23, msb(hi ^ sign) <= 2^22 and the
 *                 high word of h is 0; only the carry of the low word's sum is needed).
 *   TW_PULP_RQ_ONNX_FPU  the same rint(fl(fl(acc) · scale)) in float32 as onnxruntime computes
 *                 it, m = the float32 scale's bits (a = b = c = 0): tw_pulp_rq_onnx_fpu, three
 *                 FPU instructions where the core has one (TW_PULP_FPU), else float32 C.
 * Then y = clamp(r, qmin - zp, qmax - zp) + zp: clamp(r + zp, qmin, qmax) without the int32
 * overflow of r + zp.
 *
 * Layout (tw_pulp_rq_t): the words of a tile's n output channels, channel by channel (tile-local
 * index): (m, a, b, c) of channel k at words[4k .. 4k + 3], so that a kernel walks one pointer
 * and loads a channel's words at fixed offsets.
 */
#ifndef TW_PULP_REQUANT_H
#define TW_PULP_REQUANT_H

#include <stdint.h>

#include "tw_pulp_isa.h"
#include "tw_requant.h"

/* shift mode in 32 bits (see above); the other modes keep tw_requant.h's numbers */
#define TW_PULP_RQ_SHIFT32 4
/* TFLite's double rounding with right shifts only, in fewer instructions (see above) */
#define TW_PULP_RQ_TFLITE_RIGHT 5
/* onnx's requantization for |acc| <= 2^24 and scales < 1/4, no range check (see above) */
#define TW_PULP_RQ_ONNX24 6
/* onnx mode on the FPU (see above) */
#define TW_PULP_RQ_ONNX_FPU 7

/* The requantization variants, each as X(name, mode): a kernel has one entry point per variant
 * (its name's suffix; bindings/pulp/constants.py `variant`), written once as
 * TW_PULP_VARIANTS(KERNEL_DEF). */
#define TW_PULP_VARIANTS(X)                                                                   \
    X(tflite, TW_RQ_TFLITE)                                                                   \
    X(tflite_single, TW_RQ_TFLITE_SINGLE)                                                     \
    X(shift, TW_RQ_SHIFT)                                                                     \
    X(shift32, TW_PULP_RQ_SHIFT32)                                                            \
    X(tflite_right, TW_PULP_RQ_TFLITE_RIGHT)                                                  \
    X(onnx, TW_RQ_ONNX)                                                                       \
    X(onnx24, TW_PULP_RQ_ONNX24)                                                              \
    X(onnx_fpu, TW_PULP_RQ_ONNX_FPU)

/* A tile's requantization: its channels' words and the output zero point and clamp. */
typedef struct {
    const int32_t *words;      /* 4·n words: (m, a, b, c) per channel */
    int n;
    int32_t zero_point, qmin, qmax;
} tw_pulp_rq_t;

/* One output channel's words. */
typedef struct {
    int32_t m, a, b, c;
} tw_pulp_rqch_t;

/* The output clamp as tw_pulp_rq applies it: clamp(r, lo, hi) + zp; and, built for Arm, as
 * tw_pulp_rq4c does: qmin and qmax in every lane of a word (lo4, hi4). */
typedef struct {
    int32_t lo, hi, zp;
#if TW_PULP_ARM
    uint32_t lo4, hi4;
#endif
} tw_pulp_clip_t;

/* The words of n channels of a tw_requant_t for `mode` into words[4·n] (the C twin of
 * bindings/pulp/constants.py; for tests and for callers holding a tw_requant_t). */
void tw_pulp_rq_words(const tw_requant_t *rq, int n, int mode, int32_t *words);

TW_PULP_INLINE tw_pulp_clip_t tw_pulp_clip(int32_t qmin, int32_t qmax, int32_t zp)
{
    tw_pulp_clip_t c;
    c.lo = qmin - zp;
    c.hi = qmax - zp;
    c.zp = zp;
#if TW_PULP_ARM
    c.lo4 = (uint8_t)qmin * 0x01010101u;
    c.hi4 = (uint8_t)qmax * 0x01010101u;
#endif
    return c;
}

/* Channel k's words. */
TW_PULP_INLINE tw_pulp_rqch_t tw_pulp_rq_channel(const int32_t *words, int n, int k)
{
    tw_pulp_rqch_t c;
    (void)n;
    c.m = words[4 * k];
    c.a = words[4 * k + 1];
    c.b = words[4 * k + 2];
    c.c = words[4 * k + 3];
    return c;
}

/* The words of TFLite's MultiplyByQuantizedMultiplier(x, m0, shift) (TW_RQ_TFLITE). */
TW_PULP_INLINE tw_pulp_rqch_t tw_pulp_rq_tflite(int32_t m0, int32_t shift)
{
    tw_pulp_rqch_t c;
    c.m = m0;
    c.a = shift > 0 ? shift : 0;
    c.b = shift > 0 ? 0 : -shift;
    c.c = (int32_t)(((uint32_t)1 << c.b) - 1u);
    return c;
}

/* The words of MultiplyByQuantizedMultiplier(x, m0, shift) in the one-rounding form
 * TW_PULP_RQ_TFLITE_RIGHT (shift in [-31, -1]; exact under that mode's bound). */
TW_PULP_INLINE tw_pulp_rqch_t tw_pulp_rq_right(int32_t m0, int32_t shift)
{
    tw_pulp_rqch_t c;
    c.m = m0;
    c.b = -shift;
    c.a = (int32_t)((uint32_t)1 << (c.b - 1));
    c.c = 0;
    return c;
}

/* p.mac: acc + a*b (one cycle; mul is two on RI5CY). */
TW_PULP_INLINE int32_t tw_pulp_mac(int32_t acc, int32_t a, int32_t b)
{
#if TW_PULP_ASM
    __asm__(".insn r 0x33, 0, 0x21, %0, %1, %2" : "+r"(acc) : "r"(a), "r"(b));
    return acc;
#else
    return (int32_t)((uint32_t)acc + (uint32_t)a * (uint32_t)b);
#endif
}

/* SaturatingRoundingDoublingHighMul for x·m != (-2^31)·(-2^31): floor((x·m + 2^30) / 2^31). */
TW_PULP_INLINE int32_t tw_pulp_srdhm(int32_t x, int32_t m)
{
#if TW_PULP_ARM
    int64_t p = (int64_t)x * m;                      /* one smull: both words */
    return (int32_t)(((uint32_t)(p >> 32) << 1) + ((((uint32_t)p >> 30) + 1u) >> 1));
#else
    uint32_t lo = (uint32_t)x * (uint32_t)m;
    return (int32_t)(((uint32_t)tw_pulp_mulh(x, m) << 1) + (((lo >> 30) + 1u) >> 1));
#endif
}

#if TW_PULP_ARM
/* smmulr: (a·b + 2^31) >> 32, the rounded high word of the 64-bit product (one instruction). */
TW_PULP_INLINE int32_t tw_pulp_smmulr(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
#endif

/* SRDHM(x, m) for |x| < 2^30 (TW_PULP_RQ_TFLITE_RIGHT's bound): on Arm one smmulr of 2·x, as
 * floor((2·x·m + 2^31) / 2^32) = floor((x·m + 2^30) / 2^31); tw_pulp_srdhm elsewhere. */
TW_PULP_INLINE int32_t tw_pulp_srdhm30(int32_t x, int32_t m)
{
#if TW_PULP_ARM
    return tw_pulp_smmulr(x << 1, m);
#else
    return tw_pulp_srdhm(x, m);
#endif
}

/* RoundingDivideByPOT(x, e) with mask = 2^e - 1, e in [0, 31]. */
TW_PULP_INLINE int32_t tw_pulp_rdbpot(int32_t x, int32_t e, int32_t mask)
{
    int32_t threshold = (mask >> 1) + (int32_t)((uint32_t)x >> 31);
    return tw_pulp_asr(x, e) + ((x & mask) > threshold);
}

/* The high and low words of the 64-bit x·m + (term_hi:term_lo). */
TW_PULP_INLINE void tw_pulp_mul64_add(int32_t x, int32_t m, uint32_t term_lo, int32_t term_hi,
                                      int32_t *hi, uint32_t *lo)
{
    uint32_t p = (uint32_t)x * (uint32_t)m;
    uint32_t s = p + term_lo;
    *hi = (int32_t)((uint32_t)tw_pulp_mulh(x, m) + (uint32_t)term_hi + (s < p));
    *lo = s;
}

/* The low word of the 64-bit hi:lo shifted right (floor) by n in [0, 63]. */
TW_PULP_INLINE int32_t tw_pulp_shr64_lo(int32_t hi, uint32_t lo, int32_t n)
{
    if (n < 32)
        return (int32_t)((((uint32_t)hi << 1) << (31 - n)) | (lo >> n));
    return tw_pulp_asr(hi, n - 32);
}

#if defined(__GNUC__)
#define TW_PULP_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define TW_PULP_LIKELY(x) (x)
#endif

/* The value of the highest set bit of x != 0: p.fl1 on RISC-V (rv32imc has no clz: libgcc's
 * __clzsi2 otherwise), clz on Arm. */
/* The 64-bit product a·m as its high and low words: one smull on Arm, mulh + mul on RISC-V
 * (the onnx requantizations' p, tw_onnx_requant_exact.h). */
TW_PULP_INLINE void tw_pulp_mul64(int32_t a, int32_t m, int32_t *hi, uint32_t *lo)
{
#if TW_PULP_ARM
    int64_t p = (int64_t)a * m;
    *hi = (int32_t)(p >> 32);
    *lo = (uint32_t)p;
#else
    *hi = tw_pulp_mulh(a, m);
    *lo = (uint32_t)a * (uint32_t)m;
#endif
}

TW_PULP_INLINE uint32_t tw_pulp_msb(uint32_t x)
{
#if TW_PULP_ASM
    uint32_t n;
    __asm__(".insn r 0x33, 1, 0x08, %0, %1, x0" : "=r"(n) : "r"(x));   /* p.fl1: its index */
    return 1u << n;
#else
    return tw_onnx_rq_msb32(x);
#endif
}

/* TW_RQ_ONNX (words above): rint(fl(fl(acc) · scale)), exact within +-2^22, beyond of the right
 * sign and magnitude >= 2^22 (bounded to +-2^30: the int8 clamp gives the golden answer). */
TW_PULP_INLINE int32_t tw_pulp_rq_onnx(const tw_pulp_rqch_t *c, int32_t acc)
{
    if (TW_PULP_LIKELY((uint32_t)acc + (1u << 24) < (uint32_t)c->a)) {
        /* tw_onnx_rq_round_hi: p = acc·mult as hi:lo, half an ulp of fl(p) h = msb(hi ^ sign)
         * << 8, e = (bit rr of hi) - 1, (p + 2^(r-1) + (h ^ e)) >> r in two words */
        int32_t hi;
        uint32_t lo, msb, e, slo, shi;
        tw_pulp_mul64(acc, c->m, &hi, &lo);
        msb = tw_pulp_msb(((uint32_t)hi ^ (uint32_t)tw_pulp_asr(hi, 31)) | 1u);
        e = (((uint32_t)hi >> c->c) & 1u) - 1u;
        slo = lo + ((msb << 8) ^ e);
        shi = (uint32_t)hi + (uint32_t)c->b + ((msb >> 24) ^ e) + (slo < lo);
        return tw_pulp_asr((int32_t)shi, c->c);
    } else {
        int64_t y = tw_onnx_rq_round(acc, c->m, c->a ? c->c + 32 : c->c);
        return y > (1 << 30) ? (1 << 30) : y < -(1 << 30) ? -(1 << 30) : (int32_t)y;
    }
}

/* 2^8·msb(x) for x < 2^23, the half ulp h of tw_pulp_rq_onnx24 (any value in [0, 2^8] for
 * x = 0): RISC-V p.fl1 then sll, whose shift amount is taken mod 32 (p.fl1 of 0 is 32: 2^8);
 * on Arm clz then lsr of 2^31 by clz - 8 (clz of 0 is 32: 2^7). */
TW_PULP_INLINE uint32_t tw_pulp_half_ulp24(uint32_t x)
{
#if TW_PULP_ASM
    uint32_t h;
    __asm__(".insn r 0x33, 1, 0x08, %0, %1, x0\n\tsll %0, %2, %0"   /* p.fl1; sll */
            : "=&r"(h) : "r"(x), "r"(256u));
    return h;
#elif TW_PULP_ARM
    uint32_t n;
    __asm__("clz %0, %1" : "=r"(n) : "r"(x));
    return 0x80000000u >> (n - 8u);
#else
    return tw_onnx_rq_msb32(x | 1u) << 8;
#endif
}

/* -bit_n(x) (0 or -1), with a = 31 - n: p.extract of the 1-bit field at n (sign-extended) on
 * RISC-V, (x << a) >> 31 elsewhere. */
TW_PULP_INLINE int32_t tw_pulp_bit_neg(int32_t x, int32_t n, int32_t a)
{
#if TW_PULP_ASM
    int32_t r;
    (void)a;
    __asm__(".insn r 0x33, 0, 0x40, %0, %1, %2" : "=r"(r) : "r"(x), "r"(n));   /* p.extract */
    return r;
#else
    (void)n;
    return tw_pulp_asr((int32_t)((uint32_t)x << a), 31);
#endif
}

/* TW_PULP_RQ_ONNX24 (words above): rint(fl(acc · scale)) for |acc| <= 2^24 and scale < 1/4,
 * as the output clamp sees it, per channel in one of two forms:
 *   m >= 0, the linear form (bindings/pulp/onnx_linear.py, where its `fit` proves the clamped
 *     outputs equal for every accumulator of the channel's bound): (mulh(acc << a, m) + b) >> c;
 *   m < 0, the exact form, exact within +-2^22: tw_onnx_rq_round_p_hi of p = acc·mult (hi:lo,
 *     mult = -m) with nb = -bit_rr(hi), e = bit - 1 = ~nb: h ^ e = ~(h ^ nb) as the low word of a
 *     term whose high word is e, so
 *       Y = (hi + 2^(rr-1) + e + carry) >> rr,  carry = [lo + ~(h ^ nb) >= 2^32] = [(h ^ nb) < lo]
 *     — 2^(rr-1) + e = b - nb (b = 2^(rr-1) - 1) — the low word's sum itself unused. */
TW_PULP_INLINE int32_t tw_pulp_rq_onnx24(const tw_pulp_rqch_t *c, int32_t acc)
{
    int32_t hi, nb;
    uint32_t lo, h;
    if (TW_PULP_LIKELY(c->m >= 0))
        return tw_pulp_asr(tw_pulp_mulh((int32_t)((uint32_t)acc << c->a), c->m) + c->b, c->c);
    tw_pulp_mul64(acc, -c->m, &hi, &lo);
    h = tw_pulp_half_ulp24((uint32_t)hi ^ (uint32_t)tw_pulp_asr(hi, 31));
    nb = tw_pulp_bit_neg(hi, c->c, c->a);
    return tw_pulp_asr((int32_t)((uint32_t)hi + (uint32_t)c->b - (uint32_t)nb +
                                 (((uint32_t)nb ^ h) < lo)), c->c);
}

/* TW_PULP_RQ_ONNX_FPU (words above): rint(fl(fl(acc) · s)) in float32, s the float32 whose bits
 * are m — onnxruntime's own operations (MLAS: the int32 accumulator to float, times the scale,
 * rounded half to even), so equal to the golden model for every accumulator and finite s >= 0.
 * With an FPU (TW_PULP_FPU): vcvt.f32.s32 (fl(acc), nearest even), vmul.f32 (fl of the product),
 * vcvtr.s32.f32 (to an integer in the FPSCR's rounding mode: nearest even, its reset value,
 * tw_fw.c; saturated beyond int32, which the output clamp then gives right). Elsewhere the same
 * float32 operations in C (float32 evaluation assumed, FLT_EVAL_METHOD 0): the product clamped to
 * +-2^22, where the output clamp gives the same answer, and rounded half to even by adding and
 * subtracting 1.5·2^23 (the sum lies in [2^23, 2^24], whose float32 spacing is 1). */
TW_PULP_INLINE int32_t tw_pulp_rq_onnx_fpu(const tw_pulp_rqch_t *c, int32_t acc)
{
    union {
        int32_t i;
        float f;
    } u;
    float f;
    u.i = c->m;
    f = (float)acc * u.f;
#if TW_PULP_FPU
    __asm__("vcvtr.s32.f32 %0, %1" : "=t"(u.f) : "t"(f));
    return u.i;
#else
    f = f < -4194304.0f ? -4194304.0f : f > 4194304.0f ? 4194304.0f : f;
    return (int32_t)((f + 12582912.0f) - 12582912.0f);
#endif
}

/* The requantized value of accumulator acc before the output clamp and zero point. */
TW_PULP_INLINE int32_t tw_pulp_rq_raw(const tw_pulp_rqch_t *c, int32_t acc, const int mode)
{
    int32_t r;
    if (mode == TW_RQ_TFLITE) {
        int32_t x = (int32_t)((uint32_t)acc << c->a);
        r = tw_pulp_rdbpot(tw_pulp_srdhm(x, c->m), c->b, c->c);
    } else if (mode == TW_PULP_RQ_TFLITE_RIGHT) {
        int32_t y = tw_pulp_srdhm30(acc, c->m);
        r = tw_pulp_asr(y + c->a - (int32_t)((uint32_t)y >> 31), c->b);
    } else if (mode == TW_PULP_RQ_SHIFT32) {
        r = tw_pulp_asr(tw_pulp_mac(c->a, acc, c->m), c->c);
    } else if (mode == TW_RQ_TFLITE_SINGLE || mode == TW_RQ_SHIFT) {
        int32_t hi;
        uint32_t lo;
        tw_pulp_mul64_add(acc, c->m, (uint32_t)c->a, c->b, &hi, &lo);
        r = tw_pulp_shr64_lo(hi, lo, c->c);
        if (mode == TW_RQ_SHIFT) {
            int32_t top = c->c < 32 ? tw_pulp_asr(hi, c->c) : tw_pulp_asr(hi, 31);
            if (top != tw_pulp_asr(r, 31))          /* beyond int32: saturate */
                r = top < 0 ? INT32_MIN : INT32_MAX;
        }
    } else if (mode == TW_PULP_RQ_ONNX24) {
        r = tw_pulp_rq_onnx24(c, acc);
    } else if (mode == TW_PULP_RQ_ONNX_FPU) {
        r = tw_pulp_rq_onnx_fpu(c, acc);
    } else {
        r = tw_pulp_rq_onnx(c, acc);
    }
    return r;
}

/* The requantized output of accumulator acc (the channel's words, the clamp). */
TW_PULP_INLINE int8_t tw_pulp_rq(const tw_pulp_rqch_t *c, const tw_pulp_clip_t *clip,
                                 int32_t acc, const int mode)
{
    return (int8_t)(tw_pulp_clamp(tw_pulp_rq_raw(c, acc, mode), clip->lo, clip->hi) + clip->zp);
}

/* The outputs of accumulators a0..a3 requantized with channels c0..c3 as one word, lane j the
 * output of aj. On Arm the clamp is done four lanes at a time: each r saturated with the zero
 * point added (qadd: r + zp, or beyond int32 by sign) to int8 (ssat), the four packed, then the
 * lanes limited to [qmin, qmax] by two ssub8 + sel pairs — clamp(r + zp, qmin, qmax) =
 * clamp(ssat8(r + zp), qmin, qmax) since qmin >= -128 and qmax <= 127; elsewhere four
 * tw_pulp_rq. */
#if TW_PULP_ARM
/* One lane of tw_pulp_rq4c before the lane clamp: r + zp saturated (qadd), then to int8 (ssat). */
TW_PULP_INLINE uint32_t tw_pulp_rq_lane(const tw_pulp_rqch_t *c, const tw_pulp_clip_t *clip,
                                        int32_t acc, const int mode)
{
    return (uint8_t)__ssat(__qadd(tw_pulp_rq_raw(c, acc, mode), clip->zp), 8);
}
#endif

TW_PULP_INLINE tw_v4_t tw_pulp_rq4c(const tw_pulp_rqch_t *c0, const tw_pulp_rqch_t *c1,
                                    const tw_pulp_rqch_t *c2, const tw_pulp_rqch_t *c3,
                                    const tw_pulp_clip_t *clip, int32_t a0, int32_t a1,
                                    int32_t a2, int32_t a3, const int mode)
{
#if TW_PULP_ARM
    uint32_t v = tw_pulp_rq_lane(c0, clip, a0, mode) | tw_pulp_rq_lane(c1, clip, a1, mode) << 8 |
                 tw_pulp_rq_lane(c2, clip, a2, mode) << 16 |
                 tw_pulp_rq_lane(c3, clip, a3, mode) << 24;
    (void)__ssub8(v, clip->lo4);             /* GE per lane: v >= qmin */
    v = __sel(v, clip->lo4);
    (void)__ssub8(clip->hi4, v);             /* GE per lane: qmax >= v */
    return __sel(v, clip->hi4);
#else
    return tw_pulp_pack4(tw_pulp_rq(c0, clip, a0, mode), tw_pulp_rq(c1, clip, a1, mode),
                         tw_pulp_rq(c2, clip, a2, mode), tw_pulp_rq(c3, clip, a3, mode));
#endif
}

/* The outputs of accumulators a0..a3 of four consecutive channels (their words w[0..16)) as one
 * word, lane j the output of channel j (tw_pulp_rq4c). */
TW_PULP_INLINE tw_v4_t tw_pulp_rq4(const int32_t *w, const tw_pulp_clip_t *clip, int32_t a0,
                                   int32_t a1, int32_t a2, int32_t a3, const int mode)
{
    tw_pulp_rqch_t c0 = tw_pulp_rq_channel(w, 4, 0), c1 = tw_pulp_rq_channel(w, 4, 1);
    tw_pulp_rqch_t c2 = tw_pulp_rq_channel(w, 4, 2), c3 = tw_pulp_rq_channel(w, 4, 3);
    return tw_pulp_rq4c(&c0, &c1, &c2, &c3, clip, a0, a1, a2, a3, mode);
}

#endif /* TW_PULP_REQUANT_H */
