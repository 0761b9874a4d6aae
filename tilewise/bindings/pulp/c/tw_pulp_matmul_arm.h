/*
 * tw_pulp_matmul_arm.h — the MatMul of the pulp conv and 1x1 conv kernels on an Arm core with the
 * DSP extension (ARMv7E-M: Cortex-M4/M7; internal: tw_pulp_conv.c calls it when TW_PULP_ARM).
 *
 * Thumb-2 has 14 allocatable registers, too few for the 4x2 block of the RI5CY kernels (8
 * accumulators, 6 pointers and the unpacked operands spill on every step). Here the two columns
 * (two output pixels) are unpacked once into int16 halfword pairs — the `col` buffer, as
 * CMSIS-NN's im2col into q15 — and the MatMul is a 2x2 block, two output channels x two pixels:
 * per 4 reduction steps two ldrd of the columns' pairs, two ldr of the channels' weight words,
 * each unpacked by two sxtb16 (the even lanes and, rotated by 8, the odd ones), and eight smlad:
 * 16 instructions for 16 MACs, the 14 live values in registers.
 *
 * Column layout: step s of the reduction (values 4s..4s+3) is the four words col[4s..4s+3] =
 * (a0, a2), (b0, b2), (a1, a3), (b1, b3) — the even lanes of pixel a and pixel b, then their odd
 * lanes, as sxtb16 leaves them (a word holds two int16 halves): one ldrd brings both pixels'
 * operands of a weight word's even half, the other those of its odd half (tw_pulp_arm_mm2x2's
 * schedule needs the even half's pair first). Pixel a's words are col[4s], col[4s + 2], pixel
 * b's col[4s + 1], col[4s + 3]: a pixel is unpacked at its slot (col, col + 1) with stride 2. A
 * reduction of len values takes ceil(len / 4) steps; the last one of a
 * len not a multiple of 4 holds the r = len mod 4 last values in lanes 0..r-1 and zeros above
 * (the word ending at the last value, shifted right), and the weights' last step is read the same
 * way, so no byte past a row is read. len >= 4 (the callers fall back otherwise).
 */
#ifndef TW_PULP_MATMUL_ARM_H
#define TW_PULP_MATMUL_ARM_H

#include <stddef.h>
#include <stdint.h>

#include "tw_pulp_isa.h"
#include "tw_pulp_requant.h"

#if TW_PULP_ARM

/* Words per column buffer of a reduction of len values (both pixels). */
TW_PULP_INLINE int tw_pulp_arm_col_words(int len)
{
    return 4 * ((len + 3) >> 2);
}

/* The word of the r (1..3) last values of a run ending at end (exclusive) in lanes 0..r-1. */
TW_PULP_INLINE uint32_t tw_pulp_arm_tail(const int8_t *end, int r)
{
    return tw_pulp_lw(end - 4) >> (8 * (4 - r));
}

/* One step's word v of a pixel into its pairs at dst (the pixel's slot of the step): the even
 * lanes at dst[0], the odd ones at dst[half] — half = 2 in the column layout above (two
 * pixels), 4 in the widened conv's (four pixels, tw_pulp_arm_mm2x4w). */
TW_PULP_INLINE void tw_pulp_arm_pairs_at(int32_t *dst, uint32_t v, const int half)
{
    dst[0] = (int32_t)__sxtb16(v);
    dst[half] = (int32_t)tw_pulp_sxtb16_ror8(v);
}

TW_PULP_INLINE void tw_pulp_arm_pairs(int32_t *dst, uint32_t v)
{
    tw_pulp_arm_pairs_at(dst, v, 2);
}

/* n (>= 4) contiguous values from src into the pixel's pairs at dst (its slot; 2·half words a
 * step), the last partial step as the tail word. Returns dst after the run's steps. The
 * four-pixel layout's (half = 4, the widened conv's columns) two steps a loop iteration: its
 * two loads, four sxtb16 and four stores under one pointer update and branch. */
TW_PULP_INLINE int32_t *tw_pulp_arm_unpack_at(int32_t *dst, const int8_t *src, int n,
                                              const int half)
{
    int i = 0, n4 = n >> 2, r = n & 3;
    if (half == 4)
        for (; i + 2 <= n4; i += 2, src += 8, dst += 4 * half) {
            uint32_t v0 = tw_pulp_lw(src), v1 = tw_pulp_lw(src + 4);
            tw_pulp_arm_pairs_at(dst, v0, half);
            tw_pulp_arm_pairs_at(dst + 2 * half, v1, half);
        }
    for (; i < n4; i++, src += 4, dst += 2 * half)
        tw_pulp_arm_pairs_at(dst, tw_pulp_lw(src), half);
    if (r) {
        tw_pulp_arm_pairs_at(dst, tw_pulp_arm_tail(src + r, r), half);
        dst += 2 * half;
    }
    return dst;
}

/* tw_pulp_arm_unpack_at in the column layout above (two pixels, 4 words a step). */
TW_PULP_INLINE int32_t *tw_pulp_arm_unpack_run(int32_t *dst, const int8_t *src, int n)
{
    return tw_pulp_arm_unpack_at(dst, src, n, 2);
}

/* One step of one weight row (its word w) against both columns' pairs col[0..4): *a (pixel a)
 * and *b (pixel b) += 4 products each. */
TW_PULP_INLINE void tw_pulp_arm_step(int32_t *a, int32_t *b, const int32_t *col, uint32_t w)
{
    uint32_t lo = __sxtb16(w), hi = tw_pulp_sxtb16_ror8(w);
    *a = __smlad(col[2], hi, __smlad(col[0], lo, *a));
    *b = __smlad(col[3], hi, __smlad(col[1], lo, *b));
}

/* One step of the 2x2 block, ordered for the Cortex-M7's dual issue as the project's timing model
 * prices it (platforms/m7_timing.py's docstring: LLVM's Cortex-M7 scheduling model, validated on
 * C. Biffle's and J. Ahrens's dual-issue measurements). What the order follows: one MAC, so one
 * smlad a cycle, the other slot taken by an ldr, sxtb16, cmp or the branch; ldrd issues alone;
 * a load's result is ready two cycles on, an sxtb16's one; an ldr overwriting a register the
 * smlad before it reads is not paired with it. So row k + 1's word of the step is already in v
 * (loaded by the previous step, TW_PULP_ARM_NEXT, or before the loop), the first ldrd brings
 * both pixels' even-half pairs (xa0, xb0: the column layout above) and the second, the odd
 * halves', comes after the first smlad; row k's word (t) is loaded once row k + 1's even half
 * is used and unpacked into v and t in place; the compare and the next step's load sit in the
 * MAC's shadow. llvm-mca (-mcpu=cortex-m7) prices the loop body at 12 cycles a step, the
 * unscheduled order (each load feeding the next sxtb16, the sxtb16 the next smlad) at 20. */
#define TW_PULP_ARM_STEP(NEXT)                                                                  \
    "ldrd %[xa0], %[xb0], [%[col]], #16\n\t"                                                    \
    "sxtb16 %[t], %[v]\n\t"                           /* row k + 1, even lanes */               \
    "smlad %[b1], %[xb0], %[t], %[b1]\n\t"                                                      \
    "sxtb16 %[v], %[v], ror #8\n\t"                   /* row k + 1, odd lanes */                \
    "smlad %[a1], %[xa0], %[t], %[a1]\n\t"                                                      \
    "ldrd %[xa1], %[xb1], [%[col], #-8]\n\t"                                                    \
    "ldr %[t], [%[w]], #4\n\t"                        /* row k's word */                        \
    "smlad %[b1], %[xb1], %[v], %[b1]\n\t"                                                      \
    "smlad %[a1], %[xa1], %[v], %[a1]\n\t"                                                      \
    "sxtb16 %[v], %[t]\n\t"                           /* row k, even lanes */                   \
    "sxtb16 %[t], %[t], ror #8\n\t"                   /* row k, odd lanes */                    \
    "smlad %[a0], %[xa0], %[v], %[a0]\n\t"                                                      \
    NEXT                                                                                        \
    "smlad %[a0], %[xa1], %[t], %[a0]\n\t"                                                      \
    "smlad %[b0], %[xb1], %[t], %[b0]\n\t"
/* the loop's: compare col with the last step's, the next step's row k + 1 word into v */
#define TW_PULP_ARM_NEXT                                                                        \
    "cmp %[col], %[last]\n\t"                                                                   \
    "smlad %[b0], %[xb0], %[v], %[b0]\n\t"                                                      \
    "ldr %[v], [%[w], %[len]]\n\t"
/* the last step's: no compare, no load past the step */
#define TW_PULP_ARM_LAST "smlad %[b0], %[xb0], %[v], %[b0]\n\t"

/* The 2x2 block: acc[0], acc[1] (pixel a, channels k and k + 1) and acc[2], acc[3] (pixel b) +=
 * the columns col (steps = ceil(len / 4)) times weight rows w and w + len. */
TW_PULP_INLINE void tw_pulp_arm_mm2x2(const int32_t *col, const int8_t *w, int len, int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], b0 = acc[2], b1 = acc[3];
    const int32_t *last = col + 4 * ((len >> 2) - 1);   /* len >= 4: one step at least */
    int r = len & 3;
    /* row k + 1's first word into v; the loop over all steps but the last (none when one step:
     * col == last), each step's last instructions loading the next one's row k + 1 word; the
     * last step on its own (TW_PULP_ARM_LAST), so no word past the rows' whole steps is read.
     * Per step 18 instructions for 16 MACs as the unscheduled loop (the first load, compare and
     * branch instead of the loop's last), the 14 live values (4 accumulators, 4 column pairs,
     * the word and its unpacked half, col, w, len, last) in Thumb-2's 14 registers */
    int32_t xa0, xa1, xb0, xb1;
    uint32_t v, t;
    __asm__ volatile(
        "ldr %[v], [%[w], %[len]]\n\t"
        "cmp %[col], %[last]\n\t"
        "beq 2f\n"
        "1:\n\t"
        TW_PULP_ARM_STEP(TW_PULP_ARM_NEXT)
        "bne 1b\n"
        "2:\n\t"
        TW_PULP_ARM_STEP(TW_PULP_ARM_LAST)
        : [a0] "+r"(a0), [a1] "+r"(a1), [b0] "+r"(b0), [b1] "+r"(b1), [col] "+r"(col),
          [w] "+r"(w), [xa0] "=&r"(xa0), [xa1] "=&r"(xa1), [xb0] "=&r"(xb0),
          [xb1] "=&r"(xb1), [v] "=&r"(v), [t] "=&r"(t)
        : [len] "r"(len), [last] "r"(last)
        : "cc", "memory");
    if (r) {
        tw_pulp_arm_step(&a0, &b0, col, tw_pulp_arm_tail(w + r, r));
        tw_pulp_arm_step(&a1, &b1, col, tw_pulp_arm_tail(w + len + r, r));
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = b0;
    acc[3] = b1;
}
#undef TW_PULP_ARM_STEP
#undef TW_PULP_ARM_NEXT
#undef TW_PULP_ARM_LAST

/* The 1x2 block of a last odd channel: acc[0] (pixel a), acc[2] (pixel b) += the columns times
 * weight row w. */
TW_PULP_INLINE void tw_pulp_arm_mm1x2(const int32_t *col, const int8_t *w, int len, int32_t *acc)
{
    int32_t a0 = acc[0], b0 = acc[2];
    int i, n4 = len >> 2, r = len & 3;
    for (i = 0; i < n4; i++, col += 4, w += 4)
        tw_pulp_arm_step(&a0, &b0, col, tw_pulp_lw(w));
    if (r)
        tw_pulp_arm_step(&a0, &b0, col, tw_pulp_arm_tail(w + r, r));
    acc[0] = a0;
    acc[2] = b0;
}

/* Output channels [k0, k1) of pixels a (outputs at oa) and, when `two`, b (at ob) from the
 * columns col, the whole reduction (len values) in this tile: 2x2 blocks from the bias, the four
 * outputs of a block requantized together (tw_pulp_rq4c), then the odd last channel. */
TW_PULP_INLINE void tw_pulp_arm_mm_whole(const int32_t *col, const int8_t *w, int len, int k0,
                                         int k1, const int32_t *bias, const int32_t *words,
                                         int8_t *oa, int8_t *ob, const tw_pulp_clip_t *clip,
                                         const int two, const int mode)
{
    int k;
    for (k = k0; k + 2 <= k1; k += 2) {
        int32_t acc[4];
        tw_pulp_rqch_t c0 = tw_pulp_rq_channel(words, 0, k);
        tw_pulp_rqch_t c1 = tw_pulp_rq_channel(words, 0, k + 1);
        uint32_t v;
        acc[0] = acc[2] = bias ? bias[k] : 0;
        acc[1] = acc[3] = bias ? bias[k + 1] : 0;
        tw_pulp_arm_mm2x2(col, w + (size_t)k * len, len, acc);
        v = tw_pulp_rq4c(&c0, &c1, &c0, &c1, clip, acc[0], acc[1], acc[2], acc[3], mode);
        oa[k] = (int8_t)v;
        oa[k + 1] = (int8_t)(v >> 8);
        if (two) {
            ob[k] = (int8_t)(v >> 16);
            ob[k + 1] = (int8_t)(v >> 24);
        }
    }
    if (k < k1) {
        int32_t acc[4];
        tw_pulp_rqch_t c0 = tw_pulp_rq_channel(words, 0, k);
        acc[0] = acc[2] = bias ? bias[k] : 0;
        tw_pulp_arm_mm1x2(col, w + (size_t)k * len, len, acc);
        oa[k] = tw_pulp_rq(&c0, clip, acc[0], mode);
        if (two)
            ob[k] = tw_pulp_rq(&c0, clip, acc[2], mode);
    }
}

/*
 * The widened conv's MatMul (tw_pulp_conv.c's *_s8w16 kernels; weights widened to int16 at
 * codegen, bindings/pulp/widened.py `conv_layout`): a 2x4 block, two output channels x four
 * pixels, on int16 operands only, so the loop is loads and smlad — no sxtb16.
 *
 * Column layout (four pixels): step s (values 4s..4s+3) is the 8 words col[8s..8s+8) = the even
 * lanes (v0, v2) of pixels 0..3, then their odd lanes (v1, v3): pixel j's slot is col + j,
 * unpacked with tw_pulp_arm_unpack_at(.., half = 4). Weights of a block of two channels (k,
 * k + 1): step s is the 4 words (k even, k + 1 even, k odd, k + 1 odd) halves in the same order.
 * The reduction is whole steps (the binding takes kernel rows of whole steps).
 *
 * Order, as the project's timing model prices it (platforms/m7_timing.py: llvm-mca's
 * Cortex-M7 model): an ldr without writeback pairs with the smlad after it (an ldrd issues alone,
 * a post-indexed ldr does not pair), so every load is an ldr at an offset, paired: per half step
 * eight smlad, the four column words (two registers alternating, each loaded a pair ahead of its
 * use) and the two weight words (channel k's loaded by the previous half, after its last use;
 * channel k + 1's first) — 14 instructions, 8 cycles for 16 MACs. The loop does four steps (the
 * pointers' adds in slots of their own pair, the compare against the end kept on the stack: no
 * register is free, 8 accumulators, 2 weight words, 2 column words, col, w): 117 instructions and
 * 69 cycles (llvm-mca -mcpu=cortex-m7) for 128 MACs, against the 2x2 int8 loop's 144 and 96;
 * the steps left (1-3) one at a time (33 instructions a step). Each step's last loads are the
 * next one's first column and weight words, so the block reads one word past its columns (the
 * scratch has it) and one past its weights (the next block's, or flash past the layer's).
 */
/* One half step: column words at byte offsets C4, C8, C12 (pixels 1..3; pixel 0's in x), the
 * next half's pixel 0 word at C16; channel k + 1's weight word at WQ, the next half's channel k
 * word at WP (channel k's in p); E1, E2: instructions in the two unpaired smlad's slots */
#define TW_PULP_W16_HALF(C4, C8, C12, C16, WQ, WP, E1, E2)                                     \
    "ldr %[q], [%[w], #" #WQ "]\n\t"                                                            \
    "smlad %[a0], %[x], %[p], %[a0]\n\t"                                                       \
    "ldr %[y], [%[col], #" #C4 "]\n\t"                                                          \
    "smlad %[b0], %[x], %[q], %[b0]\n\t"                                                       \
    "ldr %[x], [%[col], #" #C8 "]\n\t"                                                          \
    "smlad %[a1], %[y], %[p], %[a1]\n\t"                                                       \
    E1                                                                                          \
    "smlad %[b1], %[y], %[q], %[b1]\n\t"                                                       \
    "ldr %[y], [%[col], #" #C12 "]\n\t"                                                         \
    "smlad %[a2], %[x], %[p], %[a2]\n\t"                                                       \
    E2                                                                                          \
    "smlad %[b2], %[x], %[q], %[b2]\n\t"                                                       \
    "ldr %[x], [%[col], #" #C16 "]\n\t"                                                         \
    "smlad %[a3], %[y], %[p], %[a3]\n\t"                                                       \
    "ldr %[p], [%[w], #" #WP "]\n\t"                                                            \
    "smlad %[b3], %[y], %[q], %[b3]\n\t"
/* half h of a 4-step iteration (no pointer update in it) */
#define TW_PULP_W16_H(C, W) TW_PULP_W16_HALF(C + 4, C + 8, C + 12, C + 16, W + 4, W + 8, "", "")

/* The 2x4 block: acc[0..4) (channel k, pixels 0..3) and acc[4..8) (channel k + 1) += the
 * columns col (steps >= 1 whole steps) times the block's weights w. Returns w past the block. */
TW_PULP_INLINE const int32_t *tw_pulp_arm_mm2x4w(const int32_t *col, const int32_t *w, int steps,
                                                 int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    int32_t b0 = acc[4], b1 = acc[5], b2 = acc[6], b3 = acc[7];
    /* x and y enter as the ends of the 4-step loop's and of all steps' columns, kept on the
     * stack (sp 8-byte aligned, restored in the statement) */
    uint32_t x = (uint32_t)(col + 32 * (steps >> 2)), y = (uint32_t)(col + 8 * steps), p, q;
    const int32_t *wend = w + 4 * steps;
    __asm__ volatile(
        "strd %[x], %[y], [sp, #-8]!\n\t"
        "cmp %[col], %[x]\n\t"
        "ldr %[x], [%[col]]\n\t"
        "ldr %[p], [%[w]]\n\t"
        "beq 2f\n"
        "1:\n\t"
        TW_PULP_W16_H(0, 0) TW_PULP_W16_H(16, 8) TW_PULP_W16_H(32, 16) TW_PULP_W16_H(48, 24)
        TW_PULP_W16_H(64, 32) TW_PULP_W16_H(80, 40)
        TW_PULP_W16_HALF(100, 104, 108, -16, 52, -8, "adds %[w], %[w], #64\n\t",
                         "adds %[col], %[col], #128\n\t")
        TW_PULP_W16_HALF(-12, -8, -4, 0, -4, 0, "", "")
        "ldr %[q], [sp]\n\t"
        "cmp %[col], %[q]\n\t"
        "bne 1b\n"
        "2:\n\t"
        "ldr %[q], [sp, #4]\n\t"
        "cmp %[col], %[q]\n\t"
        "beq 4f\n"
        "3:\n\t"
        TW_PULP_W16_H(0, 0)
        TW_PULP_W16_HALF(20, 24, 28, 0, 12, 0, "adds %[w], %[w], #16\n\t",
                         "adds %[col], %[col], #32\n\t")
        "ldr %[q], [sp, #4]\n\t"
        "cmp %[col], %[q]\n\t"
        "bne 3b\n"
        "4:\n\t"
        "add sp, sp, #8\n\t"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [b0] "+r"(b0),
          [b1] "+r"(b1), [b2] "+r"(b2), [b3] "+r"(b3), [col] "+r"(col), [w] "+r"(w),
          [x] "+r"(x), [y] "+r"(y), [p] "=&r"(p), [q] "=&r"(q)
        :
        : "cc", "memory");
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    acc[4] = b0;
    acc[5] = b1;
    acc[6] = b2;
    acc[7] = b3;
    return wend;
}
#undef TW_PULP_W16_H
#undef TW_PULP_W16_HALF

#endif /* TW_PULP_ARM */
#endif /* TW_PULP_MATMUL_ARM_H */
