/*
 * tw_softmax.c — int8 softmax, TFLite reference arithmetic (contract in tw_softmax.h).
 *
 * gemmlowp fixed point on raw int32 values: a value "Qm" has m integer bits and 31 - m fraction
 * bits. Multiplying Qa by Qb is SaturatingRoundingDoublingHighMul and gives Q(a+b); rescaling
 * from Qa to Qb is a saturating rounding multiply by 2^(a-b). exp() of a non-positive Q5.26
 * value follows gemmlowp's exp_on_negative_values: a Taylor polynomial around -1/8 on
 * [-1/4, 0) and a barrel shifter of exp(-2^k) constants for the integer part; 1/(1+x) uses
 * gemmlowp's three Newton-Raphson steps. The constants below are gemmlowp's.
 */
#include "tw_softmax.h"

#include <math.h>

#include <stddef.h>

#include "tw_requant.h"

#define SCALED_DIFF_INT_BITS 5     /* exp() input: Q5.26 */
#define ACCUM_INT_BITS 12          /* sum of exps: Q12.19 */

/* gemmlowp SaturatingRoundingMultiplyByPOT: x * 2^e, saturating for e > 0, rounding for e < 0. */
static int32_t mul_by_pot(int32_t x, int e)
{
    if (e > 0) {
        int32_t threshold = (int32_t)((1LL << (31 - e)) - 1);
        if (x > threshold) return INT32_MAX;
        if (x < -threshold) return INT32_MIN;
        return (int32_t)((uint32_t)x << e);
    }
    if (e < 0)
        return tw_rounding_divide_by_pot(x, -e);
    return x;
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out. */
static int32_t exp_on_interval_neg_quarter_to_0(int32_t a)
{
    const int32_t exp_minus_1_8 = 1895147668;      /* exp(-1/8) */
    const int32_t one_third = 715827883;           /* 1/3 */
    int32_t x = a + (1 << 28);                     /* x = a + 1/8 */
    int32_t x2 = tw_srdhm(x, x);
    int32_t x3 = tw_srdhm(x2, x);
    int32_t x4 = tw_srdhm(x2, x2);
    int32_t x4_over_4 = mul_by_pot(x4, -2);
    /* x^4/24 + x^3/6 + x^2/2 = ((x^4/4 + x^3) / 3 + x^2) / 2 */
    int32_t poly = mul_by_pot(tw_srdhm(x4_over_4 + x3, one_third) + x2, -1);
    return exp_minus_1_8 + tw_srdhm(exp_minus_1_8, x + poly);
}

/* exp(a) for a <= 0: a in Q5.26, result in Q0.31. */
static int32_t exp_on_negative_values(int32_t a)
{
    /* exp(-2^k) in Q0.31 for k = -2 .. 4 */
    static const int32_t exp_neg_pot[7] = {
        1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242
    };
    const int frac_bits = 31 - SCALED_DIFF_INT_BITS;
    const int32_t one_quarter = 1 << (frac_bits - 2);
    int32_t a_mod_quarter_minus_quarter = (a & (one_quarter - 1)) - one_quarter;
    int32_t result = exp_on_interval_neg_quarter_to_0(
        mul_by_pot(a_mod_quarter_minus_quarter, SCALED_DIFF_INT_BITS));   /* Q5 -> Q0 */
    int32_t remainder = a_mod_quarter_minus_quarter - a;                  /* = -(a rounded to 1/4) */
    int k;
    for (k = -2; k <= 4; k++)
        if (remainder & (1 << (frac_bits + k)))
            result = tw_srdhm(result, exp_neg_pot[k + 2]);
    return a == 0 ? INT32_MAX : result;
}

/* 1 / (1 + a) for a in [0, 1): Q0.31 in and out (Newton-Raphson, gemmlowp). */
static int32_t one_over_one_plus_x(int32_t a)
{
    const int32_t c_48_over_17 = 1515870810;       /* Q2.29 */
    const int32_t c_neg_32_over_17 = -1010580540;  /* Q2.29 */
    const int32_t one_q2 = 1 << 29;
    int64_t sum = (int64_t)a + INT32_MAX;           /* RoundingHalfSum(a, 1.0) */
    int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t x = c_48_over_17 + tw_srdhm(half_denominator, c_neg_32_over_17);   /* Q2 */
    int i;
    for (i = 0; i < 3; i++) {
        int32_t half_denominator_times_x = tw_srdhm(half_denominator, x);      /* Q2 */
        int32_t one_minus = one_q2 - half_denominator_times_x;                  /* Q2 */
        x = x + mul_by_pot(tw_srdhm(x, one_minus), 2);                          /* Q4 -> Q2 */
    }
    return mul_by_pot(x, 1);                        /* x / 2 as Q1, rescaled to Q0 */
}

static int count_leading_zeros(uint32_t x)
{
    int n = 0;
    if (x == 0) return 32;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
}

/* exp of (x - row max) in Q0.31, as the reference computes it (caller checks diff_min). */
static int32_t row_exp(const tw_softmax_args_t *a, int32_t diff)
{
    int32_t shifted = (int32_t)((uint32_t)diff << a->input_beta_left_shift);
    return exp_on_negative_values(tw_srdhm(shifted, a->input_beta_multiplier));
}

void tw_softmax_s8(const tw_softmax_args_t *a, int core_id, int n_cores)
{
    int row_begin, row_end, r, c;
    tw_core_range(a->rows, core_id, n_cores, &row_begin, &row_end);
    for (r = row_begin; r < row_end; r++) {
        const int8_t *x = a->in + (size_t)r * a->depth;
        int8_t *y = a->out + (size_t)r * a->depth;
        int32_t max = -128, sum = 0, scale;
        int headroom_plus_one, bits_over_unit;

        for (c = 0; c < a->depth; c++)
            if (x[c] > max) max = x[c];

        for (c = 0; c < a->depth; c++) {
            int32_t diff = x[c] - max;
            if (diff >= a->diff_min)
                sum += mul_by_pot(row_exp(a, diff), -ACCUM_INT_BITS);   /* Q0 -> Q12 */
        }

        /* GetReciprocal: sum (Q12) = 2^bits_over_unit * (1 + f); scale = 1 / (1 + f) in Q0 */
        headroom_plus_one = count_leading_zeros((uint32_t)sum);
        bits_over_unit = ACCUM_INT_BITS - headroom_plus_one;
        scale = one_over_one_plus_x(
            (int32_t)(((uint32_t)sum << headroom_plus_one) - (1u << 31)));

        for (c = 0; c < a->depth; c++) {
            int32_t diff = x[c] - max;
            int32_t v = -128;
            if (diff >= a->diff_min) {
                int32_t p = tw_rounding_divide_by_pot(tw_srdhm(scale, row_exp(a, diff)),
                                                      bits_over_unit + 31 - 8);
                v = tw_clamp32(p - 128, -128, 127);
            }
            y[c] = (int8_t)v;
        }
    }
}

void tw_softmax_onnx_s8(const tw_softmax_onnx_args_t *a, int core_id, int n_cores)
{
    int begin, end, r, j;
    size_t step = (size_t)(a->inner > 1 ? a->inner : 1);
    tw_core_range(a->rows, core_id, n_cores, &begin, &end);
    for (r = begin; r < end; r++) {
        /* row r = (o, i): its element j at (o·depth + j)·inner + i */
        size_t o = (size_t)r / step, i = (size_t)r % step;
        const int8_t *x = a->in + o * (size_t)a->depth * step + i;
        int8_t *y = a->out + o * (size_t)a->depth * step + i;
        int32_t m = -128;
        float total = 0.0f;
        for (j = 0; j < a->depth; j++)
            if (x[(size_t)j * step] > m) m = x[(size_t)j * step];
        for (j = 0; j < a->depth; j++)
            total = total + a->table[255 - m + x[(size_t)j * step]];
        for (j = 0; j < a->depth; j++) {
            float t = a->table[255 - m + x[(size_t)j * step]] * a->y_scale_inv;
            float q = nearbyintf(t / total);
            if (isnan(q) || isinf(q)) {   /* t·y_scale_inv overflowed (tw_softmax.h) */
                y[(size_t)j * step] = a->y_nonfinite;
                continue;
            }
            if (q > 1024.0f) q = 1024.0f;
            if (q < -1024.0f) q = -1024.0f;
            y[(size_t)j * step] = (int8_t)tw_clamp32((int32_t)q + a->y_zp, -128, 127);
        }
    }
}

/* LUTLookup: a 513-entry table at int16 value v, linearly interpolated on its 7 low bits. */
static int16_t lut16(const int16_t *t, int32_t v)
{
    int32_t index = 256 + (v >> 7), offset = v & 0x7f;
    int32_t base = t[index], slope = t[index + 1] - t[index];
    return (int16_t)(base + ((slope * offset + 64) >> 7));
}

static int32_t sat16(int32_t v)
{
    return v < -32768 ? -32768 : v > 32767 ? 32767 : v;
}

void tw_softmax_s16(const tw_softmax16_args_t *a, int core_id, int n_cores)
{
    int begin, end, r, j;
    tw_core_range(a->rows, core_id, n_cores, &begin, &end);
    for (r = begin; r < end; r++) {
        const int16_t *x = a->in + (size_t)r * a->depth;
        int16_t *y = a->out + (size_t)r * a->depth;
        int32_t m = -32768, sum = 0, shifted, h = 0, right;
        int16_t recip;
        uint32_t u;
        for (j = 0; j < a->depth; j++)
            if (x[j] > m) m = x[j];
        for (j = 0; j < a->depth; j++) {
            int32_t scaled = tw_mbqm(x[j] - m, a->input_multiplier, a->input_left_shift);
            y[j] = lut16(a->exp_lut, sat16(scaled + 32767));
            sum += y[j];
        }
        for (u = (uint32_t)sum; h < 32 && !(u & 0x80000000u); u <<= 1) h++;
        shifted = (int32_t)((((int64_t)sum << (h - 1)) + (1 << 13)) >> 14);
        recip = lut16(a->recip_lut, sat16(shifted - ((1 << 15) + (1 << 16))));
        right = 31 - h;
        for (j = 0; j < a->depth; j++) {
            int32_t v = (int32_t)(((int64_t)y[j] * recip + ((int64_t)1 << (right - 1))) >> right);
            y[j] = (int16_t)(v < 0 ? 0 : v > 32767 ? 32767 : v);
        }
    }
}
