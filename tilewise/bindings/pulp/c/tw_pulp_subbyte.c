/*
 * tw_pulp_subbyte.c — sub-byte conv2d (im2col with unpack + 4x2 MatMul unpacking the weights +
 * QntPack) of one HWC tile on the RI5CY cluster (contract, layouts and lane order in
 * tw_pulp_subbyte.h; seed 004 §3.3.1). XpulpV2 instructions on RISC-V, the same arithmetic in
 * C elsewhere (the host build validates the same code path):
 *   pv.sdotsp.b   rd += sum of 4 s8 x s8 lane products (tw_pulp_sdotp4)
 *   pv.sra.sci.b  lane-wise arithmetic shift right by an immediate .insn r 0x57, 7, 0x24, rd, rs1,
 *                 x<imm/2> (funct6 010010, imm[0] in bit 25, imm[5:1] in the rs2 field; GVSoC's
 *                 isa_pulpv2.py)
 */
#include "tw_pulp_subbyte.h"

#include "tw_pulp_common.h"

/* The lanes of v arithmetically shifted right by n (pv.sra.sci.b; n = 4 or 6 below). */
TW_PULP_INLINE tw_v4_t sra_lanes_c(tw_v4_t v, int n)
{
    return tw_pulp_pack4(tw_pulp_asr(tw_pulp_lane(v, 0), n), tw_pulp_asr(tw_pulp_lane(v, 1), n),
                         tw_pulp_asr(tw_pulp_lane(v, 2), n), tw_pulp_asr(tw_pulp_lane(v, 3), n));
}

TW_PULP_INLINE tw_v4_t sra4_lanes(tw_v4_t v)
{
#if TW_PULP_ASM
    tw_v4_t r;
    __asm__(".insn r 0x57, 7, 0x24, %0, %1, x2" : "=r"(r) : "r"(v));
    return r;
#else
    return sra_lanes_c(v, 4);
#endif
}

TW_PULP_INLINE tw_v4_t sra6_lanes(tw_v4_t v)
{
#if TW_PULP_ASM
    tw_v4_t r;
    __asm__(".insn r 0x57, 7, 0x24, %0, %1, x3" : "=r"(r) : "r"(v));
    return r;
#else
    return sra_lanes_c(v, 6);
#endif
}

/* Unpacked word j of a packed word of signed b-bit weights (tw_pulp_subbyte.h LANES): bits
 * [j·b, (j+1)·b) of each byte moved to the top, then shifted down with the sign. */
TW_PULP_INLINE tw_v4_t unpack_w(tw_v4_t v, const int j, const int wb)
{
    if (wb == 8)
        return v;
    if (wb == 4)
        return sra4_lanes(j == 0 ? v << 4 : v);
    return sra6_lanes(v << (6 - 2 * j));
}

/* The n packed unsigned x_bits values at src (whole words) as u8 lanes at dst (LANES order). */
static void unpack_x(uint8_t *dst, const uint8_t *src, int n, int xb)
{
    const int8_t *s = (const int8_t *)(const void *)src;
    int8_t *d = (int8_t *)(void *)dst;
    int i, words = n * xb / 32;
    if (xb == 8) {
        tw_pulp_copy(d, s, n);
        return;
    }
    for (i = 0; i < words; i++) {
        tw_v4_t v = tw_pulp_lw_step(&s, 4);
        if (xb == 4) {
            tw_pulp_sw(d, v & 0x0F0F0F0Fu);
            tw_pulp_sw(d + 4, (v >> 4) & 0x0F0F0F0Fu);
            d += 8;
        } else {
            tw_pulp_sw(d, v & 0x03030303u);
            tw_pulp_sw(d + 4, (v >> 2) & 0x03030303u);
            tw_pulp_sw(d + 8, (v >> 4) & 0x03030303u);
            tw_pulp_sw(d + 12, (v >> 6) & 0x03030303u);
            d += 16;
        }
    }
}

/* The receptive field of output pixel p, unpacked to K u8 lanes at col: tap by tap, an input
 * pixel's in_c values (unpack_x) or in_c pad values. */
static void im2col_sb(const tw_pulp_conv_sb_args_t *a, int p, uint8_t *col)
{
    const tw_window_t *g = &a->win;
    int oy = p / g->out_w, ox = p - oy * g->out_w, fy, fx;
    int c = a->in_c, pixel_bytes = c * a->x_bits / 8;
    for (fy = 0; fy < g->k_h; fy++) {
        int iy = oy * g->s_h - g->pad_t + fy;
        for (fx = 0; fx < g->k_w; fx++, col += c) {
            int ix = ox * g->s_w - g->pad_l + fx;
            if (iy < 0 || iy >= g->in_h || ix < 0 || ix >= g->in_w)
                tw_pulp_fill((int8_t *)(void *)col, (int8_t)a->pad_value, c);
            else
                unpack_x(col, a->in + ((size_t)iy * g->in_w + (size_t)ix) * pixel_bytes, c,
                         a->x_bits);
        }
    }
}

/* Output element `idx` of the packed output (y_bits each) set to v (in [0, 2^y_bits - 1]). */
static void put_packed(uint8_t *out, size_t idx, uint32_t v, int yb)
{
    size_t bit = idx * (size_t)yb;
    uint32_t mask = ((1u << yb) - 1u) << (bit & 7u);
    uint8_t *o = out + (bit >> 3);
    *o = (uint8_t)((*o & ~mask) | ((v << (bit & 7u)) & mask));
}

/* The four outputs of word v (lane j: channel k + j, in [0, 2^y_bits - 1]) packed at o. */
TW_PULP_INLINE void put4(uint8_t *o, tw_v4_t v, int yb)
{
    if (yb == 8) {
        tw_pulp_sw((int8_t *)(void *)o, v);
    } else if (yb == 4) {
        o[0] = (uint8_t)((v & 0x0Fu) | ((v >> 4) & 0xF0u));
        o[1] = (uint8_t)(((v >> 16) & 0x0Fu) | ((v >> 20) & 0xF0u));
    } else {
        o[0] = (uint8_t)((v & 0x03u) | ((v >> 6) & 0x0Cu) | ((v >> 12) & 0x30u) |
                         ((v >> 18) & 0xC0u));
    }
}

/* Requantized output of acc for channel k (tile-local) as an unsigned value. */
TW_PULP_INLINE uint32_t rq_out(const tw_pulp_rq_t *rq, const tw_pulp_clip_t *clip, int k,
                               int32_t acc, const int mode)
{
    tw_pulp_rqch_t c = tw_pulp_rq_channel(rq->words, rq->n, k);
    return (uint8_t)tw_pulp_rq(&c, clip, acc, mode);
}

/* One MatMul step of channel rows at w (one packed word each): for each unpacked word j, the two
 * columns' words and the 8/wb sdotps per channel (STEP_J), accumulators a<ch><px>. */
#define SB_STEP_J(j)                                                                        \
    do {                                                                                    \
        tw_v4_t x0 = tw_pulp_lw_step(&c0, 4), x1 = tw_pulp_lw_step(&c1, 4), u;              \
        u = unpack_w(v0, j, wb);                                                          \
        a00 = tw_pulp_sdotp4(a00, x0, u);                                                  \
        a01 = tw_pulp_sdotp4(a01, x1, u);                                                  \
        u = unpack_w(v1, j, wb);                                                          \
        a10 = tw_pulp_sdotp4(a10, x0, u);                                                  \
        a11 = tw_pulp_sdotp4(a11, x1, u);                                                  \
        u = unpack_w(v2, j, wb);                                                          \
        a20 = tw_pulp_sdotp4(a20, x0, u);                                                  \
        a21 = tw_pulp_sdotp4(a21, x1, u);                                                  \
        u = unpack_w(v3, j, wb);                                                          \
        a30 = tw_pulp_sdotp4(a30, x0, u);                                                  \
        a31 = tw_pulp_sdotp4(a31, x1, u);                                                  \
    } while (0)

/* The hardware-loop bodies of block4 on RISC-V (t0, t1 the columns' words, t3..t6 the four
 * rows' packed weight words, t2 an unpacked weight word; no loaded register is read by the next
 * instruction, so no load-use stall): */
#define SB_DOT(acc, x, w) TW_PULP_SDOTP(acc, x, w)                            /* pv.sdotsp.b */
#define SB_SRA4(rd, rs) ".insn r 0x57, 7, 0x24, " rd ", " rs ", x2\n\t"       /* pv.sra.sci.b 4 */
#define SB_SRA6(rd, rs) ".insn r 0x57, 7, 0x24, " rd ", " rs ", x3\n\t"       /* pv.sra.sci.b 6 */
/* channel ch's two accumulators += the columns' words . t2 */
#define SB_DOT2(ch) SB_DOT("%[a" ch "0]", "t0", "t2") SB_DOT("%[a" ch "1]", "t1", "t2")
#if defined(TW_PULP_SB_EXTRACT)
/* PULP-NN's unpacking (seed 004 Fig. 3.3, pulp_nn_int4_to_int8): four p.extracti (the signed
 * field of `len1` + 1 bits at bit pos) and pv.packhi.b + pv.packlo.b per unpacked word, 6
 * instructions; built with -DTW_PULP_SB_EXTRACT for bench/pulp_subbyte.py's comparison. */
#define SB_EXT(rd, v, f7, pos) ".insn r 0x33, 0, " f7 ", " rd ", " v ", x" pos "\n\t"
#define SB_PACK(v, f7, p0, p1, p2, p3)                                                      \
    SB_EXT("a6", v, f7, p3) SB_EXT("a7", v, f7, p2)                                         \
    ".insn r 0x57, 1, 0x6C, t2, a6, a7\n\t"                    /* pv.packhi.b */           \
    SB_EXT("a6", v, f7, p1) SB_EXT("a7", v, f7, p0)                                         \
    ".insn r 0x57, 1, 0x70, t2, a6, a7\n\t"                    /* pv.packlo.b */
#define SB_U4_0(v) SB_PACK(v, "0x63", "0", "8", "16", "24")
#define SB_U4_1(v) SB_PACK(v, "0x63", "4", "12", "20", "28")
#define SB_U2_0(v) SB_PACK(v, "0x61", "0", "8", "16", "24")
#define SB_U2_1(v) SB_PACK(v, "0x61", "2", "10", "18", "26")
#define SB_U2_2(v) SB_PACK(v, "0x61", "4", "12", "20", "28")
#define SB_U2_3(v) SB_PACK(v, "0x61", "6", "14", "22", "30")
#define SB_BODY4 72
#define SB_BODY2 140
#define SB_MORE_CLOBBERS "a6", "a7",    /* the extracted fields */
#else
/* t2 = unpacked word j of packed word v: the field moved to the top of each byte (slli), then
 * shifted down with its sign (pv.sra.sci.b); the top field needs the shift only */
#define SB_U4_0(v) "slli t2, " v ", 4\n\t" SB_SRA4("t2", "t2")
#define SB_U4_1(v) SB_SRA4("t2", v)
#define SB_U2_0(v) "slli t2, " v ", 6\n\t" SB_SRA6("t2", "t2")
#define SB_U2_1(v) "slli t2, " v ", 4\n\t" SB_SRA6("t2", "t2")
#define SB_U2_2(v) "slli t2, " v ", 2\n\t" SB_SRA6("t2", "t2")
#define SB_U2_3(v) SB_SRA6("t2", v)
#define SB_BODY4 36
#define SB_BODY2 72
#define SB_MORE_CLOBBERS
#endif
/* one unpacked word j of the four rows' weights against the columns' next words */
#define SB_J(u)                                                                             \
    TW_PULP_P_LW("t0", "%[c0]") TW_PULP_P_LW("t1", "%[c1]")                               \
    u("t3") SB_DOT2("0") u("t4") SB_DOT2("1") u("t5") SB_DOT2("2") u("t6") SB_DOT2("3")
#define SB_W_LOADS                                                                          \
    TW_PULP_P_LW("t3", "%[w0]") TW_PULP_P_LW("t4", "%[w1]")                               \
    TW_PULP_P_LW("t5", "%[w2]") TW_PULP_P_LW("t6", "%[w3]")
/* lp.setup over a body of n instructions (TW_PULP_LOOP takes twice the count, as a literal) */
#define SB_LOOP(n) SB_LOOP_(n)
#define SB_LOOP_(n) ".option push\n\t.option norvc\n\t.insn i 0x7B, 4, x0, %[n], 2*" #n "\n\t"
#define SB_ASM_OPERANDS                                                                     \
    : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [a20] "+r"(a20),  \
      [a21] "+r"(a21), [a30] "+r"(a30), [a31] "+r"(a31), [c0] "+r"(c0), [c1] "+r"(c1),     \
      [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3)                           \
    : [n] "r"(row_words)                                                                    \
    : "t0", "t1", "t2", "t3", "t4", "t5", "t6", SB_MORE_CLOBBERS "memory"

/* Output channels k..k+3 of pixels p (column col0) and p + 1 (col1, stored when `two`). */
TW_PULP_INLINE void block4(const tw_pulp_conv_sb_args_t *a, const uint8_t *col0,
                           const uint8_t *col1, int two, int p, int k, int row_words,
                           const tw_pulp_clip_t *clip, const int wb, const int mode)
{
    const int8_t *c0 = (const int8_t *)(const void *)col0;
    const int8_t *c1 = (const int8_t *)(const void *)col1;
    const int8_t *w0 = (const int8_t *)(const void *)(a->w + (size_t)k * (size_t)row_words * 4u);
    const int8_t *w1 = w0 + 4 * row_words, *w2 = w1 + 4 * row_words, *w3 = w2 + 4 * row_words;
    int32_t b0 = a->bias ? a->bias[k] : 0, b1 = a->bias ? a->bias[k + 1] : 0;
    int32_t b2 = a->bias ? a->bias[k + 2] : 0, b3 = a->bias ? a->bias[k + 3] : 0;
    int32_t a00 = b0, a01 = b0, a10 = b1, a11 = b1, a20 = b2, a21 = b2, a30 = b3, a31 = b3;
    int s, yb = a->y_bits;
    size_t at = ((size_t)p * (size_t)a->out_c + (size_t)k) * (size_t)yb / 8u;
#if TW_PULP_ASM
    (void)s;
    if (wb == 8)
        __asm__ volatile(
            TW_PULP_LOOP(28)   /* a body of 14: 32 MACs */
            TW_PULP_P_LW("t0", "%[c0]") TW_PULP_P_LW("t1", "%[c1]")
            TW_PULP_P_LW("t3", "%[w0]") TW_PULP_P_LW("t4", "%[w1]")
            SB_DOT("%[a00]", "t0", "t3") SB_DOT("%[a01]", "t1", "t3")
            TW_PULP_P_LW("t5", "%[w2]")
            SB_DOT("%[a10]", "t0", "t4") SB_DOT("%[a11]", "t1", "t4")
            TW_PULP_P_LW("t6", "%[w3]")
            SB_DOT("%[a20]", "t0", "t5") SB_DOT("%[a21]", "t1", "t5")
            SB_DOT("%[a30]", "t0", "t6") SB_DOT("%[a31]", "t1", "t6")
            TW_PULP_LOOP_END
            SB_ASM_OPERANDS);
    else if (wb == 4)
        __asm__ volatile(
            SB_LOOP(SB_BODY4)   /* 64 MACs */
            SB_W_LOADS SB_J(SB_U4_0) SB_J(SB_U4_1)
            TW_PULP_LOOP_END
            SB_ASM_OPERANDS);
    else
        __asm__ volatile(
            SB_LOOP(SB_BODY2)   /* 128 MACs */
            SB_W_LOADS SB_J(SB_U2_0) SB_J(SB_U2_1) SB_J(SB_U2_2) SB_J(SB_U2_3)
            TW_PULP_LOOP_END
            SB_ASM_OPERANDS);
#else
    for (s = 0; s < row_words; s++) {
        tw_v4_t v0 = tw_pulp_lw_step(&w0, 4), v1 = tw_pulp_lw_step(&w1, 4);
        tw_v4_t v2 = tw_pulp_lw_step(&w2, 4), v3 = tw_pulp_lw_step(&w3, 4);
        SB_STEP_J(0);
        if (wb <= 4)
            SB_STEP_J(1);
        if (wb == 2) {
            SB_STEP_J(2);
            SB_STEP_J(3);
        }
    }
#endif
    {
        /* QntPack: each channel's words loaded once for both pixels */
        const int32_t *words = a->rq.words;
        tw_pulp_rqch_t q0 = tw_pulp_rq_channel(words, 0, k);
        tw_pulp_rqch_t q1 = tw_pulp_rq_channel(words, 0, k + 1);
        tw_pulp_rqch_t q2 = tw_pulp_rq_channel(words, 0, k + 2);
        tw_pulp_rqch_t q3 = tw_pulp_rq_channel(words, 0, k + 3);
        uint8_t *o = a->out + at;
        tw_v4_t y0 = tw_pulp_pack4(tw_pulp_rq(&q0, clip, a00, mode),
                                   tw_pulp_rq(&q1, clip, a10, mode),
                                   tw_pulp_rq(&q2, clip, a20, mode),
                                   tw_pulp_rq(&q3, clip, a30, mode));
        put4(o, y0, yb);
        if (two) {   /* an odd last pixel (a dense layer's one) is not requantized twice */
            tw_v4_t y1 = tw_pulp_pack4(tw_pulp_rq(&q0, clip, a01, mode),
                                       tw_pulp_rq(&q1, clip, a11, mode),
                                       tw_pulp_rq(&q2, clip, a21, mode),
                                       tw_pulp_rq(&q3, clip, a31, mode));
            put4(o + (size_t)a->out_c * (size_t)yb / 8u, y1, yb);
        }
    }
}

/* Output channel k of pixels p and p + 1 (when `two`): the leftover channels (out_c mod 4). */
TW_PULP_INLINE void channel1(const tw_pulp_conv_sb_args_t *a, const uint8_t *col0,
                             const uint8_t *col1, int two, int p, int k, int row_words,
                             const tw_pulp_clip_t *clip, const int wb, const int mode)
{
    const int8_t *c0 = (const int8_t *)(const void *)col0;
    const int8_t *c1 = (const int8_t *)(const void *)col1;
    const int8_t *w = (const int8_t *)(const void *)(a->w + (size_t)k * (size_t)row_words * 4u);
    int32_t acc0 = a->bias ? a->bias[k] : 0, acc1 = acc0;
    int s, j;
    for (s = 0; s < row_words; s++) {
        tw_v4_t v = tw_pulp_lw_step(&w, 4);
        for (j = 0; j < 8 / wb; j++) {
            tw_v4_t u = unpack_w(v, j, wb);
            acc0 = tw_pulp_sdotp4(acc0, tw_pulp_lw_step(&c0, 4), u);
            acc1 = tw_pulp_sdotp4(acc1, tw_pulp_lw_step(&c1, 4), u);
        }
    }
    put_packed(a->out, (size_t)p * (size_t)a->out_c + (size_t)k,
               rq_out(&a->rq, clip, k, acc0, mode), a->y_bits);
    if (two)
        put_packed(a->out, (size_t)(p + 1) * (size_t)a->out_c + (size_t)k,
                   rq_out(&a->rq, clip, k, acc1, mode), a->y_bits);
}

static int reduction(const tw_pulp_conv_sb_args_t *a)
{
    return a->win.k_h * a->win.k_w * a->in_c;
}

/* Receptive fields per core: two (a pixel pair), one for a single output pixel (dense). */
static size_t columns(const tw_window_t *win)
{
    return win->out_h * win->out_w > 1 ? 2u : 1u;
}

size_t tw_pulp_conv2d_sb_scratch(const tw_window_t *win, int in_c, int n_cores)
{
    return (size_t)n_cores * columns(win) * (size_t)(win->k_h * win->k_w * in_c);
}

/* The tile's (pixel pair, channel group) items, this core's run (tw_pulp_common.h): per pair the
 * two receptive fields unpacked once, then the group's 4-channel blocks and leftover channels. */
TW_PULP_INLINE void conv_sb(const tw_pulp_conv_sb_args_t *a, int core, int cores, const int wb,
                            const int mode)
{
    const tw_window_t *g = &a->win;
    int len = reduction(a), row_words = len * wb / 32;
    uint8_t *col0 = a->im2col + (size_t)core * columns(g) * (size_t)len, *col1 = col0 + len;
    int pixels = g->out_h * g->out_w, pairs = (pixels + 1) >> 1, blocks = (a->out_c + 3) >> 2;
    int groups = tw_pulp_groups(pairs, blocks, cores), it, end, built = -1;
    tw_pulp_clip_t clip = tw_pulp_clip(a->rq.qmin, a->rq.qmax, a->rq.zero_point);
    tw_pulp_share(pairs * groups, core, cores, &it, &end);
    for (; it < end; it++) {
        int pair = it / groups, grp = it - pair * groups;
        int p = 2 * pair, two = p + 1 < pixels, k, k0, k1;
        if (built != pair) {
            im2col_sb(a, p, col0);
            if (two)
                im2col_sb(a, p + 1, col1);
            built = pair;
        }
        tw_pulp_group_blocks(blocks, grp, groups, &k0, &k1);
        k1 = 4 * k1 < a->out_c ? 4 * k1 : a->out_c;
        for (k = 4 * k0; k + 4 <= k1; k += 4)
            block4(a, col0, two ? col1 : col0, two, p, k, row_words, &clip, wb, mode);
        for (; k < k1; k++)
            channel1(a, col0, two ? col1 : col0, two, p, k, row_words, &clip, wb, mode);
    }
}

#define TW_PULP_CONV_SB_DEF(name, mode)                                                     \
    void tw_pulp_conv2d_sb_w8_##name(const tw_pulp_conv_sb_args_t *a, int core_id,           \
                                     int n_cores)                                           \
    {                                                                                       \
        conv_sb(a, core_id, n_cores, 8, mode);                                              \
    }                                                                                       \
    void tw_pulp_conv2d_sb_w4_##name(const tw_pulp_conv_sb_args_t *a, int core_id,           \
                                     int n_cores)                                           \
    {                                                                                       \
        conv_sb(a, core_id, n_cores, 4, mode);                                              \
    }                                                                                       \
    void tw_pulp_conv2d_sb_w2_##name(const tw_pulp_conv_sb_args_t *a, int core_id,           \
                                     int n_cores)                                           \
    {                                                                                       \
        conv_sb(a, core_id, n_cores, 2, mode);                                              \
    }

TW_PULP_VARIANTS(TW_PULP_CONV_SB_DEF)
