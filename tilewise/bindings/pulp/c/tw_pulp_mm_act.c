/*
 * tw_pulp_mm_act.c — MatMul of two int8 activations (contract in tw_pulp_mm_act.h).
 */
#include "tw_pulp_mm_act.h"

#include "tw_pulp_common.h"
#include "tw_pulp_matmul.h"
#include "tw_pulp_matmul_arm.h"

/* The 4x4 byte transpose: words w0..w3 are four rows of four columns; c[j] gets column j's
 * four bytes (row 0 in lane 0). Two stages of masks and shifts, 28 ALU operations. */
TW_PULP_INLINE void transpose4(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, uint32_t *c)
{
    uint32_t t0 = (w0 & 0x00FF00FFu) | ((w1 & 0x00FF00FFu) << 8);
    uint32_t t1 = ((w0 >> 8) & 0x00FF00FFu) | (w1 & 0xFF00FF00u);
    uint32_t t2 = (w2 & 0x00FF00FFu) | ((w3 & 0x00FF00FFu) << 8);
    uint32_t t3 = ((w2 >> 8) & 0x00FF00FFu) | (w3 & 0xFF00FF00u);
    c[0] = (t0 & 0xFFFFu) | (t2 << 16);
    c[1] = (t1 & 0xFFFFu) | (t3 << 16);
    c[2] = (t0 >> 16) | (t2 & 0xFFFF0000u);
    c[3] = (t1 >> 16) | (t3 & 0xFFFF0000u);
}

/* One word transpose: b's rows i..i+3 at columns j..j+3 (s, rows n apart) into bᵀ's rows j..j+3 at
 * values i..i+3 (d, rows k apart); the four words left in c. */
static inline void transpose_store4(const int8_t *s, int n, int8_t *d, int k, uint32_t c[4])
{
    transpose4(tw_pulp_lw(s), tw_pulp_lw(s + n), tw_pulp_lw(s + 2 * n), tw_pulp_lw(s + 3 * n), c);
    tw_pulp_sw(d, c[0]);
    tw_pulp_sw(d + k, c[1]);
    tw_pulp_sw(d + 2 * k, c[2]);
    tw_pulp_sw(d + 3 * k, c[3]);
}

#if TW_PULP_ASM
/* `count` word transposes of a column group (s: b's row i, columns j..j+3, rows n apart; d: bᵀ
 * row j at value i, rows k apart) in a hardware loop: 4 p.lw (one pointer down the rows), the
 * 28 operations of transpose4 (and two mask inversions), 4 p.sw (one pointer per bᵀ row) —
 * 38 instructions per 16 bytes. */
static void transpose_run(const int8_t *s, int8_t *d, int k, int n, int count)
{
    int8_t *d1 = d + k, *d2 = d + 2 * k, *d3 = d + 3 * k;
    const uint32_t lo8 = 0x00FF00FFu, lo16 = 0xFFFFu;
    const int n4 = count;
    if (count <= 0)
        return;
    __asm__ volatile(
        ".option push\n\t.option norvc\n\t.insn i 0x7B, 4, x0, %[n4], 76\n\t"
        TW_PULP_P_LW_RR("t0", "%[s]", "%[n]") TW_PULP_P_LW_RR("t1", "%[s]", "%[n]")
        TW_PULP_P_LW_RR("t2", "%[s]", "%[n]") TW_PULP_P_LW_RR("t3", "%[s]", "%[n]")
        "and t4, t0, %[lo8]\n\t"     /* p0 = (w0 & m) | (w1 & m) << 8 */
        "and t5, t1, %[lo8]\n\t"
        "slli t5, t5, 8\n\t"
        "or t4, t4, t5\n\t"
        "srli t0, t0, 8\n\t"         /* p1 = ((w0 >> 8) & m) | (w1 & ~m) */
        "and t0, t0, %[lo8]\n\t"
        "xori t5, %[lo8], -1\n\t"
        "and t1, t1, t5\n\t"
        "or t0, t0, t1\n\t"
        "and t1, t2, %[lo8]\n\t"     /* p2 = (w2 & m) | (w3 & m) << 8 */
        "and t6, t3, %[lo8]\n\t"
        "slli t6, t6, 8\n\t"
        "or t1, t1, t6\n\t"
        "srli t2, t2, 8\n\t"         /* p3 = ((w2 >> 8) & m) | (w3 & ~m) */
        "and t2, t2, %[lo8]\n\t"
        "and t3, t3, t5\n\t"
        "or t2, t2, t3\n\t"
        "and t3, t4, %[lo16]\n\t"    /* c0 = (p0 & 0xffff) | p2 << 16 */
        "slli t6, t1, 16\n\t"
        "or t3, t3, t6\n\t"
        TW_PULP_P_SW("t3", "%[d0]")
        "and t3, t0, %[lo16]\n\t"    /* c1 = (p1 & 0xffff) | p3 << 16 */
        "slli t6, t2, 16\n\t"
        "or t3, t3, t6\n\t"
        TW_PULP_P_SW("t3", "%[d1]")
        "srli t4, t4, 16\n\t"        /* c2 = (p0 >> 16) | (p2 & 0xffff0000) */
        "xori t6, %[lo16], -1\n\t"
        "and t1, t1, t6\n\t"
        "or t4, t4, t1\n\t"
        TW_PULP_P_SW("t4", "%[d2]")
        "srli t0, t0, 16\n\t"        /* c3 = (p1 >> 16) | (p3 & 0xffff0000) */
        "and t2, t2, t6\n\t"
        "or t0, t0, t2\n\t"
        TW_PULP_P_SW("t0", "%[d3]")
        ".option pop"
        : [s] "+r"(s), [d0] "+r"(d), [d1] "+r"(d1), [d2] "+r"(d2), [d3] "+r"(d3)
        : [n4] "r"(n4), [n] "r"(n), [lo8] "r"(lo8), [lo16] "r"(lo16)
        : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "memory");
}
#endif

void tw_pulp_mm_act_transpose(const int8_t *src, int k, int n, int32_t a_off, int8_t *bt,
                              int32_t *bias, int core, int cores)
{
    int c0, c1, j, i;
    if (((k | n) & 3) == 0 && (((uintptr_t)src | (uintptr_t)bt) & 3u) == 0) {
        /* groups of 4 columns x 4 rows as word transposes; the column sums by sdotp4 with ones */
        tw_pulp_share(n >> 2, core, cores, &c0, &c1);
        for (j = 4 * c0; j < 4 * c1; j += 4) {
            const int8_t *s = src + j;
            int8_t *d = bt + (size_t)j * k;
            uint32_t c[4];
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            if (!a_off) {
#if TW_PULP_ASM
                transpose_run(s, d, k, n, k >> 2);
#else
                for (i = 0; i < k; i += 4, s += 4 * (size_t)n, d += 4) {
                    transpose_store4(s, n, d, k, c);
                }
#endif
            } else {   /* a uint8: the column sums too, by sdotp4 with ones */
                for (i = 0; i < k; i += 4, s += 4 * (size_t)n, d += 4) {
                    transpose_store4(s, n, d, k, c);
                    s0 = tw_pulp_sdotp4(s0, c[0], 0x01010101u);
                    s1 = tw_pulp_sdotp4(s1, c[1], 0x01010101u);
                    s2 = tw_pulp_sdotp4(s2, c[2], 0x01010101u);
                    s3 = tw_pulp_sdotp4(s3, c[3], 0x01010101u);
                }
            }
            bias[j] = a_off * s0;
            bias[j + 1] = a_off * s1;
            bias[j + 2] = a_off * s2;
            bias[j + 3] = a_off * s3;
        }
        return;
    }
    tw_pulp_share(n, core, cores, &c0, &c1);
    for (j = c0; j < c1; j++) {
        const int8_t *s = src + j;
        int8_t *d = bt + (size_t)j * k;
        int32_t sum = 0;
        for (i = 0; i < k; i++) {
            int32_t v = *s;
            s += n;
            d[i] = (int8_t)v;
            sum += v;
        }
        bias[j] = a_off * sum;
    }
}

#if TW_PULP_ASM
/* One output of the block's epilogue: t1 = clamp((acc·m + a) >> c, lo, hi) (t3 = m, t4 = a,
 * t5 = c, t6 = lo, t0 = hi), stored at off(base). */
#define RQ_OUT(acc, off, base)                                                              \
    "mv t1, t4\n\t"                                                                         \
    ".insn r 0x33, 0, 0x21, t1, %[" acc "], t3\n\t"                                         \
    "sra t1, t1, t5\n\t"                                                                    \
    ".insn r 0x33, 6, 0x02, t1, t1, t6\n\t"                                                 \
    ".insn r 0x33, 4, 0x02, t1, t1, t0\n\t"                                                 \
    "sb t1, " #off "(" base ")\n\t"

/* The 4x2 block of columns c..c+3 and rows r, r + 1 over k = 4·n4 values, then its 8 outputs
 * requantized and stored, all in one asm statement (the accumulators never leave their
 * registers): per 4 reduction steps 6 p.lw + 8 pv.sdotsp.b (tw_pulp_dot_4x1_rows's one weight
 * pointer walking the four bᵀ rows, len apart, `back` to the next word of row 0), 32 MACs in
 * 14 cycles; then the uniform shift32 requantization's words from rq[0..5) (m, a, c, lo, hi)
 * and per output 6 instructions, row r at o, row r + 1 at o + n. zp = 0 (the caller's). */
TW_PULP_INLINE void block_4x2_rq(const int8_t *x0, const int8_t *x1, const int8_t *wp, int n4,
                                 int len, const int32_t *bias, const int32_t *rq, int8_t *o, int n)
{
    int32_t a00 = bias[0], a01 = a00, a10 = bias[1], a11 = a10;
    int32_t a20 = bias[2], a21 = a20, a30 = bias[3], a31 = a30;
    int32_t back = 4 - 3 * len;
    __asm__ volatile(
        TW_PULP_LOOP(28)
        TW_PULP_P_LW("t3", "%[x0]") TW_PULP_P_LW("t4", "%[x1]")
        TW_PULP_P_LW_RR("t5", "%[wp]", "%[len]") TW_PULP_P_LW_RR("t6", "%[wp]", "%[len]")
        TW_PULP_SDOTP("%[a00]", "t3", "t5") TW_PULP_SDOTP("%[a01]", "t4", "t5")
        TW_PULP_P_LW_RR("t5", "%[wp]", "%[len]")
        TW_PULP_SDOTP("%[a10]", "t3", "t6") TW_PULP_SDOTP("%[a11]", "t4", "t6")
        TW_PULP_P_LW_RR("t6", "%[wp]", "%[back]")
        TW_PULP_SDOTP("%[a20]", "t3", "t5") TW_PULP_SDOTP("%[a21]", "t4", "t5")
        TW_PULP_SDOTP("%[a30]", "t3", "t6") TW_PULP_SDOTP("%[a31]", "t4", "t6")
        TW_PULP_LOOP_END "\n\t"
        "lw t3, 0(%[rq])\n\tlw t4, 4(%[rq])\n\tlw t5, 8(%[rq])\n\t"
        "lw t6, 12(%[rq])\n\tlw t0, 16(%[rq])\n\tadd t2, %[o], %[row]\n\t"
        RQ_OUT("a00", 0, "%[o]") RQ_OUT("a10", 1, "%[o]")
        RQ_OUT("a20", 2, "%[o]") RQ_OUT("a30", 3, "%[o]")
        RQ_OUT("a01", 0, "t2") RQ_OUT("a11", 1, "t2")
        RQ_OUT("a21", 2, "t2") RQ_OUT("a31", 3, "t2")
        : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),
          [a20] "+r"(a20), [a21] "+r"(a21), [a30] "+r"(a30), [a31] "+r"(a31),
          [x0] "+r"(x0), [x1] "+r"(x1), [wp] "+r"(wp)
        : [n] "r"(n4), [len] "r"(len), [back] "r"(back), [rq] "r"(rq), [o] "r"(o), [row] "r"(n)
        : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "memory");
}

/* The 4x4 block (rows r..r+3, columns c..c+3) of the uniform path, its arguments in memory:
 * one asm statement holds the 16 accumulators in s0-s11, ra, a5, a6, t6 (every allocatable
 * register but the argument pointer: the compiler saves the callee-saved ones once per call
 * of the function), so per 4 reduction steps 8 p.lw and 16 pv.sdotsp.b — 64 MACs in 24 cycles,
 * against 28 for two 4x2 blocks — and the 16 outputs requantized right after the loop
 * (5 instructions each: p.mac, sra, p.clip to [-128, 127] — zero point 0 and the full int8
 * range only —, sb). One pointer walks each operand's four rows (three steps of k, then `back`
 * to the next word of row 0). */
typedef struct {
    const int8_t *x;       /* 0: a's row r */
    const int8_t *w;       /* 4: bᵀ row c */
    int32_t k, back, n4;   /* 8, 12, 16 */
    const int32_t *bias;   /* 20: corrections of columns c..c+3 */
    int32_t m, a, c, lo, hi;   /* 24..40: the requantization's words and clamp (p.clip's) */
    int8_t *o;             /* 44: output (r, c) */
    int32_t n;             /* 48: output row stride */
} blk4_t;

#define RQ4(acc, off, base)                                                                 \
    "mv t5, t1\n\t"                                                                         \
    ".insn r 0x33, 0, 0x21, t5, " acc ", t0\n\t"                                            \
    "sra t5, t5, t2\n\t"                                                                    \
    ".insn r 0x33, 1, 0x0A, t5, t5, x8\n\t"                                                 \
    "sb t5, " #off "(" base ")\n\t"

static void block_4x4_rq(const blk4_t *b)
{
    __asm__ volatile(
        "lw a0, 0(%[b])\n\tlw a1, 4(%[b])\n\tlw a2, 8(%[b])\n\tlw a3, 12(%[b])\n\t"
        "lw a4, 16(%[b])\n\tlw a5, 20(%[b])\n\t"
        "lw s0, 0(a5)\n\tlw s1, 4(a5)\n\tlw s2, 8(a5)\n\tlw s3, 12(a5)\n\t"
        "mv s4, s0\n\tmv s5, s1\n\tmv s6, s2\n\tmv s7, s3\n\t"
        "mv s8, s0\n\tmv s9, s1\n\tmv s10, s2\n\tmv s11, s3\n\t"
        "mv ra, s0\n\tmv a6, s2\n\tmv t6, s3\n\tmv a5, s1\n\t"
        ".option push\n\t.option norvc\n\t.insn i 0x7B, 4, x0, a4, 48\n\t"
        TW_PULP_P_LW_RR("t0", "a0", "a2") TW_PULP_P_LW_RR("t1", "a0", "a2")
        TW_PULP_P_LW_RR("t2", "a0", "a2") TW_PULP_P_LW_RR("t3", "a0", "a3")
        TW_PULP_P_LW_RR("t4", "a1", "a2") TW_PULP_P_LW_RR("t5", "a1", "a2")
        TW_PULP_SDOTP("s0", "t0", "t4") TW_PULP_SDOTP("s4", "t1", "t4")
        TW_PULP_SDOTP("s8", "t2", "t4") TW_PULP_SDOTP("ra", "t3", "t4")
        TW_PULP_P_LW_RR("t4", "a1", "a2")
        TW_PULP_SDOTP("s1", "t0", "t5") TW_PULP_SDOTP("s5", "t1", "t5")
        TW_PULP_SDOTP("s9", "t2", "t5") TW_PULP_SDOTP("a5", "t3", "t5")
        TW_PULP_P_LW_RR("t5", "a1", "a3")
        TW_PULP_SDOTP("s2", "t0", "t4") TW_PULP_SDOTP("s6", "t1", "t4")
        TW_PULP_SDOTP("s10", "t2", "t4") TW_PULP_SDOTP("a6", "t3", "t4")
        TW_PULP_SDOTP("s3", "t0", "t5") TW_PULP_SDOTP("s7", "t1", "t5")
        TW_PULP_SDOTP("s11", "t2", "t5") TW_PULP_SDOTP("t6", "t3", "t5")
        ".option pop\n\t"
        "lw t0, 24(%[b])\n\tlw t1, 28(%[b])\n\tlw t2, 32(%[b])\n\tlw t3, 36(%[b])\n\t"
        "lw t4, 40(%[b])\n\tlw a0, 44(%[b])\n\tlw a1, 48(%[b])\n\t"
        "add a2, a0, a1\n\tadd a3, a2, a1\n\tadd a4, a3, a1\n\t"
        RQ4("s0", 0, "a0") RQ4("s1", 1, "a0") RQ4("s2", 2, "a0") RQ4("s3", 3, "a0")
        RQ4("s4", 0, "a2") RQ4("s5", 1, "a2") RQ4("s6", 2, "a2") RQ4("s7", 3, "a2")
        RQ4("s8", 0, "a3") RQ4("s9", 1, "a3") RQ4("s10", 2, "a3") RQ4("s11", 3, "a3")
        RQ4("ra", 0, "a4") RQ4("a5", 1, "a4") RQ4("a6", 2, "a4") RQ4("t6", 3, "a4")
        :
        : [b] "r"(b)
        : "ra", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "s0", "s1", "s2", "s3", "s4", "s5",
          "s6", "s7", "s8", "s9", "s10", "s11", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
          "memory");
}

/* Row quads [q0, q1) of a tile by block_4x4_rq (k a multiple of 4, one requantization for
 * every column, zero point 0, clamp [-128, 127]), the n mod 4 last columns by the general
 * path. */
static void mm_uniform4(const tw_pulp_mm_act_t *t, const int8_t *at, int8_t *y, int q0, int q1,
                        const tw_pulp_sink_t *s)
{
    const int k = t->k, n = t->n, blocks = n >> 2;
    blk4_t b;
    int p, j;
    b.k = k;
    b.back = 4 - 3 * k;
    b.n4 = k >> 2;
    b.m = t->words[0];
    b.a = t->words[1];
    b.c = t->words[3];
    b.lo = t->qmin;
    b.hi = t->qmax;
    b.n = n;
    for (p = q0; p < q1; p++) {
        const int r = 4 * p;
        const int8_t *const r0 = at + (size_t)r * k;
        for (j = 0; j < blocks; j++) {
            b.x = r0;
            b.w = t->bt + (size_t)j * 4 * k;
            b.bias = t->bias + 4 * j;
            b.o = y + (size_t)r * n + 4 * j;
            block_4x4_rq(&b);
        }
        if (4 * blocks < n) {
            tw_pulp_mm_cols(r0, r0 + k, r, r + 1, t->bt, k, 4 * blocks, n, s, TW_PULP_RQ_SHIFT32);
            tw_pulp_mm_cols(r0 + 2 * k, r0 + 3 * k, r + 2, r + 3, t->bt, k, 4 * blocks, n, s,
                            TW_PULP_RQ_SHIFT32);
        }
    }
}

/* Rows [2·p0, 2·p1) of a tile of an even number of rows, k a multiple of 4, every column block
 * of 4, one shift32 requantization for every column with zero point 0 (t->uniform):
 * block_4x2_rq per block; the n mod 4 last columns by the general path. */
static void mm_uniform(const tw_pulp_mm_act_t *t, const int8_t *at, int8_t *y, int p0, int p1,
                       const tw_pulp_sink_t *s)
{
    const int k = t->k, n = t->n, blocks = n >> 2, n4 = k >> 2;
    int32_t rq[5];
    int p, b;
    rq[0] = t->words[0];
    rq[1] = t->words[1];
    rq[2] = t->words[3];
    rq[3] = t->qmin;
    rq[4] = t->qmax;
    for (p = p0; p < p1; p++) {
        const int r = 2 * p;
        const int8_t *const r0 = at + (size_t)r * k;
        const int8_t *w = t->bt;
        const int32_t *bias = t->bias;
        int8_t *o = y + (size_t)r * n;
        for (b = 0; b < blocks; b++, w += 4 * (size_t)k, bias += 4, o += 4)
            block_4x2_rq(r0, r0 + k, w, n4, k, bias, rq, o, n);
        if (4 * blocks < n)
            tw_pulp_mm_cols(r0, r0 + k, r, r + 1, t->bt, k, 4 * blocks, n, s, TW_PULP_RQ_SHIFT32);
    }
}
#endif

/* This core's items of a tile: (row pair, column-block group) in row-pair order, as the conv's
 * pixel pairs (tw_pulp_common.h). */
TW_PULP_INLINE void mm_tile(const tw_pulp_mm_act_t *t, const int8_t *at, void *y, int rows,
                            int core, int cores, const int mode)
{
    const int k = t->k, n = t->n;
    int pairs = (rows + 1) >> 1, blocks = (n + 3) >> 2;
    int groups = tw_pulp_groups(pairs, blocks, cores);
    int i0, i1, it, built = -1;
    tw_pulp_rq_t rq;
    tw_pulp_sink_t s;
    rq.words = t->words;
    rq.n = n;
    rq.zero_point = t->zero_point;
    rq.qmin = t->qmin;
    rq.qmax = t->qmax;
    if (t->words)
        s = tw_pulp_sink(t->bias, NULL, (int8_t *)y, n, TW_ACC_WHOLE, &rq);
    else   /* int32 sums: the MatMul's partial-sum path (first tile, not the last) */
        s = tw_pulp_sink(t->bias, (int32_t *)y, NULL, n, TW_ACC_FIRST, &rq);
    (void)built;
    tw_pulp_share(pairs * groups, core, cores, &i0, &i1);
#if TW_PULP_ASM
    if (mode == TW_PULP_RQ_SHIFT32 && t->uniform && t->words && t->zero_point == 0 &&
        groups == 1 && (k & 3) == 0 && k >= 4) {
        /* the uniform fast path: row quads over the cores when every core gets one (4x4
         * blocks), then the rows left as pairs (4x2 blocks; all the rows' pairs otherwise);
         * an odd last row by the general path */
        int quads = (rows >> 2) >= cores && t->qmin == -128 && t->qmax == 127 ? rows >> 2 : 0;
        int f0, f1, full;
        tw_pulp_share(quads, core, cores, &f0, &f1);
        mm_uniform4(t, at, (int8_t *)y, f0, f1, &s);
        tw_pulp_share(pairs - 2 * quads, core, cores, &i0, &i1);
        i0 += 2 * quads;
        i1 += 2 * quads;
        full = i1 < pairs || !(rows & 1) ? i1 : i1 - 1;
        mm_uniform(t, at, (int8_t *)y, i0, full, &s);
        i0 = full;
    }
#endif
    for (it = i0; it < i1; it++) {
        int p = groups == 1 ? it : it / groups, b0, b1, c0, c1, r = 2 * p;
        const int8_t *x0 = at + (size_t)r * k;
        const int8_t *x1 = r + 1 < rows ? x0 + k : NULL;
        tw_pulp_group_blocks(blocks, it - p * groups, groups, &b0, &b1);
        c0 = 4 * b0;
        c1 = 4 * b1 < n ? 4 * b1 : n;
#if TW_PULP_ARM
        if (t->words && k >= 4) {
            int32_t *col = t->col + (size_t)core * (size_t)tw_pulp_arm_col_words(k);
            int8_t *o0 = (int8_t *)y + (size_t)r * n;
            tw_pulp_clip_t clip = tw_pulp_clip(t->qmin, t->qmax, t->zero_point);
            if (built != p) {
                tw_pulp_arm_unpack_run(col, x0, k);
                if (x1)
                    tw_pulp_arm_unpack_run(col + 1, x1, k);
                built = p;
            }
            if (x1)
                tw_pulp_arm_mm_whole(col, t->bt, k, c0, c1, t->bias, t->words, o0, o0 + n, &clip,
                                     1, mode);
            else
                tw_pulp_arm_mm_whole(col, t->bt, k, c0, c1, t->bias, t->words, o0, o0, &clip, 0,
                                     mode);
            continue;
        }
#endif
        tw_pulp_mm_cols(x0, x1, r, r + 1, t->bt, k, c0, c1, &s, mode);
    }
}

void tw_pulp_mm_act_shift(const tw_pulp_mm_act_t *t, const int8_t *at, void *y, int rows,
                          int core, int cores)
{
    mm_tile(t, at, y, rows, core, cores, TW_RQ_SHIFT);
}

void tw_pulp_mm_act_shift32(const tw_pulp_mm_act_t *t, const int8_t *at, void *y, int rows,
                            int core, int cores)
{
    mm_tile(t, at, y, rows, core, cores, TW_PULP_RQ_SHIFT32);
}

void tw_pulp_mm_act_i32(const tw_pulp_mm_act_t *t, const int8_t *at, void *y, int rows,
                        int core, int cores)
{
    mm_tile(t, at, y, rows, core, cores, TW_PULP_RQ_SHIFT32);
}
