/*
 * tw_pulp_matmul.h — the int8 MatMul of the pulp conv, 1x1 conv and dense kernels (internal:
 * generated code calls tw_pulp_conv.h).
 *
 * tw_pulp_mm_cols() multiplies one or two columns (an im2col buffer, an HWC input pixel, a dense
 * input row: `len` int8 values each) by the weight rows of output channels [k0, k1) (row k at
 * w + k·len) — seed 004 §3.3.3, Fig. 3.7 / 3.11:
 *   4x2  four output channels x two columns: per 4 reduction steps 6 p.lw + 8 pv.sdotsp.b in a
 *        hardware loop, 32 MACs in 14 cycles, no load-use stall (each loaded word is used two
 *        instructions later or more);
 *   4x1  the odd column, and dense layers: 5 p.lw + 4 pv.sdotsp.b, 16 MACs in 9 cycles;
 *   1x2 / 1x1  the leftover channels (k1 - k0 mod 4): 8 MACs in 5 cycles / 4 in 3 (+1 stall);
 * then the reduction leftover (len mod 4): for 4x2 and 4x1 one more word step whose column word
 * ends at the column's end with the lanes already counted zeroed (tw_pulp_tail), byte by byte for
 * 1x2, 1x1 and len < 4. Rows need no alignment (a misaligned word load costs one more cycle).
 *
 * Accumulators start from the bias (TW_ACC_FIRST; 0 without one) or from the int32 partial sums
 * of the previous reduction tile, and end as partial sums or, on the last reduction tile
 * (TW_ACC_LAST), requantized by tw_pulp_rq() with the channel's words loaded once per channel
 * and block. The common case, the whole reduction in one tile, runs tw_pulp_mm_whole: pointers
 * stepping from block to block and each block requantized right after its MatMul; the others
 * finish blocks in an out-of-line loop per mode (tw_pulp_acc_end_*), small in RI5CY's 512-byte
 * L0 instruction cache. `mode` is a compile-time constant in every caller (one kernel per
 * requant variant).
 */
#ifndef TW_PULP_MATMUL_H
#define TW_PULP_MATMUL_H

#include <stddef.h>
#include <stdint.h>

#include "tw_matmul.h"
#include "tw_pulp_requant.h"

/* Where a MatMul's accumulators come from and go to: the portable tw_mm_sink_t (bias, psum, out
 * as [pixels][row], flags; its rq is not read) and the requantization as tw_pulp_rq_t words. */
typedef struct {
    tw_mm_sink_t mm;
    const int32_t *words;
    int n;
    tw_pulp_clip_t clip;
} tw_pulp_sink_t;

TW_PULP_INLINE tw_pulp_sink_t tw_pulp_sink(const int32_t *bias, int32_t *psum, int8_t *out,
                                           int row, int flags, const tw_pulp_rq_t *rq)
{
    tw_pulp_sink_t s;
    tw_mm_sink_t mm = {bias, psum, out, row, flags, NULL, 32};
    s.mm = mm;
    s.words = rq->words;
    s.n = rq->n;
    s.clip = tw_pulp_clip(rq->qmin, rq->qmax, rq->zero_point);
    return s;
}

/* The n_ch x (1 or 2) accumulators of channels k.. and pixels p0, p1, as acc[2·j + pixel]: from
 * the bias (TW_ACC_FIRST; 0 without one) or the partial sums. */
TW_PULP_INLINE void tw_pulp_acc_init(const tw_pulp_sink_t *s, int k, int n_ch, int p0, int p1,
                                     int two, int32_t *acc)
{
    int j;
    if (s->mm.flags & TW_ACC_FIRST) {
        for (j = 0; j < n_ch; j++)
            acc[2 * j] = acc[2 * j + 1] = s->mm.bias ? s->mm.bias[k + j] : 0;
        return;
    }
    for (j = 0; j < n_ch; j++) {
        acc[2 * j] = s->mm.psum[(size_t)p0 * s->mm.row + k + j];
        acc[2 * j + 1] = two ? s->mm.psum[(size_t)p1 * s->mm.row + k + j] : 0;
    }
}

/* The accumulators acc[2·j + pixel] of channels k..k+n_ch-1, requantized on the last reduction
 * tile (the channel's words loaded once for both pixels), else kept as partial sums. One compact
 * loop, out of line and called once per block, so that a block's epilogue stays small in RI5CY's
 * 512-byte L0 instruction cache; the sink is copied into locals (no int8 store aliases them). */
TW_PULP_INLINE void tw_pulp_acc_end(const tw_pulp_sink_t *sink, int k, int n_ch, int p0, int p1,
                                    int two, const int32_t *acc, const int mode)
{
    tw_pulp_sink_t s = *sink;
    size_t i0 = (size_t)p0 * s.mm.row + k, i1 = (size_t)p1 * s.mm.row + k;
    int j;
    if (s.mm.flags & TW_ACC_LAST) {
        int8_t *o0 = s.mm.out + i0, *o1 = s.mm.out + i1;
        for (j = 0; j < n_ch; j++) {
            tw_pulp_rqch_t c = tw_pulp_rq_channel(s.words, s.n, k + j);
            o0[j] = tw_pulp_rq(&c, &s.clip, acc[2 * j], mode);
            if (two)
                o1[j] = tw_pulp_rq(&c, &s.clip, acc[2 * j + 1], mode);
        }
        return;
    }
    for (j = 0; j < n_ch; j++) {
        s.mm.psum[i0 + j] = acc[2 * j];
        if (two)
            s.mm.psum[i1 + j] = acc[2 * j + 1];
    }
}

#define TW_PULP_ACC_END(name, mode)                                                         \
    static TW_PULP_NOINLINE void tw_pulp_acc_end_##name(                                     \
        const tw_pulp_sink_t *s, int k, int n_ch, int p0, int p1, int two, const int32_t *acc) \
    {                                                                                       \
        tw_pulp_acc_end(s, k, n_ch, p0, p1, two, acc, mode);                                \
    }

TW_PULP_VARIANTS(TW_PULP_ACC_END)

/* The out-of-line tw_pulp_acc_end of `mode` (a compile-time constant: one call remains). */
TW_PULP_INLINE void tw_pulp_finish(const tw_pulp_sink_t *s, int k, int n_ch, int p0, int p1,
                                   int two, const int32_t *acc, const int mode)
{
    if (mode == TW_RQ_TFLITE)
        tw_pulp_acc_end_tflite(s, k, n_ch, p0, p1, two, acc);
    else if (mode == TW_RQ_TFLITE_SINGLE)
        tw_pulp_acc_end_tflite_single(s, k, n_ch, p0, p1, two, acc);
    else if (mode == TW_RQ_SHIFT)
        tw_pulp_acc_end_shift(s, k, n_ch, p0, p1, two, acc);
    else if (mode == TW_PULP_RQ_SHIFT32)
        tw_pulp_acc_end_shift32(s, k, n_ch, p0, p1, two, acc);
    else if (mode == TW_PULP_RQ_TFLITE_RIGHT)
        tw_pulp_acc_end_tflite_right(s, k, n_ch, p0, p1, two, acc);
    else if (mode == TW_PULP_RQ_ONNX24)
        tw_pulp_acc_end_onnx24(s, k, n_ch, p0, p1, two, acc);
    else if (mode == TW_PULP_RQ_ONNX_FPU)
        tw_pulp_acc_end_onnx_fpu(s, k, n_ch, p0, p1, two, acc);
    else
        tw_pulp_acc_end_onnx(s, k, n_ch, p0, p1, two, acc);
}

/* The word of the r = len mod 4 values left after a dot product's word loop (p: one past its last
 * word; len >= 4), ending at the column's last value, the lanes the loop already counted (the
 * first 4 - r) zeroed: the leftover as one more pv.sdotsp.b against the weights' word ending
 * at their row's last value. */
TW_PULP_INLINE tw_v4_t tw_pulp_tail(const int8_t *p, int r)
{
    return tw_pulp_lw(p + r - 4) & (0xFFFFFFFFu << (8 * (4 - r)));
}

/* The 4x2 dot products: acc[2·j + pixel] += row j of w (w, w + len, ...) · column `pixel`
 * (x0, x1), read as `rows` runs of `seg` values (rows·seg = len), the column pointers stepping
 * `gap` bytes more between runs: one run for an im2col buffer or a 1x1 conv's pixel, the kernel
 * rows of an HWC window read in place otherwise (tw_pulp_conv.c). Per run the MatMul inner loop,
 * then the run's seg mod 4 leftover. */
TW_PULP_INLINE void tw_pulp_dot_4x2_rows(const int8_t *x0, const int8_t *x1, const int8_t *w,
                                         int len, int rows, int seg, int gap, int32_t *acc)
{
    const int8_t *w0 = w, *w1 = w0 + len, *w2 = w1 + len, *w3 = w2 + len;
    int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3];
    int32_t a20 = acc[4], a21 = acc[5], a30 = acc[6], a31 = acc[7];
    int n4 = seg >> 2, r = seg & 3, row, j;
#if TW_PULP_ASM
    if (r == 0 && n4 > 0) {             /* runs of whole words: rows x words, both hw loops */
        const int8_t *wp = w0;          /* one pointer walks the 4 rows (as tw_pulp_dot_4x1) */
        int32_t back = 4 - 3 * len;
        __asm__ volatile(
            TW_PULP_OUTER_LOOP(34)   /* a body of 17: the inner loop and the two column steps */
            TW_PULP_INNER_LOOP(28)   /* a body of 14 */
            TW_PULP_P_LW("t3", "%[x0]") TW_PULP_P_LW("t4", "%[x1]")          /* the columns' words */
            TW_PULP_P_LW_RR("t5", "%[wp]", "%[len]")                          /* rows 0 and 1 */
            TW_PULP_P_LW_RR("t6", "%[wp]", "%[len]")
            TW_PULP_SDOTP("%[a00]", "t3", "t5") TW_PULP_SDOTP("%[a01]", "t4", "t5")
            TW_PULP_P_LW_RR("t5", "%[wp]", "%[len]")                          /* row 2 */
            TW_PULP_SDOTP("%[a10]", "t3", "t6") TW_PULP_SDOTP("%[a11]", "t4", "t6")
            TW_PULP_P_LW_RR("t6", "%[wp]", "%[back]")          /* row 3, then back to row 0 */
            TW_PULP_SDOTP("%[a20]", "t3", "t5") TW_PULP_SDOTP("%[a21]", "t4", "t5")
            TW_PULP_SDOTP("%[a30]", "t3", "t6") TW_PULP_SDOTP("%[a31]", "t4", "t6")
            "add %[x0], %[x0], %[gap]\n\t"                                   /* the next run */
            "add %[x1], %[x1], %[gap]\n\t"
            TW_PULP_LOOP_END
            : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),
              [a20] "+r"(a20), [a21] "+r"(a21), [a30] "+r"(a30), [a31] "+r"(a31),
              [x0] "+r"(x0), [x1] "+r"(x1), [wp] "+r"(wp)
            : [n] "r"(n4), [rows] "r"(rows), [gap] "r"(gap), [len] "r"(len), [back] "r"(back)
            : "t3", "t4", "t5", "t6", "memory");
        rows = 0;
    }
#endif
    for (row = 0; row < rows; row++) {
#if TW_PULP_ASM
        if (n4 > 0) {
            __asm__ volatile(
                TW_PULP_LOOP(28)   /* a body of 14 */
                TW_PULP_P_LW("t3", "%[x0]") TW_PULP_P_LW("t4", "%[x1]")      /* the columns' words */
                TW_PULP_P_LW("t5", "%[w0]") TW_PULP_P_LW("t6", "%[w1]")      /* rows 0 and 1 */
                TW_PULP_SDOTP("%[a00]", "t3", "t5") TW_PULP_SDOTP("%[a01]", "t4", "t5")
                TW_PULP_P_LW("t5", "%[w2]")                                   /* row 2 */
                TW_PULP_SDOTP("%[a10]", "t3", "t6") TW_PULP_SDOTP("%[a11]", "t4", "t6")
                TW_PULP_P_LW("t6", "%[w3]")                                   /* row 3 */
                TW_PULP_SDOTP("%[a20]", "t3", "t5") TW_PULP_SDOTP("%[a21]", "t4", "t5")
                TW_PULP_SDOTP("%[a30]", "t3", "t6") TW_PULP_SDOTP("%[a31]", "t4", "t6")
                TW_PULP_LOOP_END
                : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),
                  [a20] "+r"(a20), [a21] "+r"(a21), [a30] "+r"(a30), [a31] "+r"(a31),
                  [x0] "+r"(x0), [x1] "+r"(x1), [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2),
                  [w3] "+r"(w3)
                : [n] "r"(n4)
                : "t3", "t4", "t5", "t6", "memory");   /* xa, xb, wa, wb (30 operands at most) */
        }
#else
        for (j = 0; j < n4; j++) {  /* the asm's steps, a row of weights x both columns a line */
            tw_v4_t xa = tw_pulp_lw_step(&x0, 4), xb = tw_pulp_lw_step(&x1, 4);
            tw_v4_t wa = tw_pulp_lw_step(&w0, 4), wb = tw_pulp_lw_step(&w1, 4);
            a00 = tw_pulp_sdotp4(a00, xa, wa); a01 = tw_pulp_sdotp4(a01, xb, wa);
            wa = tw_pulp_lw_step(&w2, 4);
            a10 = tw_pulp_sdotp4(a10, xa, wb); a11 = tw_pulp_sdotp4(a11, xb, wb);
            wb = tw_pulp_lw_step(&w3, 4);
            a20 = tw_pulp_sdotp4(a20, xa, wa); a21 = tw_pulp_sdotp4(a21, xb, wa);
            a30 = tw_pulp_sdotp4(a30, xa, wb); a31 = tw_pulp_sdotp4(a31, xb, wb);
        }
#endif
        if (r && n4 > 0) {                  /* the leftover as one masked word step */
            tw_v4_t xa = tw_pulp_tail(x0, r), xb = tw_pulp_tail(x1, r);
            tw_v4_t wa = tw_pulp_lw(w0 + r - 4), wb = tw_pulp_lw(w1 + r - 4);
            a00 = tw_pulp_sdotp4(a00, xa, wa); a01 = tw_pulp_sdotp4(a01, xb, wa);
            a10 = tw_pulp_sdotp4(a10, xa, wb); a11 = tw_pulp_sdotp4(a11, xb, wb);
            wa = tw_pulp_lw(w2 + r - 4);
            wb = tw_pulp_lw(w3 + r - 4);
            a20 = tw_pulp_sdotp4(a20, xa, wa); a21 = tw_pulp_sdotp4(a21, xb, wa);
            a30 = tw_pulp_sdotp4(a30, xa, wb); a31 = tw_pulp_sdotp4(a31, xb, wb);
        } else {
            for (j = 0; j < r; j++) {
                int32_t xa = x0[j], xb = x1[j];
                a00 += w0[j] * xa; a01 += w0[j] * xb;
                a10 += w1[j] * xa; a11 += w1[j] * xb;
                a20 += w2[j] * xa; a21 += w2[j] * xb;
                a30 += w3[j] * xa; a31 += w3[j] * xb;
            }
        }
        x0 += r + gap;
        x1 += r + gap;
        w0 += r;
        w1 += r;
        w2 += r;
        w3 += r;
    }
    acc[0] = a00; acc[1] = a01; acc[2] = a10; acc[3] = a11;
    acc[4] = a20; acc[5] = a21; acc[6] = a30; acc[7] = a31;
}

/* The 4x2 dot products over one run of len values (an im2col buffer, a pixel, a dense row). */
TW_PULP_INLINE void tw_pulp_dot_4x2(const int8_t *x0, const int8_t *x1, const int8_t *w, int len,
                                    int32_t *acc)
{
    tw_pulp_dot_4x2_rows(x0, x1, w, len, 1, len, 0, acc);
}

/* 4 channels (k..k+3) x 2 columns, any accumulation flags. */
TW_PULP_INLINE void tw_pulp_mm_4x2(const int8_t *x0, const int8_t *x1, int p0, int p1,
                                   const int8_t *w, int len, int k, const tw_pulp_sink_t *s,
                                   const int mode)
{
    int32_t acc[8];
    tw_pulp_acc_init(s, k, 4, p0, p1, 1, acc);
    tw_pulp_dot_4x2(x0, x1, w + (size_t)k * len, len, acc);
    tw_pulp_acc_end(s, k, 4, p0, p1, 1, acc, mode);
}

/* The 4x1 dot products: acc[2·j] += row j of w · column x0 (the layout of tw_pulp_dot_4x2's
 * first pixel), in `rows` runs of `seg` values as tw_pulp_dot_4x2_rows. One weight pointer walks
 * the four rows (three steps of len, then back to the next word of row 0: a register
 * post-increment per load). */
TW_PULP_INLINE void tw_pulp_dot_4x1_rows(const int8_t *x0, const int8_t *w, int len, int rows,
                                         int seg, int gap, int32_t *acc)
{
    const int8_t *wp = w;
    int32_t a0 = acc[0], a1 = acc[2], a2 = acc[4], a3 = acc[6], back = 4 - 3 * len;
    int n4 = seg >> 2, r = seg & 3, row, j;
#if TW_PULP_ASM
    if (r == 0 && n4 > 0) {             /* runs of whole words: rows x words, both hw loops */
        tw_v4_t xa, wa, wb, wc;
        __asm__ volatile(
            TW_PULP_OUTER_LOOP(22)   /* a body of 11: the inner loop and the column step */
            TW_PULP_INNER_LOOP(18)   /* a body of 9 */
            TW_PULP_P_LW("%[xa]", "%[x0]")
            TW_PULP_P_LW_RR("%[wa]", "%[wp]", "%[len]") TW_PULP_P_LW_RR("%[wb]", "%[wp]", "%[len]")
            TW_PULP_P_LW_RR("%[wc]", "%[wp]", "%[len]") TW_PULP_SDOTP("%[a0]", "%[xa]", "%[wa]")
            TW_PULP_P_LW_RR("%[wa]", "%[wp]", "%[back]")          /* row 3, then back to row 0 */
            TW_PULP_SDOTP("%[a1]", "%[xa]", "%[wb]") TW_PULP_SDOTP("%[a2]", "%[xa]", "%[wc]")
            TW_PULP_SDOTP("%[a3]", "%[xa]", "%[wa]")
            "add %[x0], %[x0], %[gap]\n\t"                           /* the next run */
            TW_PULP_LOOP_END
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x0] "+r"(x0),
              [wp] "+r"(wp), [xa] "=&r"(xa), [wa] "=&r"(wa), [wb] "=&r"(wb), [wc] "=&r"(wc)
            : [n] "r"(n4), [len] "r"(len), [back] "r"(back), [rows] "r"(rows), [gap] "r"(gap)
            : "memory");
        rows = 0;
    }
#endif
    for (row = 0; row < rows; row++) {
#if TW_PULP_ASM
        if (n4 > 0) {
            tw_v4_t xa, wa, wb, wc;
            __asm__ volatile(
                TW_PULP_LOOP(18)   /* a body of 9 */
                TW_PULP_P_LW("%[xa]", "%[x0]")
                TW_PULP_P_LW_RR("%[wa]", "%[wp]", "%[len]")
                TW_PULP_P_LW_RR("%[wb]", "%[wp]", "%[len]")
                TW_PULP_P_LW_RR("%[wc]", "%[wp]", "%[len]") TW_PULP_SDOTP("%[a0]", "%[xa]", "%[wa]")
                TW_PULP_P_LW_RR("%[wa]", "%[wp]", "%[back]")      /* row 3, then back to row 0 */
                TW_PULP_SDOTP("%[a1]", "%[xa]", "%[wb]") TW_PULP_SDOTP("%[a2]", "%[xa]", "%[wc]")
                TW_PULP_SDOTP("%[a3]", "%[xa]", "%[wa]")
                TW_PULP_LOOP_END
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x0] "+r"(x0),
                  [wp] "+r"(wp), [xa] "=&r"(xa), [wa] "=&r"(wa), [wb] "=&r"(wb), [wc] "=&r"(wc)
                : [n] "r"(n4), [len] "r"(len), [back] "r"(back)
                : "memory");
        }
#else
        for (j = 0; j < n4; j++) {
            tw_v4_t xa = tw_pulp_lw_step(&x0, 4), wa = tw_pulp_lw_step(&wp, len);
            tw_v4_t wb = tw_pulp_lw_step(&wp, len), wc = tw_pulp_lw_step(&wp, len);
            a0 = tw_pulp_sdotp4(a0, xa, wa);
            wa = tw_pulp_lw_step(&wp, back);
            a1 = tw_pulp_sdotp4(a1, xa, wb);
            a2 = tw_pulp_sdotp4(a2, xa, wc);
            a3 = tw_pulp_sdotp4(a3, xa, wa);
        }
#endif
        if (r && n4 > 0) {                  /* the leftover as one masked word step */
            tw_v4_t xa = tw_pulp_tail(x0, r);
            const int8_t *q = wp + r - 4;
            a0 = tw_pulp_sdotp4(a0, xa, tw_pulp_lw(q));
            a1 = tw_pulp_sdotp4(a1, xa, tw_pulp_lw(q + len));
            a2 = tw_pulp_sdotp4(a2, xa, tw_pulp_lw(q + 2 * len));
            a3 = tw_pulp_sdotp4(a3, xa, tw_pulp_lw(q + 3 * len));
        } else {
            for (j = 0; j < r; j++) {
                int32_t xa = x0[j];
                a0 += wp[j] * xa;
                a1 += wp[len + j] * xa;
                a2 += wp[2 * len + j] * xa;
                a3 += wp[3 * len + j] * xa;
            }
        }
        x0 += r + gap;
        wp += r;
    }
    acc[0] = a0; acc[2] = a1; acc[4] = a2; acc[6] = a3;
}

/* The 4x1 dot products over one run of len values. */
TW_PULP_INLINE void tw_pulp_dot_4x1(const int8_t *x0, const int8_t *w, int len, int32_t *acc)
{
    tw_pulp_dot_4x1_rows(x0, w, len, 1, len, 0, acc);
}

/* 4 channels (k..k+3) x 1 column, any accumulation flags. */
TW_PULP_INLINE void tw_pulp_mm_4x1(const int8_t *x0, int p0, const int8_t *w, int len, int k,
                                   const tw_pulp_sink_t *s, const int mode)
{
    int32_t acc[8];
    tw_pulp_acc_init(s, k, 4, p0, 0, 0, acc);
    tw_pulp_dot_4x1(x0, w + (size_t)k * len, len, acc);
    tw_pulp_finish(s, k, 4, p0, 0, 0, acc, mode);
}

/* 1 channel (k) x 2 columns. */
TW_PULP_INLINE void tw_pulp_mm_1x2(const int8_t *x0, const int8_t *x1, int p0, int p1,
                                   const int8_t *w, int len, int k, const tw_pulp_sink_t *s,
                                   const int mode)
{
    const int8_t *w0 = w + (size_t)k * len;
    int32_t acc[2], a0, a1;
    int n4 = len >> 2, j;
    tw_pulp_acc_init(s, k, 1, p0, p1, 1, acc);
    a0 = acc[0];
    a1 = acc[1];
#if TW_PULP_ASM
    if (n4 > 0) {
        tw_v4_t xa, xb, wa;
        __asm__ volatile(
            TW_PULP_LOOP(10)   /* a body of 5 */
            TW_PULP_P_LW("%[wa]", "%[w0]")
            TW_PULP_P_LW("%[xa]", "%[x0]") TW_PULP_P_LW("%[xb]", "%[x1]")
            TW_PULP_SDOTP("%[a0]", "%[xa]", "%[wa]") TW_PULP_SDOTP("%[a1]", "%[xb]", "%[wa]")
            TW_PULP_LOOP_END
            : [a0] "+r"(a0), [a1] "+r"(a1), [x0] "+r"(x0), [x1] "+r"(x1), [w0] "+r"(w0),
              [xa] "=&r"(xa), [xb] "=&r"(xb), [wa] "=&r"(wa)
            : [n] "r"(n4)
            : "memory");
    }
#else
    for (j = 0; j < n4; j++) {
        tw_v4_t wa = tw_pulp_lw_step(&w0, 4), xa = tw_pulp_lw_step(&x0, 4), xb = tw_pulp_lw_step(&x1, 4);
        a0 = tw_pulp_sdotp4(a0, xa, wa);
        a1 = tw_pulp_sdotp4(a1, xb, wa);
    }
#endif
    for (j = 0; j < (len & 3); j++) {
        a0 += w0[j] * x0[j];
        a1 += w0[j] * x1[j];
    }
    acc[0] = a0;
    acc[1] = a1;
    tw_pulp_finish(s, k, 1, p0, p1, 1, acc, mode);
}

/* 1 channel (k) x 1 column. */
TW_PULP_INLINE void tw_pulp_mm_1x1(const int8_t *x0, int p0, const int8_t *w, int len, int k,
                                   const tw_pulp_sink_t *s, const int mode)
{
    const int8_t *w0 = w + (size_t)k * len;
    int32_t acc[2], a0;
    int n4 = len >> 2, j;
    tw_pulp_acc_init(s, k, 1, p0, 0, 0, acc);
    a0 = acc[0];
#if TW_PULP_ASM
    if (n4 > 0) {
        tw_v4_t xa, wa;
        __asm__ volatile(
            TW_PULP_LOOP(6)   /* a body of 3 */
            TW_PULP_P_LW("%[wa]", "%[w0]") TW_PULP_P_LW("%[xa]", "%[x0]")
            TW_PULP_SDOTP("%[a0]", "%[xa]", "%[wa]")   /* one stall on xa */
            TW_PULP_LOOP_END
            : [a0] "+r"(a0), [x0] "+r"(x0), [w0] "+r"(w0), [xa] "=&r"(xa), [wa] "=&r"(wa)
            : [n] "r"(n4)
            : "memory");
    }
#else
    for (j = 0; j < n4; j++) {
        tw_v4_t wa = tw_pulp_lw_step(&w0, 4), xa = tw_pulp_lw_step(&x0, 4);
        a0 = tw_pulp_sdotp4(a0, xa, wa);
    }
#endif
    for (j = 0; j < (len & 3); j++)
        a0 += w0[j] * x0[j];
    acc[0] = a0;
    tw_pulp_finish(s, k, 1, p0, 0, 0, acc, mode);
}

/* One channel's outputs: acc0 (pixel 0, at o) and, when `two`, acc1 (at o + d1), requantized with
 * the channel's words (w[0..3], loaded once for both pixels). */
TW_PULP_INLINE void tw_pulp_rq_out(const int32_t *w, const tw_pulp_clip_t *clip, int32_t acc0,
                                   int32_t acc1, int8_t *o, ptrdiff_t d1, const int two,
                                   const int mode)
{
    tw_pulp_rqch_t c = tw_pulp_rq_channel(w, 1, 0);
    o[0] = tw_pulp_rq(&c, clip, acc0, mode);
    if (two)
        o[d1] = tw_pulp_rq(&c, clip, acc1, mode);
}

/* The common case of tw_pulp_mm_4x2 / _4x1 over `blocks` consecutive 4-channel blocks: the whole
 * reduction in this tile (TW_ACC_WHOLE), column x1 (output pixel o0 + d1) when `two`, the columns
 * read as `rows` runs of `seg` values `gap` bytes apart (tw_pulp_dot_4x2_rows). Every pointer
 * steps from block to block (weights by 4 rows, bias, requantization words and the outputs by 4
 * channels), the block's outputs requantized right after its MatMul. */
TW_PULP_INLINE void tw_pulp_mm_whole(const int8_t *x0, const int8_t *x1, const int8_t *w, int len,
                                     int rows, int seg, int gap, int blocks, const int32_t *bias,
                                     const int32_t *words, int8_t *o0, ptrdiff_t d1,
                                     tw_pulp_clip_t clip, const int two, const int mode)
{
    static const int32_t zeros[4] = {0, 0, 0, 0};
    int step = bias ? 4 : 0, b;
    if (!bias)
        bias = zeros;
    for (b = 0; b < blocks; b++) {
        /* acc[2·j + pixel]: every index a constant, so the compiler keeps them in registers */
        int32_t acc[8];
        acc[0] = acc[1] = bias[0];
        acc[2] = acc[3] = bias[1];
        acc[4] = acc[5] = bias[2];
        acc[6] = acc[7] = bias[3];
        if (two)
            tw_pulp_dot_4x2_rows(x0, x1, w, len, rows, seg, gap, acc);
        else
            tw_pulp_dot_4x1_rows(x0, w, len, rows, seg, gap, acc);
        tw_pulp_rq_out(words, &clip, acc[0], acc[1], o0, d1, two, mode);
        tw_pulp_rq_out(words + 4, &clip, acc[2], acc[3], o0 + 1, d1, two, mode);
        tw_pulp_rq_out(words + 8, &clip, acc[4], acc[5], o0 + 2, d1, two, mode);
        tw_pulp_rq_out(words + 12, &clip, acc[6], acc[7], o0 + 3, d1, two, mode);
        w += 4 * (size_t)len;
        bias += step;
        words += 16;
        o0 += 4;
    }
}

/* Output channels [k0, k1) (k1 - k0 a multiple of 4) of column x0 (pixel p0) and, when x1 is not
 * NULL, x1 (pixel p1), the whole reduction in this tile (s->mm.flags == TW_ACC_WHOLE), the
 * columns read as `rows` runs of `seg` values `gap` bytes apart. */
TW_PULP_INLINE void tw_pulp_mm_rows(const int8_t *x0, const int8_t *x1, int p0, int p1,
                                    const int8_t *w, int len, int rows, int seg, int gap, int k0,
                                    int k1, const tw_pulp_sink_t *s, const int mode)
{
    int blocks = (k1 - k0) >> 2;
    int8_t *o0 = s->mm.out + (size_t)p0 * s->mm.row + k0;
    const int32_t *bias = s->mm.bias ? s->mm.bias + k0 : NULL;
    ptrdiff_t d1 = (ptrdiff_t)(p1 - p0) * s->mm.row;
    if (x1)
        tw_pulp_mm_whole(x0, x1, w + (size_t)k0 * len, len, rows, seg, gap, blocks, bias,
                         s->words + 4 * k0, o0, d1, s->clip, 1, mode);
    else
        tw_pulp_mm_whole(x0, x1, w + (size_t)k0 * len, len, rows, seg, gap, blocks, bias,
                         s->words + 4 * k0, o0, d1, s->clip, 0, mode);
}

/* Output channels [k0, k1) of column x0 (pixel p0) and, when x1 is not NULL, x1 (pixel p1):
 * 4-channel blocks, then the leftover channels one at a time. */
TW_PULP_INLINE void tw_pulp_mm_cols(const int8_t *x0, const int8_t *x1, int p0, int p1,
                                    const int8_t *w, int len, int k0, int k1,
                                    const tw_pulp_sink_t *s, const int mode)
{
    int k = k0;
    if (s->mm.flags == TW_ACC_WHOLE && k1 - k0 >= 4) {
        int blocks = (k1 - k0) >> 2;
        tw_pulp_mm_rows(x0, x1, p0, p1, w, len, 1, len, 0, k0, k0 + 4 * blocks, s, mode);
        k += 4 * blocks;
    }
    if (x1) {
        for (; k + 4 <= k1; k += 4)
            tw_pulp_mm_4x2(x0, x1, p0, p1, w, len, k, s, mode);
        for (; k < k1; k++)
            tw_pulp_mm_1x2(x0, x1, p0, p1, w, len, k, s, mode);
    } else {
        for (; k + 4 <= k1; k += 4)
            tw_pulp_mm_4x1(x0, p0, w, len, k, s, mode);
        for (; k < k1; k++)
            tw_pulp_mm_1x1(x0, p0, w, len, k, s, mode);
    }
}

#endif /* TW_PULP_MATMUL_H */
