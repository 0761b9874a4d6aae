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
 *
 * The folded form (bindings/pulp/addfold.py: where it is exact for the layer) goes further: the
 * tables hold each input's scaled value times the output multiplier, shifted into int32 with the
 * output's rounding and zero point in a's, so that an element is
 *     out = clamp((TA[a] + TB[b]) >> shift, qmin, qmax)
 * — no multiply. The tables are indexed by the input byte as unsigned, so that four elements are
 * one word load per input and each index a shift and a mask (byte · 4); on RISC-V a hardware loop
 * of four elements: per input a p.lw with post-increment, per element two register-offset p.lw,
 * one p.addN (add and arithmetic shift by a register), one p.clip to int8, then pv.packlo.b /
 * pv.packhi.b, the clamp on the four lanes (pv.max.b / pv.min.b) and one p.sw: 39 instructions,
 * ordered so that no loaded value is used by the next instruction.
 */
#include "tw_pulp_elementwise.h"

#include "tw_pulp_common.h"
#include "tw_pulp_requant.h"

/* One entry of an input's table: MBQM((q - zp) << L, M, shift), negated for the subtrahend. */
TW_PULP_INLINE int32_t scaled(const tw_pulp_rqch_t *rq, int32_t q, int32_t zp,
                              int32_t left_shift, int negate)
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

/* Folded entries [i, end) of one input's table (codes (int8_t)i): the scaled value (rq, zp,
 * left_shift, negate: as `scaled`) times m plus the 64-bit (hi:lo), shifted right by k. */
TW_PULP_INLINE void fold_entries(int32_t *table, int i, int end, const tw_pulp_rqch_t *rq,
                                 int32_t zp, int32_t left_shift, int negate, int32_t m,
                                 uint32_t lo, int32_t hi, int32_t k)
{
    for (; i < end; i++) {
        int32_t s = scaled(rq, (int32_t)(int8_t)(uint8_t)i, zp, left_shift, negate), h;
        uint32_t l;
        tw_pulp_mul64_add(s, m, lo, hi, &h, &l);
        table[i] = tw_pulp_shr64_lo(h, l, k);
    }
}

void tw_pulp_add_fold_tables(const tw_add_params_t *p, const tw_add_fold_t *f, int32_t *tables,
                             int sub, int core_id, int n_cores)
{
    tw_add_params_t q = *p;
    tw_add_fold_t g = *f;
    tw_pulp_rqch_t ra = tw_pulp_rq_tflite(q.a_mult, q.a_shift);
    tw_pulp_rqch_t rb = tw_pulp_rq_tflite(q.b_mult, q.b_shift);
    const int n = TW_PULP_ADD_VALUES;
    int i, end;
    tw_pulp_share(2 * n, core_id, n_cores, &i, &end);
    fold_entries(tables, i, end < n ? end : n, &ra, q.a_zp, q.left_shift, 0, q.out_mult,
                 (uint32_t)g.a_lo, g.a_hi, g.k);
    fold_entries(tables + n, i > n ? i - n : 0, end - n, &rb, q.b_zp, q.left_shift, sub,
                 q.out_mult, (uint32_t)g.b_lo, g.b_hi, g.k);
}

void tw_pulp_add_fold_copy(const int32_t *src, int32_t *tables, int core_id, int n_cores)
{
    int i, end;
    tw_pulp_share(2 * TW_PULP_ADD_VALUES, core_id, n_cores, &i, &end);
    for (; i < end; i++)
        tables[i] = src[i];
}

/* One folded element before the clamp: (TA[ua] + TB[ub]) >> shift (ua, ub the input bytes). */
TW_PULP_INLINE int32_t fold_one(const int32_t *ta, const int32_t *tb, uint32_t ua, uint32_t ub,
                                int32_t shift)
{
    return tw_pulp_asr(ta[ua & 255u] + tb[ub & 255u], shift);
}

/* Four folded elements clamped to [qmin, qmax] as one word (lane j: vj). On Arm each saturated
 * to int8 (ssat), packed, and the lanes limited by ssub8 + sel, as tw_pulp_rq4c. */
TW_PULP_INLINE tw_v4_t fold_clamp4(int32_t v0, int32_t v1, int32_t v2, int32_t v3,
                                   const tw_pulp_clip_t *clip)
{
#if TW_PULP_ARM
    uint32_t v = (uint8_t)__ssat(v0, 8) | (uint32_t)(uint8_t)__ssat(v1, 8) << 8 |
                 (uint32_t)(uint8_t)__ssat(v2, 8) << 16 | (uint32_t)(uint8_t)__ssat(v3, 8) << 24;
    (void)__ssub8(v, clip->lo4);             /* GE per lane: v >= qmin */
    v = __sel(v, clip->lo4);
    (void)__ssub8(clip->hi4, v);             /* GE per lane: qmax >= v */
    return __sel(v, clip->hi4);
#else
    return tw_pulp_pack4(tw_pulp_clamp(v0, clip->lo, clip->hi), tw_pulp_clamp(v1, clip->lo, clip->hi),
                         tw_pulp_clamp(v2, clip->lo, clip->hi), tw_pulp_clamp(v3, clip->lo, clip->hi));
#endif
}

/* Folded elements [0, 4·quads) of a, b into out, four a step. */
static void fold_quads(const int32_t *ta, const int32_t *tb, int32_t shift, const int8_t *a,
                       const int8_t *b, int8_t *out, int quads, const tw_pulp_clip_t *clip)
{
#if TW_PULP_ASM
    uint32_t lo4 = (uint8_t)clip->lo * 0x01010101u, hi4 = (uint8_t)clip->hi * 0x01010101u;
    uint32_t wa, wb, t0, t1, t2, t3, t4, t5, t6, t7, v = 0;
    if (quads <= 0)
        return;
/* index of lane (shift instruction `sh`, amount) of word w: (byte · 4) into t */
#define TW_FOLD_IX(t, sh, w, amount) sh " " t ", " w ", " #amount "\n\t"
#define TW_FOLD_MASK(t) "andi " t ", " t ", 1020\n\t"
/* p.lw t, t(base): register-offset load */
#define TW_FOLD_LOOKUP(t, base) ".insn r 0x03, 7, 0x10, " t ", " base ", " t "\n\t"
/* p.addN t, u, shift: t = (t + u) >> shift (arithmetic); p.clip t, t, 8: to [-128, 127] */
#define TW_FOLD_ADDN(t, u) ".insn r 0x5B, 2, 0x20, " t ", " u ", %[s]\n\t"
#define TW_FOLD_CLIP(t) ".insn r 0x33, 1, 0x0A, " t ", " t ", x8\n\t"
    __asm__ volatile(
        TW_PULP_LOOP(78)   /* a body of 39 */
        TW_PULP_P_LW("%[wa]", "%[a]") TW_PULP_P_LW("%[wb]", "%[b]")
        TW_FOLD_IX("%[t0]", "slli", "%[wa]", 2) TW_FOLD_IX("%[t1]", "slli", "%[wb]", 2)
        TW_FOLD_MASK("%[t0]") TW_FOLD_MASK("%[t1]")
        TW_FOLD_IX("%[t2]", "srli", "%[wa]", 6) TW_FOLD_IX("%[t3]", "srli", "%[wb]", 6)
        TW_FOLD_MASK("%[t2]") TW_FOLD_MASK("%[t3]")
        TW_FOLD_LOOKUP("%[t0]", "%[ta]") TW_FOLD_LOOKUP("%[t1]", "%[tb]")
        TW_FOLD_LOOKUP("%[t2]", "%[ta]") TW_FOLD_LOOKUP("%[t3]", "%[tb]")
        TW_FOLD_IX("%[t4]", "srli", "%[wa]", 14) TW_FOLD_IX("%[t5]", "srli", "%[wb]", 14)
        TW_FOLD_ADDN("%[t0]", "%[t1]") TW_FOLD_ADDN("%[t2]", "%[t3]")
        TW_FOLD_MASK("%[t4]") TW_FOLD_MASK("%[t5]")
        TW_FOLD_IX("%[t6]", "srli", "%[wa]", 22) TW_FOLD_IX("%[t7]", "srli", "%[wb]", 22)
        TW_FOLD_LOOKUP("%[t4]", "%[ta]") TW_FOLD_LOOKUP("%[t5]", "%[tb]")
        TW_FOLD_MASK("%[t6]") TW_FOLD_MASK("%[t7]")
        TW_FOLD_LOOKUP("%[t6]", "%[ta]") TW_FOLD_LOOKUP("%[t7]", "%[tb]")
        TW_FOLD_CLIP("%[t0]") TW_FOLD_CLIP("%[t2]")
        TW_FOLD_ADDN("%[t4]", "%[t5]") TW_FOLD_ADDN("%[t6]", "%[t7]")
        ".insn r 0x57, 1, 0x70, %[v], %[t2], %[t0]\n\t"     /* pv.packlo.b: lanes 0, 1 */
        TW_FOLD_CLIP("%[t4]") TW_FOLD_CLIP("%[t6]")
        ".insn r 0x57, 1, 0x6C, %[v], %[t6], %[t4]\n\t"     /* pv.packhi.b: lanes 2, 3 */
        ".insn r 0x57, 1, 0x18, %[v], %[v], %[lo4]\n\t"     /* pv.max.b: qmin */
        ".insn r 0x57, 1, 0x10, %[v], %[v], %[hi4]\n\t"     /* pv.min.b: qmax */
        TW_PULP_P_SW("%[v]", "%[o]")
        TW_PULP_LOOP_END
        : [a] "+r"(a), [b] "+r"(b), [o] "+r"(out), [v] "+r"(v), [wa] "=&r"(wa), [wb] "=&r"(wb),
          [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
          [t5] "=&r"(t5), [t6] "=&r"(t6), [t7] "=&r"(t7)
        : [n] "r"(quads), [ta] "r"(ta), [tb] "r"(tb), [s] "r"(shift), [lo4] "r"(lo4),
          [hi4] "r"(hi4)
        : "memory");
#undef TW_FOLD_IX
#undef TW_FOLD_MASK
#undef TW_FOLD_LOOKUP
#undef TW_FOLD_ADDN
#undef TW_FOLD_CLIP
#else
    int i;
    for (i = 0; i < quads; i++) {
        uint32_t wa = tw_pulp_lw_step(&a, 4), wb = tw_pulp_lw_step(&b, 4);
        tw_pulp_sw(out, fold_clamp4(fold_one(ta, tb, wa, wb, shift),
                                    fold_one(ta, tb, wa >> 8, wb >> 8, shift),
                                    fold_one(ta, tb, wa >> 16, wb >> 16, shift),
                                    fold_one(ta, tb, wa >> 24, wb >> 24, shift), clip));
        out += 4;
    }
#endif
}

void tw_pulp_add_fold_s8(const tw_add_params_t *p, const int32_t *tables, int32_t shift,
                         const int8_t *a, const int8_t *b, int8_t *out, int n, int core_id,
                         int n_cores)
{
    tw_pulp_clip_t clip = tw_pulp_clip(p->qmin, p->qmax, 0);
    const int32_t *ta = tables, *tb = tables + TW_PULP_ADD_VALUES;
    int q0, q1, i;
    tw_pulp_share(n >> 2, core_id, n_cores, &q0, &q1);   /* quads: words stay aligned */
    fold_quads(ta, tb, shift, a + 4 * q0, b + 4 * q0, out + 4 * q0, q1 - q0, &clip);
    if (core_id == n_cores - 1)                           /* the last core: the n % 4 tail */
        for (i = n & ~3; i < n; i++)
            out[i] = (int8_t)tw_pulp_clamp(fold_one(ta, tb, (uint8_t)a[i], (uint8_t)b[i], shift),
                                           clip.lo, clip.hi);
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

void tw_pulp_add_onnx_exact_s8(const tw_add_onnx_exact_params_t *p, const int8_t *a,
                               const int8_t *b, int8_t *out, int n, int core_id, int n_cores)
{
    const int64_t *tb = p->tb;
    int64_t ma = p->ma;
    int32_t rr = p->shift - 32, off = p->out_off;
    uint32_t half = 1u << (rr - 1);
    tw_pulp_clip_t clip = tw_pulp_clip(p->qmin - off, p->qmax - off, 0);
    int i, end;
    tw_pulp_share(n, core_id, n_cores, &i, &end);
    for (; i < end; i++) {
        /* x = a·ma + tb[b] exactly (|x| < 2^53), then tw_pulp_rq_onnx's one-word rounding */
        uint64_t x = (uint64_t)((int64_t)a[i] * ma + tb[(int32_t)b[i] + 128]);
        uint32_t hi = (uint32_t)(x >> 32), lo = (uint32_t)x;
        uint32_t msb = tw_pulp_msb((hi ^ (uint32_t)tw_pulp_asr((int32_t)hi, 31)) | 1u);
        uint32_t e = ((hi >> rr) & 1u) - 1u;
        uint32_t slo = lo + ((msb << 8) ^ e);
        uint32_t shi = hi + half + ((msb >> 24) ^ e) + (slo < lo);
        int32_t y = tw_pulp_asr((int32_t)shi, rr) - off;
        out[i] = (int8_t)tw_pulp_clamp(y, clip.lo, clip.hi);
    }
}
