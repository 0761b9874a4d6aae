/*
 * tw_ne16_kernels.c — the cluster's side of an NE16 layer (contract in tw_ne16_kernels.h).
 */
#include "tw_ne16_kernels.h"

#include <stddef.h>

void tw_ne16_to_u8(uint8_t *u, const int8_t *x, int n)
{
    int i = 0;
    if ((((uintptr_t)u | (uintptr_t)x) & 3u) == 0) {
        /* a word at a time: one lw, xor, sw (tw_pulp_lw / tw_pulp_sw: one instruction each on
         * the cluster, memcpy on Arm, bytes on the host) */
        for (; i + 4 <= n; i += 4)
            tw_pulp_sw((int8_t *)(void *)(u + i), tw_pulp_lw(x + i) ^ 0x80808080u);
    }
    for (; i < n; i++)
        u[i] = (uint8_t)((uint8_t)x[i] ^ 0x80u);
}

void tw_ne16_to_u8_part(uint8_t *u, const int8_t *x, int n, int core_id, int n_cores)
{
    /* word-aligned cuts, so that each core's part keeps the word path */
    int lo = (int)((long)n * core_id / n_cores) & ~3;
    int hi = core_id + 1 == n_cores ? n : (int)((long)n * (core_id + 1) / n_cores) & ~3;
    if (hi > lo)
        tw_ne16_to_u8(u + lo, x + lo, hi - lo);
}

void tw_ne16_to_u8_pad_part(uint8_t *u, const int8_t *x, int in_h, int in_w, int in_c,
                            int pad_b, int pad_r, uint8_t pad_value, int core_id, int n_cores)
{
    const int row = in_w * in_c, prow = (in_w + pad_r) * in_c, rows = in_h + pad_b;
    int r;
    for (r = core_id; r < rows; r += n_cores) {
        uint8_t *ur = u + (size_t)r * (size_t)prow;
        int i = 0;
        if (r < in_h) {
            tw_ne16_to_u8(ur, x + (size_t)r * (size_t)row, row);
            i = row;
        }
        for (; i < prow; i++)
            ur[i] = pad_value;
    }
}

/* rows × taps taps of in_c bytes (x + 128) from s to d: taps c_pad apart in d and in_c apart in
 * s, rows d_row apart in d and s_row apart in s. One channel on the cluster: two nested hardware
 * loops, p.lbu, xori, p.sb per tap. */
TW_PULP_INLINE void im2col_block(uint8_t *d, const int8_t *s, int rows, int taps, int in_c,
                                 int c_pad, int d_row, int s_row)
{
    int i, j, c;
#if TW_PULP_ASM
    if (in_c == 1) {
        const int32_t d_skip = d_row - taps * c_pad, s_skip = s_row - taps;
        int32_t t;
        __asm__ volatile(
            ".option push\n\t.option norvc\n\t"
            ".insn i 0x7B, 4, x1, %[rows], 12\n\t"          /* lp.setup loop 1: 6 instructions */
            ".insn i 0x7B, 4, x0, %[taps], 6\n\t"           /* lp.setup loop 0: 3 instructions */
            ".insn i 0x0B, 4, %[t], %[s], 1\n\t"            /* p.lbu t, 1(s!) */
            "xori %[t], %[t], 0x80\n\t"
            ".insn r 0x2B, 4, 0, %[cp], %[d], %[t]\n\t"     /* p.sb t, cp(d!) */
            "add %[d], %[d], %[dk]\n\t"
            "add %[s], %[s], %[sk]\n\t"
            TW_PULP_LOOP_END
            : [s] "+r"(s), [d] "+r"(d), [t] "=&r"(t)
            : [rows] "r"(rows), [taps] "r"(taps), [cp] "r"(c_pad), [dk] "r"(d_skip),
              [sk] "r"(s_skip)
            : "memory");
        return;
    }
#endif
    for (i = 0; i < rows; i++, d += d_row, s += s_row)
        for (j = 0; j < taps; j++)
            for (c = 0; c < in_c; c++)
                d[j * c_pad + c] = (uint8_t)((uint8_t)s[j * in_c + c] ^ 0x80u);
}

void tw_ne16_im2col_u8_part(uint8_t *u, const int8_t *x, int in_h, int in_w, int in_c,
                            int c_pad, int fy, int fx, int sy, int sx, int pad_t, int pad_l,
                            int out_h, int out_w, uint8_t pad_value, int core_id, int n_cores)
{
    const int cols = fy * fx * c_pad, pixels = out_h * out_w, row = fx * c_pad;
    const uint32_t fill = 0x01010101u * pad_value;
    int p = core_id, oy = core_id / out_w, ox = core_id - (core_id / out_w) * out_w;
    for (; p < pixels; p += n_cores) {
        uint8_t *d = u + (size_t)p * (size_t)cols;
        const int iy0 = oy * sy - pad_t, ix0 = ox * sx - pad_l;
        /* the taps inside the tile: rows [i0, i1), columns [j0, j1) */
        const int i0 = iy0 < 0 ? -iy0 : 0, i1 = iy0 + fy > in_h ? in_h - iy0 : fy;
        const int j0 = ix0 < 0 ? -ix0 : 0, j1 = ix0 + fx > in_w ? in_w - ix0 : fx;
        if (i0 > 0 || i1 < fy || j0 > 0 || j1 < fx) {
            /* padding: the whole pixel first (cols is a multiple of 16: whole words) */
            uint32_t *w = (uint32_t *)(void *)d;
            int n;
            for (n = 0; n < cols / 4; n++)
                w[n] = fill;
        }
        if (i1 > i0 && j1 > j0)
            im2col_block(d + (i0 * fx + j0) * c_pad,
                         x + ((size_t)(iy0 + i0) * (size_t)in_w + (size_t)(ix0 + j0)) * (size_t)in_c,
                         i1 - i0, j1 - j0, in_c, c_pad, row, in_w * in_c);
        for (ox += n_cores; ox >= out_w; ox -= out_w)    /* the core's next pixel */
            oy++;
    }
}

/* acc + bias modulo 2^32 (the layer's accumulator). */
TW_PULP_INLINE int32_t acc_of(const int32_t *acc, const int32_t *bias, int j)
{
    return (int32_t)((uint32_t)acc[j] + (uint32_t)bias[j]);
}

/* Channels [k0, k0 + n) of one pixel: acc, bias and words read in order (w at channel k0), four
 * outputs per store (tw_pulp_rq4: the Arm build clamps them four lanes at a time). */
TW_PULP_INLINE void requant_run(const int32_t *acc, const int32_t *bias, const int32_t *w,
                                int8_t *out, int n, const tw_pulp_clip_t *clip, const int mode)
{
    int j;
    for (j = 0; j + 4 <= n; j += 4, w += 16)
        tw_pulp_sw(out + j, tw_pulp_rq4(w, clip, acc_of(acc, bias, j), acc_of(acc, bias, j + 1),
                                        acc_of(acc, bias, j + 2), acc_of(acc, bias, j + 3),
                                        mode));
    for (; j < n; j++, w += 4) {
        tw_pulp_rqch_t c = tw_pulp_rq_channel(w, 1, 0);
        out[j] = tw_pulp_rq(&c, clip, acc_of(acc, bias, j), mode);
    }
}

/* Where core c's share of `total` work units starts (c = cores: the end): equal shares but core
 * 0's, `lighter` units smaller (tw_ne16_rq_args_t: core 0 dispatches NE16's next job first), the
 * units it leaves spread over the other cores: (total + lighter)·c / cores − lighter, at least 0. */
TW_PULP_INLINE int share_bound(int total, int lighter, int c, int cores)
{
    int b;
    if (c <= 0 || c >= cores)
        return c <= 0 ? 0 : total;
    b = (int)((long)(total + lighter) * c / cores) - lighter;
    return b < 0 ? 0 : b;
}

/* The core's run of the n·k outputs [begin, end) (share_bound), walked pixel by pixel: the rest of the
 * first pixel's channels, whole pixels, the first channels of the last one. */
TW_PULP_INLINE void requant(const tw_ne16_rq_args_t *a, int core, int cores, const int mode)
{
    tw_pulp_clip_t clip = tw_pulp_clip(a->rq.qmin, a->rq.qmax, a->rq.zero_point);
    const int32_t *const acc = a->acc, *const bias = a->bias, *const words = a->rq.words;
    int8_t *const out = a->out;
    const int k = a->k, total = a->n * a->k;
    int i = share_bound(total, a->lighter, core, cores);
    const int end = share_bound(total, a->lighter, core + 1, cores);
    int ch = i % k;
    while (i < end) {
        int run = k - ch < end - i ? k - ch : end - i;
        requant_run(acc + i, bias + ch, words + 4 * ch, out + i, run, &clip, mode);
        i += run;
        ch = 0;
    }
}

#define TW_NE16_RQ_DEF(name, mode)                                                            \
    void tw_ne16_requant_s8_##name(const tw_ne16_rq_args_t *a, int core_id, int n_cores)       \
    {                                                                                         \
        requant(a, core_id, n_cores, mode);                                                   \
    }

TW_PULP_VARIANTS(TW_NE16_RQ_DEF)

/* The MultiplyByQuantizedMultiplier of TFLite (double rounding) in one mulh per output, exact
 * under the bounds of tw_ne16_kernels.h (bindings/ne16/requant.py proves them per layer): with
 * x = acc · 2^(left + 2), p = mulh(x, m0) = floor(acc · 2^left · m0 / 2^30), so SRDHM =
 * floor((p + 1) / 2) (2^30 · 2^(left+2) is a whole multiple of 2^32), and with the right shift
 * e ≥ 1 RoundingDivideByPOT(SRDHM, e) = (p + 1 + 2^e - 2·[p < 0]) >> (e + 1) (the tie
 * adjustment of a negative SRDHM, which p = -1 does not change); e = 0: (p + 1) >> 1. The zero
 * point joins the sum as zp · 2^(e+1), so the output is that shifted sum clamped to [qmin, qmax].
 * The words per channel are the layer's own (requant.py mulh_words): m0, up = left + 2,
 * sh = e + 1, add = 1 + 2^e (e ≥ 1) or 1; a channel whose output is constant has m0 = 0 (p = 0)
 * and add = 2·(code - zp), sh = 1. */
typedef struct {
    int32_t m0, bias, up, add, neg, two, sh;
} mulh_ch_t;

TW_PULP_INLINE mulh_ch_t mulh_channel(const tw_ne16_rq_args_t *a, int ch)
{
    const int32_t *w = a->rq.words + 4 * ch;
    mulh_ch_t c;
    c.m0 = w[0];
    c.bias = a->bias[ch];
    c.up = w[1];
    c.sh = w[2];
    c.add = (int32_t)((uint32_t)w[3] + ((uint32_t)a->rq.zero_point << c.sh));
    c.neg = c.sh > 1 ? -2 : 0;
    c.two = -c.neg;
    return c;
}

TW_PULP_INLINE int8_t mulh_one(const mulh_ch_t *c, int32_t acc, int32_t lo, int32_t hi)
{
    int32_t q = tw_pulp_mulh((int32_t)(((uint32_t)acc + (uint32_t)c->bias) << c->up), c->m0);
    int32_t s = tw_pulp_asr(q, 31) & c->neg;
    return (int8_t)tw_pulp_clamp(tw_pulp_asr(q + s + c->add, c->sh), lo, hi);
}

/* Channels ch and ch + 1 of n pixels k channels apart: acc and out at the pair's first channel.
 * On the cluster one hardware loop per pixel (the two outputs interleaved: p.lw with the pixel
 * step, p.mac for the tie adjustment of a negative product, p.addNr for the add and the shift,
 * the clamp one p.clip for [-128, 127] or p.clipu for [0, 255] (a u8 output's), else p.max and
 * p.min, p.sb with the pixel step): 18 or 20 instructions. */
#if TW_PULP_ASM
/* The requantization of two channels' int32 outputs of one pixel (t0, t1), shared by the pair
 * loops below: p.lw with the pixel step, bias, pre-shift, mulh, p.mac for the tie adjustment
 * of a negative product, p.addNr for the add and the shift. */
#define TW_NE16_MULH_REQUANT_PAIR                                                             \
        "lw %[t1], 4(%[p])\n\t"                                                               \
        TW_PULP_P_LW_RR("%[t0]", "%[p]", "%[step]")                                           \
        "add %[t0], %[t0], %[b0]\n\t"                                                         \
        "add %[t1], %[t1], %[b1]\n\t"                                                         \
        "sll %[t0], %[t0], %[u0]\n\t"                                                         \
        "sll %[t1], %[t1], %[u1]\n\t"                                                         \
        "mulh %[t0], %[t0], %[m0]\n\t"                                                        \
        "mulh %[t1], %[t1], %[m1]\n\t"                                                        \
        "srai %[s0], %[t0], 31\n\t"                                                           \
        "srai %[s1], %[t1], 31\n\t"                                                           \
        ".insn r 0x33, 0, 0x21, %[t0], %[s0], %[g0]\n\t"   /* p.mac: t0 += s0 * g0 */        \
        ".insn r 0x33, 0, 0x21, %[t1], %[s1], %[g1]\n\t"                                      \
        ".insn r 0x5B, 2, 0x20, %[t0], %[a0], %[h0]\n\t"   /* p.addNr: (t0 + a0) >> h0 */    \
        ".insn r 0x5B, 2, 0x20, %[t1], %[a1], %[h1]\n\t"
#define TW_NE16_MULH_PAIR(loop, clamp0, clamp1)                                               \
    __asm__ volatile(                                                                         \
        TW_PULP_LOOP(loop)                                                                    \
        TW_NE16_MULH_REQUANT_PAIR                                                             \
        clamp0 clamp1                                                                         \
        "sb %[t1], 1(%[o])\n\t"                                                               \
        ".insn r 0x2B, 4, 0, %[k], %[o], %[t0]\n\t"    /* p.sb t0, k(o!) */                   \
        TW_PULP_LOOP_END                                                                      \
        : [p] "+r"(p), [o] "+r"(out), [t0] "=&r"(t0), [t1] "=&r"(t1), [s0] "=&r"(s0),          \
          [s1] "=&r"(s1)                                                                      \
        : [n] "r"(n), [step] "r"(step), [k] "r"(k), [lo] "r"(lo), [hi] "r"(hi),               \
          [b0] "r"(c0->bias), [u0] "r"(c0->up), [m0] "r"(c0->m0), [g0] "r"(c0->two),          \
          [a0] "r"(c0->add), [h0] "r"(c0->sh), [b1] "r"(c1->bias), [u1] "r"(c1->up),          \
          [m1] "r"(c1->m0), [g1] "r"(c1->two), [a1] "r"(c1->add), [h1] "r"(c1->sh)             \
        : "memory")
/* p.clip t, t, 8: to [-128, 127]; p.clipu t, t, 9: to [0, 255]; p.max / p.min */
#define TW_NE16_CLIP(t) ".insn r 0x33, 1, 0x0A, " t ", " t ", x8\n\t"
#define TW_NE16_CLIPU(t) ".insn r 0x33, 2, 0x0A, " t ", " t ", x9\n\t"
#define TW_NE16_MAXMIN(t) ".insn r 0x33, 6, 0x02, " t ", " t ", %[lo]\n\t" \
                          ".insn r 0x33, 4, 0x02, " t ", " t ", %[hi]\n\t"
#endif

TW_PULP_INLINE void mulh_pair(const mulh_ch_t *c0, const mulh_ch_t *c1, const int32_t *acc,
                              int8_t *out, int n, int k, int32_t lo, int32_t hi)
{
#if TW_PULP_ASM
    if (n > 0) {
        const int8_t *p = (const int8_t *)(const void *)acc;
        const int32_t step = 4 * k;
        int32_t t0, t1, s0, s1;
        if (lo == -128 && hi == 127)
            TW_NE16_MULH_PAIR(36, TW_NE16_CLIP("%[t0]"), TW_NE16_CLIP("%[t1]"));   /* 18 */
        else if (lo == 0 && hi == 255)
            TW_NE16_MULH_PAIR(36, TW_NE16_CLIPU("%[t0]"), TW_NE16_CLIPU("%[t1]"));  /* 18 */
        else
            TW_NE16_MULH_PAIR(40, TW_NE16_MAXMIN("%[t0]"), TW_NE16_MAXMIN("%[t1]")); /* 20 */
    }
#else
    int p;
    for (p = 0; p < n; p++, acc += k, out += k) {
        out[0] = mulh_one(c0, acc[0], lo, hi);
        out[1] = mulh_one(c1, acc[1], lo, hi);
    }
#endif
}

/* A core's share of a job's n pixels × k channels as up to 3 rectangles, channels [k0, k1) ×
 * pixels [p0, p1): the channel pairs' columns (the last one a single channel when k is odd) laid
 * end to end, pixel by pixel within a column, and cut into the cores' runs (share_bound, core 0's
 * `lighter` outputs shorter, in pairs): the rest of the first column, whole columns, the start of
 * the last one. Every run is balanced to a pair of outputs whatever n and k are. */
typedef struct {
    int k0, k1, p0, p1;
} rect_t;

static int requant_share(int n, int k, int lighter, int core, int cores, rect_t r[3])
{
    const int cols = (k + 1) / 2, total = cols * n;
    const int u0 = share_bound(total, lighter / 2, core, cores);
    const int u1 = share_bound(total, lighter / 2, core + 1, cores);
    int c0, q0, c1, q1, m = 0;
    if (u0 >= u1)
        return 0;
    c0 = u0 / n, q0 = u0 - c0 * n, c1 = u1 / n, q1 = u1 - c1 * n;   /* no remainders */
    if (c0 == c1) {
        r[0] = (rect_t){2 * c0, 2 * c0 + 2 < k ? 2 * c0 + 2 : k, q0, q1};
        return 1;
    }
    if (q0 > 0) {                                   /* the rest of the first column */
        r[m++] = (rect_t){2 * c0, 2 * c0 + 2 < k ? 2 * c0 + 2 : k, q0, n};
        c0++;
    }
    if (c1 > c0)                                    /* whole columns */
        r[m++] = (rect_t){2 * c0, 2 * c1 < k ? 2 * c1 : k, 0, n};
    if (q1 > 0)                                     /* the start of the last one */
        r[m++] = (rect_t){2 * c1, 2 * c1 + 2 < k ? 2 * c1 + 2 : k, 0, q1};
    return m;
}

/* The outputs channel by channel (two at a time: their words and bias in registers, one
 * pointer step per pair), over the pixels of each rectangle of the core's share
 * (requant_share). */
void tw_ne16_requant_s8_mulh(const tw_ne16_rq_args_t *a, int core, int cores)
{
    const int32_t lo = a->rq.qmin, hi = a->rq.qmax;
    const int k = a->k;
    rect_t rs[3];
    int i, m = requant_share(a->n, k, a->lighter, core, cores, rs);
    for (i = 0; i < m; i++) {
        const int k1 = rs[i].k1, p0 = rs[i].p0, p1 = rs[i].p1;
        int ch = rs[i].k0, p;
        for (; ch + 2 <= k1; ch += 2) {
            const mulh_ch_t c0 = mulh_channel(a, ch), c1 = mulh_channel(a, ch + 1);
            const size_t at = (size_t)p0 * (size_t)k + (size_t)ch;
            mulh_pair(&c0, &c1, a->acc + at, a->out + at, p1 - p0, k, lo, hi);
        }
        if (ch < k1) {
            const mulh_ch_t c0 = mulh_channel(a, ch);
            const int32_t *acc = a->acc + (size_t)p0 * (size_t)k + (size_t)ch;
            int8_t *out = a->out + (size_t)p0 * (size_t)k + (size_t)ch;
            for (p = p0; p < p1; p++, acc += k, out += k)
                *out = mulh_one(&c0, *acc, lo, hi);
        }
    }
}

/* The fused add (tw_ne16_kernels.h): channel pairs (mulh_add_pair, where both clamps are
 * [-128, 127]) or channels over the pixels of the core's share (tw_ne16_requant_s8_mulh's
 * split), each output requantized as mulh_one does, clamped, then added: clamp((ta[q] + tb[s])
 * >> sh) with the tables' pointers at their middle entry and s the skip's byte read signed. On
 * the cluster one hardware loop per channel of 18 instructions per output: p.lw of the accumulator and p.lb of the skip byte with the pixel step, the one-mulh
 * requantization (add, sll, mulh, the tie's p.mac, p.addNr, p.max / p.min), two register-offset
 * p.lw from the tables, p.addNr for the add and the shift, p.max / p.min, p.sb. */
#if TW_PULP_ASM
#define TW_NE16_P_LW_IDX(rd, base) ".insn r 0x03, 7, 0x10, " rd ", " base ", " rd "\n\t"
#define TW_NE16_MAX(t, v) ".insn r 0x33, 6, 0x02, " t ", " t ", " v "\n\t"
#define TW_NE16_MIN(t, v) ".insn r 0x33, 4, 0x02, " t ", " t ", " v "\n\t"
#endif

TW_PULP_INLINE void mulh_add_channel(const mulh_ch_t *c, const int32_t *acc, const int8_t *skip,
                                     int8_t *out, int n, int k, int32_t lo, int32_t hi,
                                     const int32_t *ta, const int32_t *tb, int32_t sh,
                                     int32_t alo, int32_t ahi)
{
#if TW_PULP_ASM
    if (n > 0) {
        const int8_t *p = (const int8_t *)(const void *)acc;
        const int32_t step = 4 * k;
        int32_t t, s, v;
        __asm__ volatile(
            TW_PULP_LOOP(36)
            TW_PULP_P_LW_RR("%[t]", "%[p]", "%[step]")
            TW_PULP_P_LB_RR("%[s]", "%[x]", "%[k]")
            "add %[t], %[t], %[b]\n\t"
            "sll %[t], %[t], %[u]\n\t"
            "mulh %[t], %[t], %[m]\n\t"
            "slli %[s], %[s], 2\n\t"
            TW_NE16_P_LW_IDX("%[s]", "%[tb]")
            "srai %[v], %[t], 31\n\t"
            ".insn r 0x33, 0, 0x21, %[t], %[v], %[g]\n\t"   /* p.mac: t += v * g */
            ".insn r 0x5B, 2, 0x20, %[t], %[a], %[h]\n\t"   /* p.addNr: (t + a) >> h */
            TW_NE16_MAX("%[t]", "%[lo]") TW_NE16_MIN("%[t]", "%[hi]")
            "slli %[t], %[t], 2\n\t"
            TW_NE16_P_LW_IDX("%[t]", "%[ta]")
            ".insn r 0x5B, 2, 0x20, %[t], %[s], %[sh]\n\t"  /* (t + s) >> sh */
            TW_NE16_MAX("%[t]", "%[alo]") TW_NE16_MIN("%[t]", "%[ahi]")
            ".insn r 0x2B, 4, 0, %[k], %[o], %[t]\n\t"      /* p.sb t, k(o!) */
            TW_PULP_LOOP_END
            : [p] "+r"(p), [x] "+r"(skip), [o] "+r"(out), [t] "=&r"(t), [s] "=&r"(s),
              [v] "=&r"(v)
            : [n] "r"(n), [step] "r"(step), [k] "r"(k), [lo] "r"(lo), [hi] "r"(hi),
              [b] "r"(c->bias), [u] "r"(c->up), [m] "r"(c->m0), [g] "r"(c->two),
              [a] "r"(c->add), [h] "r"(c->sh), [ta] "r"(ta), [tb] "r"(tb), [sh] "r"(sh),
              [alo] "r"(alo), [ahi] "r"(ahi)
            : "memory");
    }
#else
    int p;
    for (p = 0; p < n; p++, acc += k, skip += k, out += k)
        *out = (int8_t)tw_pulp_clamp(tw_pulp_asr(ta[mulh_one(c, *acc, lo, hi)] + tb[*skip], sh),
                                     alo, ahi);
#endif
}

/* Channels ch and ch + 1 of n pixels where the conv's clamp is [-128, 127] and the add's
 * [-128, 127] or, a u8 output's, [0, 255] (p.clip, p.clipu): as mulh_add_channel, the two
 * outputs interleaved in one hardware loop per pixel of 32 instructions (the two mulh's and the
 * table loads behind the other channel's work). */
#if TW_PULP_ASM
#define TW_NE16_MULH_ADD_PAIR(clamp0, clamp1)                                                 \
    __asm__ volatile(                                                                         \
        TW_PULP_LOOP(64)                                                                      \
        TW_NE16_MULH_REQUANT_PAIR                                                             \
        "lb %[s1], 1(%[x])\n\t"                                                               \
        TW_PULP_P_LB_RR("%[s0]", "%[x]", "%[k]")                                              \
        TW_NE16_CLIP("%[t0]") TW_NE16_CLIP("%[t1]")                                           \
        "slli %[t0], %[t0], 2\n\t"                                                            \
        "slli %[t1], %[t1], 2\n\t"                                                            \
        "slli %[s0], %[s0], 2\n\t"                                                            \
        "slli %[s1], %[s1], 2\n\t"                                                            \
        TW_NE16_P_LW_IDX("%[t0]", "%[ta]") TW_NE16_P_LW_IDX("%[t1]", "%[ta]")                 \
        TW_NE16_P_LW_IDX("%[s0]", "%[tb]") TW_NE16_P_LW_IDX("%[s1]", "%[tb]")                 \
        ".insn r 0x5B, 2, 0x20, %[t0], %[s0], %[sh]\n\t"   /* (t0 + s0) >> sh */             \
        ".insn r 0x5B, 2, 0x20, %[t1], %[s1], %[sh]\n\t"                                      \
        clamp0 clamp1                                                                         \
        "sb %[t1], 1(%[o])\n\t"                                                               \
        ".insn r 0x2B, 4, 0, %[k], %[o], %[t0]\n\t"        /* p.sb t0, k(o!) */              \
        TW_PULP_LOOP_END                                                                      \
        : [p] "+r"(p), [x] "+r"(skip), [o] "+r"(out), [t0] "=&r"(t0), [t1] "=&r"(t1),          \
          [s0] "=&r"(s0), [s1] "=&r"(s1)                                                      \
        : [n] "r"(n), [step] "r"(step), [k] "r"(k),                                           \
          [b0] "r"(c0->bias), [u0] "r"(c0->up), [m0] "r"(c0->m0), [g0] "r"(c0->two),          \
          [a0] "r"(c0->add), [h0] "r"(c0->sh), [b1] "r"(c1->bias), [u1] "r"(c1->up),          \
          [m1] "r"(c1->m0), [g1] "r"(c1->two), [a1] "r"(c1->add), [h1] "r"(c1->sh),           \
          [ta] "r"(ta), [tb] "r"(tb), [sh] "r"(sh)                                            \
        : "memory")
#endif

TW_PULP_INLINE void mulh_add_pair(const mulh_ch_t *c0, const mulh_ch_t *c1, const int32_t *acc,
                                  const int8_t *skip, int8_t *out, int n, int k,
                                  const int32_t *ta, const int32_t *tb, int32_t sh, int u8out)
{
#if TW_PULP_ASM
    if (n > 0) {
        const int8_t *p = (const int8_t *)(const void *)acc;
        const int32_t step = 4 * k;
        int32_t t0, t1, s0, s1;
        if (u8out)
            TW_NE16_MULH_ADD_PAIR(TW_NE16_CLIPU("%[t0]"), TW_NE16_CLIPU("%[t1]"));
        else
            TW_NE16_MULH_ADD_PAIR(TW_NE16_CLIP("%[t0]"), TW_NE16_CLIP("%[t1]"));
    }
#else
    const int32_t alo = u8out ? 0 : -128, ahi = u8out ? 255 : 127;
    mulh_add_channel(c0, acc, skip, out, n, k, -128, 127, ta, tb, sh, alo, ahi);
    mulh_add_channel(c1, acc + 1, skip + 1, out + 1, n, k, -128, 127, ta, tb, sh, alo, ahi);
#endif
}

void tw_ne16_requant_s8_mulh_add(const tw_ne16_rq_args_t *a, const tw_ne16_add_args_t *r,
                                 int core, int cores)
{
    const int32_t lo = a->rq.qmin, hi = a->rq.qmax;
    const int32_t *const ta = r->tables + 128, *const tb = r->tables + 256 + 128;
    const int32_t sh = r->shift, alo = r->qmin, ahi = r->qmax;
    const int k = a->k;
    const int u8out = alo == 0 && ahi == 255;
    const int pairs = lo == -128 && hi == 127 && (u8out || (alo == -128 && ahi == 127));
    rect_t rs[3];
    int i, m = requant_share(a->n, k, a->lighter, core, cores, rs);
    for (i = 0; i < m; i++) {
        const int k1 = rs[i].k1, p0 = rs[i].p0, p1 = rs[i].p1;
        int ch = rs[i].k0;
        if (pairs)
            for (; ch + 2 <= k1; ch += 2) {
                const mulh_ch_t c0 = mulh_channel(a, ch), c1 = mulh_channel(a, ch + 1);
                const size_t at = (size_t)p0 * (size_t)k + (size_t)ch;
                mulh_add_pair(&c0, &c1, a->acc + at, r->skip + at, a->out + at, p1 - p0, k, ta,
                              tb, sh, u8out);
            }
        for (; ch < k1; ch++) {
            const mulh_ch_t c = mulh_channel(a, ch);
            const size_t at = (size_t)p0 * (size_t)k + (size_t)ch;
            mulh_add_channel(&c, a->acc + at, r->skip + at, a->out + at, p1 - p0, k, lo, hi, ta,
                             tb, sh, alo, ahi);
        }
    }
}
