/*
 * tw_lstm.c — TFLite's integer LSTM step (tw_lstm.h). The int16 fixed-point functions follow
 * gemmlowp/fixedpoint/fixedpoint.h's int16 specializations step by step: products by
 * SaturatingRoundingDoublingHighMul, sums wrapping in int16, the int32 constants rounding-shifted
 * right by 16 (RescaleConstantInitializer); golden/gemmlowp16.py is the same in numpy.
 */
#include "tw_lstm.h"

#include "tw_requant.h"

#define TW_I16_MIN (-32768)
#define TW_I16_MAX 32767

/* The steps below inlined into each caller, so that a constant number of integer bits (3 for the
 * gates' sigmoid, 4 inside the cell gate's tanh) folds the barrel loop and its tests away. */
#if defined(__GNUC__)
#define TW_LSTM_INLINE static inline __attribute__((always_inline))
#else
#define TW_LSTM_INLINE static inline
#endif

TW_LSTM_INLINE int32_t tw_sat16(int32_t v)
{
    return v > TW_I16_MAX ? TW_I16_MAX : v < TW_I16_MIN ? TW_I16_MIN : v;
}

/* x / 2^e truncated toward zero as C's division, by shifts: RISC-V GCC emitted `div` for
 * `/ (1 << 15)`, which RI5CY's serial divider takes tens of cycles for. */
TW_LSTM_INLINE int32_t tw_div_pot(int32_t x, int e)
{
    return tw_asr32(x + (x < 0 ? (1 << e) - 1 : 0), e);
}

/* SaturatingRoundingDoublingHighMul for int16. */
TW_LSTM_INLINE int16_t tw_mul16(int16_t a, int16_t b)
{
    int32_t ab;
    if (a == TW_I16_MIN && b == TW_I16_MIN) return TW_I16_MAX;
    ab = (int32_t)a * (int32_t)b;
    return (int16_t)tw_div_pot(ab + (ab >= 0 ? (1 << 14) : (1 - (1 << 14))), 15);
}

/* SaturatingRoundingMultiplyByPOT<e> for e >= 0 on int16. */
TW_LSTM_INLINE int16_t tw_shl16(int16_t x, int e)
{
    int32_t threshold = (1 << (15 - e)) - 1;
    if (x > threshold) return TW_I16_MAX;
    if (x < -threshold) return TW_I16_MIN;
    return (int16_t)(x * (1 << e));
}

/* exp(a) for a in [-1/4, 0), Q0.15 (Taylor expansion around -1/8). */
TW_LSTM_INLINE int16_t tw_exp_quarter(int16_t a)
{
    const int16_t constant_term = 28918;   /* exp(-1/8) */
    const int16_t one_third = 10923;
    int16_t x = (int16_t)(a + (1 << 12));
    int16_t x2 = tw_mul16(x, x);
    int16_t x3 = tw_mul16(x2, x);
    int16_t x4 = tw_mul16(x2, x2);
    int16_t x4_over_4 = (int16_t)tw_rounding_divide_by_pot(x4, 2);
    int16_t inner = (int16_t)(tw_mul16((int16_t)(x4_over_4 + x3), one_third) + x2);
    int16_t poly = (int16_t)tw_rounding_divide_by_pot(inner, 1);
    return (int16_t)tw_sat16(constant_term + tw_mul16(constant_term, (int16_t)(x + poly)));
}

/* exp(a) for a <= 0 in Q(bits).(15-bits), result Q0.15. */
TW_LSTM_INLINE int16_t tw_exp_neg16(int16_t a, int bits)
{
    /* exp(-2^e) for e = -2 .. 4, Q0.15 */
    static const int16_t barrel[7] = {25520, 19875, 12055, 4435, 600, 11, 0};
    int frac = 15 - bits;
    int32_t quarter = 1 << (frac - 2);
    int16_t a_mod = (int16_t)((a & (quarter - 1)) - quarter);
    int16_t result = tw_exp_quarter(tw_shl16(a_mod, bits));
    int16_t remainder = (int16_t)(a_mod - a);
    int k;
    for (k = 0; k < 7; k++) {
        int e = k - 2;
        if (bits > e && (remainder & (1 << (frac + e))))
            result = tw_mul16(result, barrel[k]);
    }
    if (bits > 5 && a < -(1 << (20 - bits)))   /* below -32: 0 */
        result = 0;
    return a == 0 ? TW_I16_MAX : result;
}

/* The Newton-Raphson reciprocal of gemmlowp's one_over_one_plus_x / one_minus_x_over_one_plus_x:
 * half_d = (e + 1) / 2 rounded, three steps in Q2.13. */
TW_LSTM_INLINE int16_t tw_newton16(int16_t e)
{
    int32_t s = (int32_t)e + TW_I16_MAX;
    int16_t half_d = (int16_t)tw_div_pot(s + (s >= 0 ? 1 : -1), 1);
    int16_t x = (int16_t)(23130 + tw_mul16(half_d, -15420));   /* 48/17 - 32/17 * d */
    int i;
    for (i = 0; i < 3; i++) {
        int16_t one_minus = (int16_t)((1 << 13) - tw_mul16(half_d, x));
        x = (int16_t)(x + tw_shl16(tw_mul16(x, one_minus), 2));
    }
    return x;
}

TW_LSTM_INLINE int16_t tw_sigmoid16(int16_t a)
{
    int16_t abs_a, x, pos;
    if (a == 0) return 16384;
    abs_a = a > 0 ? a : (int16_t)(-a);
    x = tw_newton16(tw_exp_neg16((int16_t)(-abs_a), 3));
    pos = tw_shl16(x, 1);
    return a > 0 ? pos : (int16_t)(TW_I16_MAX - pos);
}

TW_LSTM_INLINE int16_t tw_tanh16(int16_t a, int bits)
{
    int16_t n, x, t;
    if (a == 0) return 0;
    n = a < 0 ? a : (int16_t)(-a);
    x = tw_newton16(tw_exp_neg16(n, bits + 1));
    t = tw_shl16((int16_t)(x - (1 << 13)), 2);
    return a < 0 ? (int16_t)(-t) : t;
}

int16_t tw_lstm_sigmoid(int16_t a)
{
    return tw_sigmoid16(a);
}

/* The cell gate's tanh (3 integer bits), one copy folded for its constant. */
static int16_t tw_tanh_gate(int16_t a)
{
    return tw_tanh16(a, 3);
}

/* tanh with the integer bits as a constant in each case (folded, tw_exp_neg16). */
int16_t tw_lstm_tanh(int16_t a, int bits)
{
    switch (bits) {
    case 0: return tw_tanh16(a, 0);
    case 1: return tw_tanh16(a, 1);
    case 2: return tw_tanh16(a, 2);
    case 3: return tw_tanh16(a, 3);
    case 4: return tw_tanh16(a, 4);
    case 5: return tw_tanh16(a, 5);
    case 6: return tw_tanh16(a, 6);
    default: return tw_tanh16(a, bits);
    }
}

void tw_lstm_reset(const tw_lstm_t *p, int8_t *h, int16_t *c)
{
    int k;
    for (k = 0; k < p->n_cell; k++) {
        h[k] = (int8_t)p->state_zp;
        c[k] = 0;
    }
}

void tw_lstm_gates(const tw_lstm_t *p, const int8_t *x, const int8_t *h, int16_t *gate)
{
    const int H = p->n_cell, I = p->n_input;
    const int8_t *wx = p->w_x, *wh = p->w_h;
    int g, r, j;
    for (g = 0; g < 4; g++) {
        for (r = 0; r < H; r++, wx += I, wh += H) {
            int32_t acc = p->b_x[g * H + r], v;
            for (j = 0; j < I; j++) acc += (int32_t)wx[j] * x[j];
            v = tw_sat16(tw_mbqm(acc, p->in_mult[g], p->in_shift[g]));
            acc = p->b_h[g * H + r];
            for (j = 0; j < H; j++) acc += (int32_t)wh[j] * h[j];
            gate[g * H + r] = (int16_t)tw_sat16(tw_mbqm(acc, p->rec_mult[g], p->rec_shift[g]) + v);
        }
    }
}

int8_t tw_lstm_cell(const tw_lstm_t *p, int16_t gi, int16_t gf, int16_t gg, int16_t go, int16_t *c)
{
    const int bits = 15 + p->cell_scale, shift = 30 + p->cell_scale;
    int16_t i = tw_lstm_sigmoid(gi);
    int16_t f = tw_lstm_sigmoid(gf);
    int16_t g = tw_tanh_gate(gg);
    int16_t o = tw_lstm_sigmoid(go);
    int32_t v = (int16_t)tw_rounding_divide_by_pot((int32_t)f * *c, 15)
              + (int16_t)tw_rounding_divide_by_pot((int32_t)i * g, shift);
    v = tw_sat16(v);
    if (p->cell_clip > 0) v = v > p->cell_clip ? p->cell_clip : v < -p->cell_clip ? -p->cell_clip : v;
    *c = (int16_t)v;
    /* LiteRT's PortableApplyTanh dispatches 0..6 integer bits and leaves its output (the input
     * gate's scratch) alone otherwise: there o multiplies the input gate (golden/lstm.py) */
    v = (bits >= 0 && bits <= 6) ? tw_lstm_tanh((int16_t)v, bits) : i;
    v = tw_mbqm((int32_t)o * v, p->hidden_mult, p->hidden_shift) + p->hidden_zp;
    return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}

void tw_lstm_update(const tw_lstm_t *p, const int16_t *gate, int16_t *c, int8_t *h)
{
    const int H = p->n_cell;
    int k;
    for (k = 0; k < H; k++)
        h[k] = tw_lstm_cell(p, gate[k], gate[H + k], gate[2 * H + k], gate[3 * H + k], &c[k]);
}
