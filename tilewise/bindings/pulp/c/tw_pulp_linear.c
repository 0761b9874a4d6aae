/*
 * tw_pulp_linear.c — int8 dense layer on the RI5CY cluster: vector x matrix through the MatMul of
 * tw_pulp_matmul.h with the input row as the column (seed 004 §3.3.1: "there is no need to build
 * the im2col buffer"), output neurons split evenly over the cores (§3.3.2: "the only dimension
 * along which we can split the workload is the channel"). Contract in tw_pulp_conv.h.
 */
#include "tw_pulp_conv.h"

#include "tw_pulp_common.h"
#include "tw_pulp_matmul.h"

TW_PULP_INLINE void dense(const tw_pulp_fc_args_t *t, int core, int cores, const int mode)
{
    const tw_fc_args_t *a = &t->a;
    tw_pulp_sink_t s = tw_pulp_sink(a->bias, a->psum, a->out, a->out_c, a->acc_flags, &t->rq);
    int k0, k1, r;

    tw_pulp_share(a->out_c, core, cores, &k0, &k1);
    for (r = 0; r < a->n_rows && k0 < k1; r += 2) {
        const int8_t *x0 = a->in + (size_t)r * a->in_c;
        const int8_t *x1 = r + 1 < a->n_rows ? x0 + a->in_c : NULL;
        tw_pulp_mm_cols(x0, x1, r, r + 1, a->w, a->in_c, k0, k1, &s, mode);
    }
}

#define TW_PULP_DENSE_DEF(name, mode)                                                       \
    void tw_pulp_fully_connected_s8_##name(const tw_pulp_fc_args_t *a, int core_id,         \
                                           int n_cores)                                     \
    {                                                                                       \
        dense(a, core_id, n_cores, mode);                                                   \
    }

TW_PULP_VARIANTS(TW_PULP_DENSE_DEF)

#if TW_PULP_ARM
/*
 * The dense layer on an Arm core with weights stored widened (tw_pulp_fully_connected_s8w16_*,
 * built for Arm, and in plain C for a host build of an Arm target's project, never for the cluster; bindings/pulp/widened.py lays the weights out at codegen, as X-CUBE-AI
 * lays out its own): int16 weight pairs in the order the loop reads them, so a step of 4 inputs
 * loads each row's two pair words (ldrd) ready for smlad and only the input word is unpacked
 * (sxtb16 of lanes 0, 2 and, rotated by 8, of lanes 1, 3: CMSIS-NN's read_and_pad order).
 *
 * Layout of a tile's weights (k_t rows, c_t inputs, S = ceil(c_t / 4) steps): rows in blocks of
 * 4 (the last block the k_t mod 4 rows left, nb rows), a block's words step by step, row by row:
 * word 2·(nb·s + j) = (w[j][4s], w[j][4s + 2]), word 2·(nb·s + j) + 1 = (w[j][4s + 1],
 * w[j][4s + 3]) as (low, high) halfwords, the values past c_t zero. The input's last step of a
 * c_t not a multiple of 4 is the word ending at its last value shifted right
 * (tw_pulp_arm_tail: lanes past c_t zero, no byte past the row read), so c_t >= 4 (the binding's
 * check). A 4-row block: per step one ldr, two sxtb16, four ldrd, eight smlad — 16 MACs.
 */
#include "tw_pulp_matmul_arm.h"

/* One step of row j of a block against the unpacked input (e: lanes 0, 2; o: lanes 1, 3). */
#define TW_PULP_FCW_ROW(acc, w, j, e, o)                                                    \
    acc = __smlad(o, (w)[2 * (j) + 1], __smlad(e, (w)[2 * (j)], acc))

/* One step of the 4-row block in the loop below: the input word's two unpacked halves (e, o),
 * each row's pair words by one ldrd (post-incremented), two smlad per row; a row's words are
 * loaded one row ahead of their smlad (a load's result is ready two cycles on). */
#define TW_PULP_FCW_STEP                                                                    \
    "ldr %[v], [%[x]], #4\n\t"                                                               \
    "ldrd %[p0], %[p1], [%[w]], #8\n\t"                                                      \
    "sxtb16 %[e], %[v]\n\t"                                                                  \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                          \
    "ldrd %[q0], %[q1], [%[w]], #8\n\t"                                                      \
    "smlad %[a0], %[e], %[p0], %[a0]\n\t"                                                    \
    "smlad %[a0], %[v], %[p1], %[a0]\n\t"                                                    \
    "ldrd %[p0], %[p1], [%[w]], #8\n\t"                                                      \
    "smlad %[a1], %[e], %[q0], %[a1]\n\t"                                                    \
    "smlad %[a1], %[v], %[q1], %[a1]\n\t"                                                    \
    "ldrd %[q0], %[q1], [%[w]], #8\n\t"                                                      \
    "smlad %[a2], %[e], %[p0], %[a2]\n\t"                                                    \
    "smlad %[a2], %[v], %[p1], %[a2]\n\t"                                                    \
    "smlad %[a3], %[e], %[q0], %[a3]\n\t"                                                    \
    "smlad %[a3], %[v], %[q1], %[a3]\n\t"

/* acc[0..4) += a 4-row block's weights w (4 rows, len inputs) times the input x: the whole steps
 * two at a time in the loop (15 instructions a step and the loop's compare and branch: 31 for
 * 32 MACs; 14 live values: 4 accumulators, x, w, end, the word and its halves, 4 weight
 * words), an odd last whole step and the partial one in C. Returns w past the block. */
TW_PULP_INLINE const int32_t *tw_pulp_fcw_block4(const int8_t *x, const int32_t *w, int len,
                                                  int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int8_t *end = x + (len & ~7);
    int r = len & 3;
    uint32_t v, e, o;
    if (x != end) {
        uint32_t p0, p1, q0, q1;
        __asm__ volatile(
            "1:\n\t"
            TW_PULP_FCW_STEP
            TW_PULP_FCW_STEP
            "cmp %[x], %[end]\n\t"
            "bne 1b\n\t"
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x),
              [w] "+r"(w), [v] "=&r"(v), [e] "=&r"(e), [p0] "=&r"(p0), [p1] "=&r"(p1),
              [q0] "=&r"(q0), [q1] "=&r"(q1)
            : [end] "r"(end)
            : "cc", "memory");
    }
    /* one word of 4 inputs (v) into the block's 4 rows: their weight pairs at w */
#define TW_PULP_FCW_WORD(v)                                                                 \
    do {                                                                                    \
        e = __sxtb16(v);                                                                    \
        o = tw_pulp_sxtb16_ror8(v);                                                         \
        TW_PULP_FCW_ROW(a0, w, 0, e, o);                                                    \
        TW_PULP_FCW_ROW(a1, w, 1, e, o);                                                    \
        TW_PULP_FCW_ROW(a2, w, 2, e, o);                                                    \
        TW_PULP_FCW_ROW(a3, w, 3, e, o);                                                    \
        w += 8;                                                                             \
    } while (0)
    if (len & 4) {
        v = tw_pulp_lw(x);
        x += 4;
        TW_PULP_FCW_WORD(v);
    }
    if (r) {
        v = tw_pulp_arm_tail(x + r, r);
        TW_PULP_FCW_WORD(v);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    return w;
}
#undef TW_PULP_FCW_STEP
#undef TW_PULP_FCW_WORD

/* acc[0..nb) += the last block's nb (1..3) rows, row by row (its words 2·nb apart a step). */
TW_PULP_INLINE void tw_pulp_fcw_rest(const int8_t *x, const int32_t *w, int len, int nb,
                                     int32_t *acc)
{
    int j, s, steps = len >> 2, r = len & 3;
    for (j = 0; j < nb; j++) {
        const int32_t *wj = w + 2 * j;
        int32_t a = acc[j];
        uint32_t v, e, o;
        for (s = 0; s < steps; s++, wj += 2 * nb) {
            v = tw_pulp_lw(x + 4 * s);
            e = __sxtb16(v);
            o = tw_pulp_sxtb16_ror8(v);
            TW_PULP_FCW_ROW(a, wj, 0, e, o);
        }
        if (r) {
            v = tw_pulp_arm_tail(x + 4 * steps + r, r);
            e = __sxtb16(v);
            o = tw_pulp_sxtb16_ror8(v);
            TW_PULP_FCW_ROW(a, wj, 0, e, o);
        }
        acc[j] = a;
    }
}

/* Row r's blocks of 4 output channels from k on, accumulated from the bias or the partial sums
 * (tw_pulp_acc_init, tw_pulp_finish), then the last block's 1..3 rows; w: the weights of block k.
 * Apart from the common case's loop (dense_w16), in a function of its own per variant
 * (TW_PULP_NOINLINE), so that its accumulators and sink do not widen that loop's stack frame:
 * the stack is RAM the application pays (validate/ram_elf.py). */
TW_PULP_INLINE void dense_w16_general(const tw_pulp_fc_args_t *t, int r, int k, const int32_t *w,
                                      const int mode)
{
    const tw_fc_args_t *a = &t->a;
    tw_pulp_sink_t s = tw_pulp_sink(a->bias, a->psum, a->out, a->out_c, a->acc_flags, &t->rq);
    const int len = a->in_c, kn = a->out_c, blocks = kn & ~3;
    const int8_t *x = a->in + (size_t)r * len;
    int32_t acc[8], q[4];
    int j;
    for (; k < blocks; k += 4) {
        tw_pulp_acc_init(&s, k, 4, r, r, 0, acc);
        for (j = 0; j < 4; j++)
            q[j] = acc[2 * j];
        w = tw_pulp_fcw_block4(x, w, len, q);
        for (j = 0; j < 4; j++)
            acc[2 * j] = q[j];
        tw_pulp_finish(&s, k, 4, r, r, 0, acc, mode);
    }
    if (blocks < kn) {
        int nb = kn - blocks;
        tw_pulp_acc_init(&s, blocks, nb, r, r, 0, acc);
        for (j = 0; j < nb; j++)
            q[j] = acc[2 * j];
        tw_pulp_fcw_rest(x, w, len, nb, q);
        for (j = 0; j < nb; j++)
            acc[2 * j] = q[j];
        tw_pulp_finish(&s, blocks, nb, r, r, 0, acc, mode);
    }
}

typedef void tw_pulp_fcw_general_fn(const tw_pulp_fc_args_t *t, int r, int k, const int32_t *w);

/* The widened dense tile: each input row against the blocks of 4 output channels — in the
 * common case (the whole reduction: from the bias, requantized) four outputs a block stored as
 * one word (tw_pulp_rq4) — and the rest by `general` (dense_w16_general). One core (the Arm
 * modules have one). */
TW_PULP_INLINE void dense_w16(const tw_pulp_fc_args_t *t, int core, const int mode,
                              tw_pulp_fcw_general_fn *general)
{
    const tw_fc_args_t *a = &t->a;
    const int len = a->in_c, kn = a->out_c, blocks = kn & ~3;
    const tw_pulp_clip_t clip = tw_pulp_clip(t->rq.qmin, t->rq.qmax, t->rq.zero_point);
    int r, k;
    if (core != 0)
        return;
    for (r = 0; r < a->n_rows; r++) {
        const int8_t *x = a->in + (size_t)r * len;
        const int32_t *w = (const int32_t *)(const void *)a->w;
        k = 0;
        if (a->acc_flags == TW_ACC_WHOLE) {
            const int32_t *bias = a->bias, *words = t->rq.words;
            int8_t *o = a->out + (size_t)r * kn;
            int32_t q[4];
            for (; k < blocks; k += 4, words += 16, o += 4) {
                if (bias) {
                    q[0] = bias[k];
                    q[1] = bias[k + 1];
                    q[2] = bias[k + 2];
                    q[3] = bias[k + 3];
                } else {
                    q[0] = q[1] = q[2] = q[3] = 0;
                }
                w = tw_pulp_fcw_block4(x, w, len, q);
                tw_pulp_sw(o, tw_pulp_rq4(words, &clip, q[0], q[1], q[2], q[3], mode));
            }
        }
        if (k < kn)
            general(t, r, k, w);
    }
}

#define TW_PULP_DENSE_W16_DEF(name, mode)                                                   \
    static TW_PULP_NOINLINE void dense_w16_general_##name(const tw_pulp_fc_args_t *t, int r, \
                                                          int k, const int32_t *w)          \
    {                                                                                       \
        dense_w16_general(t, r, k, w, mode);                                                \
    }                                                                                       \
    void tw_pulp_fully_connected_s8w16_##name(const tw_pulp_fc_args_t *a, int core_id,      \
                                              int n_cores)                                  \
    {                                                                                       \
        (void)n_cores;                                                                      \
        dense_w16(a, core_id, mode, dense_w16_general_##name);                              \
    }

TW_PULP_VARIANTS(TW_PULP_DENSE_W16_DEF)
#elif !TW_PULP_ASM
/* The widened dense in plain C (a host build of an Arm target's project: tilewise validate's
 * host run), the layout above read halfword by halfword; never built for the cluster. */
#include "tw_pulp_matmul.h"

TW_PULP_INLINE void dense_w16(const tw_pulp_fc_args_t *t, const int mode)
{
    const tw_fc_args_t *a = &t->a;
    tw_pulp_sink_t s = tw_pulp_sink(a->bias, a->psum, a->out, a->out_c, a->acc_flags, &t->rq);
    const int len = a->in_c, kn = a->out_c, steps = (len + 3) >> 2;
    int r, k, j, i;
    for (r = 0; r < a->n_rows; r++) {
        const int8_t *x = a->in + (size_t)r * len;
        const int16_t *w = (const int16_t *)(const void *)a->w;
        for (k = 0; k < kn; k += 4) {
            int nb = kn - k < 4 ? kn - k : 4;
            int32_t acc[8];
            tw_pulp_acc_init(&s, k, nb, r, r, 0, acc);
            for (j = 0; j < nb; j++) {
                uint32_t sum = (uint32_t)acc[2 * j];
                for (i = 0; i < len; i++) {
                    /* value i: step i / 4, halfword (0, 2, 1, 3)[i mod 4] of the row's 4 */
                    int h = ((i & 1) << 1) | ((i >> 1) & 1);
                    sum += (uint32_t)(x[i] * w[4 * (nb * (i >> 2) + j) + h]);
                }
                acc[2 * j] = (int32_t)sum;
            }
            tw_pulp_finish(&s, k, nb, r, r, 0, acc, mode);
            w += 4 * nb * steps;
        }
    }
}

#define TW_PULP_DENSE_W16_DEF(name, mode)                                                   \
    void tw_pulp_fully_connected_s8w16_##name(const tw_pulp_fc_args_t *a, int core_id,      \
                                              int n_cores)                                  \
    {                                                                                       \
        if (core_id == 0)                                                                   \
            dense_w16(a, mode);                                                             \
        (void)n_cores;                                                                      \
    }

TW_PULP_VARIANTS(TW_PULP_DENSE_W16_DEF)
#endif /* TW_PULP_ARM */
