/*
 * tw_pulp_elementwise.c — int8 ADD / SUB / MUL, TFLite arithmetic in 32 bits (contract in
 * tw_pulp_elementwise.h; the operations as in TFLite's reference integer_ops add.h / mul.h).
 *
 * ADD / SUB scale each input d = q - zp by MBQM(d << L, M, shift) (L = left_shift), and q takes
 * only 256 values: tw_pulp_add_tables computes both inputs' scaled values once per layer (every
 * core a share of the 512 entries, in the exact arithmetic of tw_pulp_requant.h; the subtrahend's
 * negated, so SUB is an ADD of tables), and per element the kernel is two table reads, a sum and
 * the output's MBQM — one multiply-high requantization per element instead of three. When the
 * output shift is a right shift and no sum of table entries can overflow its rounding (`right`,
 * decided at generation: bindings/pulp/simple.py), the output's MBQM takes the one-rounding form
 * of TW_PULP_RQ_TFLITE_RIGHT (tw_pulp_requant.h), exact there.
 */
#include "tw_pulp_elementwise.h"

#include "tw_pulp_common.h"
#include "tw_pulp_requant.h"

/* One entry of an input's table: MBQM((q - zp) << L, M, shift), negated for the subtrahend. */
static int32_t scaled(const tw_pulp_rqch_t *rq, int32_t q, int32_t zp, int32_t left_shift,
                      int negate)
{
    int32_t x = (int32_t)((uint32_t)(q - zp) << left_shift);
    int32_t s = tw_pulp_rq_raw(rq, x, TW_RQ_TFLITE);
    return negate ? -s : s;
}

void tw_pulp_add_tables(const tw_add_params_t *p, int32_t *tables, int sub, int core_id,
                        int n_cores)
{
    tw_add_params_t q = *p;
    tw_pulp_rqch_t ra = tw_pulp_rq_tflite(q.a_mult, q.a_shift);
    tw_pulp_rqch_t rb = tw_pulp_rq_tflite(q.b_mult, q.b_shift);
    int i, end;
    tw_pulp_share(2 * TW_PULP_ADD_VALUES, core_id, n_cores, &i, &end);
    for (; i < end; i++) {
        int32_t v = (i & (TW_PULP_ADD_VALUES - 1)) - 128;
        tables[i] = i < TW_PULP_ADD_VALUES ? scaled(&ra, v, q.a_zp, q.left_shift, 0)
                                           : scaled(&rb, v, q.b_zp, q.left_shift, sub);
    }
}

/* The elements [i, end) of an ADD by its tables in requant mode `mode` (TW_RQ_TFLITE, or
 * TW_PULP_RQ_TFLITE_RIGHT with the words of tw_pulp_rq_right): two elements a step, so that one's
 * loads fill the other's load-use and multiply-high stalls; bytes loaded with post-increment. */
TW_PULP_INLINE void add_run(const int32_t *ta, const int32_t *tb, const int8_t *a, const int8_t *b,
                            int8_t *out, int n, const tw_pulp_rqch_t *ro,
                            const tw_pulp_clip_t *clip, const int mode)
{
    int8_t *const end = out + (n & ~1);
    while (out < end) {
        int32_t qa0 = tw_pulp_lb_step(&a, 1), qb0 = tw_pulp_lb_step(&b, 1);
        int32_t qa1 = tw_pulp_lb_step(&a, 1), qb1 = tw_pulp_lb_step(&b, 1);
        int32_t s0 = ta[qa0] + tb[qb0], s1 = ta[qa1] + tb[qb1];
        out[0] = tw_pulp_rq(ro, clip, s0, mode);
        out[1] = tw_pulp_rq(ro, clip, s1, mode);
        out += 2;
    }
    if (n & 1)
        *out = tw_pulp_rq(ro, clip, ta[*a] + tb[*b], mode);
}

void tw_pulp_add_s8(const tw_add_params_t *p, const int32_t *tables, int right,
                    const int8_t *a, const int8_t *b, int8_t *out, int n, int core_id,
                    int n_cores)
{
    tw_add_params_t q = *p;                        /* locals: no int8 store aliases them */
    tw_pulp_clip_t clip = tw_pulp_clip(q.qmin, q.qmax, q.out_zp);
    const int32_t *ta = tables + 128, *tb = tables + TW_PULP_ADD_VALUES + 128;
    tw_pulp_rqch_t ro;
    int i, end;
    tw_pulp_share(n, core_id, n_cores, &i, &end);
    if (right) {
        ro = tw_pulp_rq_right(q.out_mult, q.out_shift);
        add_run(ta, tb, a + i, b + i, out + i, end - i, &ro, &clip, TW_PULP_RQ_TFLITE_RIGHT);
    } else {
        ro = tw_pulp_rq_tflite(q.out_mult, q.out_shift);
        add_run(ta, tb, a + i, b + i, out + i, end - i, &ro, &clip, TW_RQ_TFLITE);
    }
}

void tw_pulp_mul_s8(const tw_mul_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                    int n, int core_id, int n_cores)
{
    tw_mul_params_t q = *p;
    tw_pulp_rqch_t ro = tw_pulp_rq_tflite(q.out_mult, q.out_shift);
    tw_pulp_clip_t clip = tw_pulp_clip(q.qmin, q.qmax, q.out_zp);
    int i, end;
    tw_pulp_share(n, core_id, n_cores, &i, &end);
    for (; i < end; i++)
        out[i] = tw_pulp_rq(&ro, &clip, (a[i] - q.a_zp) * (b[i] - q.b_zp), TW_RQ_TFLITE);
}
