/*
 * tw_hal_ne16_pulp_open.c — the NE16 jobs of tw_ne16.h on the real engine: GVSoC's NE16 in the
 * pulp-open cluster (GVSOC_NE16=1, ../shared/tools/gvsoc README "NE16 on pulp-open"), driven by
 * cluster core 0 through its registers. The pulp-open-ne16 firmware builds tw_ne16.c with
 * -DTW_NE16_ENGINE, which leaves its host dispatch out; the task set-up and the functional model
 * (tw_ne16_run, the host build's NE16) stay there.
 *
 * Registers (offsets from 0x10201000; the README's tables, from pulp-nnx's HWPE layout): ACQUIRE
 * (+0x04) returns a job id < 256 once a job context is free, the 24 job registers (+0x20 + 4·i)
 * of that context are written, TRIGGER (+0x00) commits and starts the job; STATUS (+0x0C) bit 0 /
 * bit 8 says context 0 / 1 still holds a job (contexts alternate with the job id). FINISHED and
 * SOFT_CLEAR are not decoded by the model and not used. Completion is polled on STATUS.
 *
 * A job (tw_ne16.h's task: dense HWC tiles in L1, NE16 masks its addresses to L1):
 *   INFEAT_PTR   the top-left of the padded input, in − pad_t·row − pad_l·in_c (the padding is
 *                synthesized from PADDING's value, never read);
 *   strides      input: in_c per pixel, in_w·in_c per row; output: 32, out_k·bytes per pixel,
 *                out_w·that per row (bytes 1 after norm-quant, 4 for the int32 accumulators);
 *                weights (the binding's bit planes, bindings/ne16/arith.py `pack`): 3×3 18 and
 *                18·bits·⌈in_c/16⌉, 1×1 2·bits and 2·bits·⌈in_c/16⌉, depthwise 18 and 0;
 *   subtiles     nb = ⌈n/t⌉, rem = (n−1) mod t + 1 with t = 32 output channels (16 depthwise),
 *                16 input channels, 3 output rows / columns; input rem = output rem + 2 − the
 *                bottom / right padding (1×1: the output rem);
 *   CONF0        weight bits − 1, the mode (3×3, 3×3 depthwise, 1×1), the layer-wise weight offset
 *                (WEIGHT_OFFSET = −2^(bits−1): weights stored as w + 2^(bits−1)), stride 2×2; int32
 *                output, or norm-quant with 32-bit scales, a per-channel int32 bias, one shift
 *                and int8 output (identity) or ReLU (uint8 output).
 * tw_ne16.h's ReLU with int8 output clamps at 127; NE16's ReLU output is uint8 (up to 255), so
 * after such a job core 0 clamps its bytes at 127 (a pass over the outputs: the layer's int8
 * [0, 127] clamp, normquant.py).
 *
 * Cycles: each job's trigger time is kept; the wait that sees it done adds now − trigger to the
 * NE16 cycle counter (tw_ne16_cycles) — the job's own cycles (±8 of polling) when the wait found
 * it still running, an upper bound when it had ended before the wait began (tw_ne16_early counts
 * those jobs). The firmware prints them per layer (TW_NE16 lines, firmware/main.c). Built with
 * -DTW_NE16_TIMED (TILEWISE_NE16_TIMED=1, platforms/pulp_open.py), each dispatch waits for its
 * job at once: every job's cycles are its own, NE16 no longer overlaps the cluster's work (the
 * measurement build the NE16 cost model is fitted on, bench/calibrate_ne16.py).
 *
 * A network with no layer on NE16 has no tw_ne16/ folder: then only the counters are defined
 * (zero), for the firmware's TW_NE16 line.
 */
#include <stddef.h>
#include <stdint.h>

#if !__has_include("tw_ne16.h")
long tw_ne16_jobs(void) { return 0; }
uint32_t tw_ne16_cycles(void) { return 0; }
long tw_ne16_early(void) { return 0; }
#else
#include "tw_ne16.h"

#define NE16_BASE 0x10201000u
#define NE16_TRIGGER 0x00
#define NE16_ACQUIRE 0x04
#define NE16_STATUS 0x0C
#define NE16_JOB_REG(i) (0x20 + 4 * (i))

enum {
    REG_WEIGHTS_PTR, REG_INFEAT_PTR, REG_OUTFEAT_PTR, REG_SCALE_PTR, REG_SCALE_SHIFT_PTR,
    REG_SCALE_BIAS_PTR, REG_INFEAT_D0, REG_INFEAT_D1, REG_INFEAT_D2, REG_OUTFEAT_D0,
    REG_OUTFEAT_D1, REG_OUTFEAT_D2, REG_WEIGHTS_D0, REG_WEIGHTS_D1, REG_WEIGHTS_D2,
    REG_SUBTILE_REM0, REG_SUBTILE_REM1, REG_SUBTILE_REM2, REG_SUBTILE_NB0, REG_SUBTILE_NB1,
    REG_PADDING, REG_WEIGHT_OFFSET, REG_FILTER_MASK, REG_CONF0, REG_COUNT
};

#define CONF0_NORM_BIAS (1u << 25)
#define CONF0_IDENTITY (1u << 23)          /* int8 output; else ReLU and uint8 output */
#define CONF0_OUT_32BIT (2u << 21)
#define CONF0_SHIFT(s) (((uint32_t)(s) & 0x1fu) << 16)
#define CONF0_WOFFS_LAYER (1u << 15)
#define CONF0_SCALE_32BIT (2u << 12)
#define CONF0_STRIDE2 (1u << 8)
#define CONF0_MODE_DW (1u << 5)
#define CONF0_MODE_1X1 (2u << 5)
#define CONF0_NORM_QUANT (1u << 4)
#define CONF0_QW(b) (((uint32_t)(b) - 1u) & 7u)

#define TW_L1 __attribute__((section(".l1")))

/* jobs in flight at most (NE16's two job contexts) */
#define SLOTS 2

typedef struct {
    uint32_t context_bit;      /* STATUS bit of the job's context */
    uint32_t start;            /* mcycle at its trigger */
    int8_t *clamp;             /* ReLU with int8 output: bytes to clamp at 127 after it */
    uint32_t clamp_n;
} slot_t;

static TW_L1 long g_jobs;              /* jobs dispatched: ids [0, g_jobs) */
static TW_L1 long g_done;              /* jobs seen complete: ids [0, g_done) */
static TW_L1 slot_t g_slot[SLOTS];
static TW_L1 uint32_t g_cycles;        /* NE16 cycles of the completed jobs (header comment) */
static TW_L1 long g_early;             /* jobs that ended before their wait began */

static inline uint32_t rd(uint32_t off)
{
    return *(volatile uint32_t *)(NE16_BASE + off);
}

static inline void wr(uint32_t off, uint32_t v)
{
    *(volatile uint32_t *)(NE16_BASE + off) = v;
}

static inline uint32_t cycles(void)
{
    uint32_t c;
    __asm__ volatile("csrr %0, mcycle" : "=r"(c));
    return c;
}

static inline uint32_t blocks(uint32_t n, uint32_t t) { return (n + t - 1) / t; }
static inline uint32_t rem(uint32_t n, uint32_t t) { return (n - 1) % t + 1; }

/* The 24 job registers of task `t` (header comment). */
static void job_regs(const tw_ne16_task_t *t, uint32_t *r)
{
    const tw_job_geom_t *g = &t->geom;
    const int k1 = t->kind == TW_NE16_CONV1X1, dw = t->kind == TW_NE16_DEPTHWISE3X3;
    const uint32_t bits = (uint32_t)t->w_bits, nb_ki = blocks((uint32_t)g->in_c, 16);
    const uint32_t out_bytes = t->norm_quant ? 1u : 4u;
    const uint32_t x_row = (uint32_t)g->in_w * (uint32_t)g->in_c;
    const uint32_t y_px = (uint32_t)g->out_k * out_bytes;
    const uint32_t tp_out = dw ? 16u : 32u;
    const uint32_t rem_ho = rem((uint32_t)g->out_h, 3), rem_wo = rem((uint32_t)g->out_w, 3);
    const uint32_t rem_hi = (k1 ? rem_ho : rem_ho + 2);
    const uint32_t rem_wi = (k1 ? rem_wo : rem_wo + 2);
    uint32_t conf = CONF0_QW(bits) | CONF0_WOFFS_LAYER |
                    (k1 ? CONF0_MODE_1X1 : dw ? CONF0_MODE_DW : 0u) |
                    (g->stride == 2 ? CONF0_STRIDE2 : 0u);
    int i;
    for (i = 0; i < REG_COUNT; i++)
        r[i] = 0;
    r[REG_WEIGHTS_PTR] = (uint32_t)(uintptr_t)t->w;
    r[REG_INFEAT_PTR] = (uint32_t)(uintptr_t)t->in - (uint32_t)g->pad_t * x_row -
                        (uint32_t)g->pad_l * (uint32_t)g->in_c;
    r[REG_OUTFEAT_PTR] = (uint32_t)(uintptr_t)t->out;
    r[REG_INFEAT_D0] = (uint32_t)g->in_c;
    r[REG_INFEAT_D1] = x_row;
    r[REG_OUTFEAT_D0] = 32;
    r[REG_OUTFEAT_D1] = y_px;
    r[REG_OUTFEAT_D2] = (uint32_t)g->out_w * y_px;
    r[REG_WEIGHTS_D0] = k1 ? 2 * bits : 18;
    r[REG_WEIGHTS_D1] = dw ? 0 : (k1 ? 2 * bits : 18 * bits) * nb_ki;
    r[REG_SUBTILE_REM0] = rem((uint32_t)g->out_k, tp_out) << 16 | rem((uint32_t)g->in_c, 16);
    r[REG_SUBTILE_REM1] = rem_ho << 16 | rem_wo;
    r[REG_SUBTILE_REM2] = rem_hi << 16 | rem_wi;
    r[REG_SUBTILE_NB0] = blocks((uint32_t)g->out_k, tp_out) << 16 | nb_ki;
    r[REG_SUBTILE_NB1] = blocks((uint32_t)g->out_h, 3) << 16 | blocks((uint32_t)g->out_w, 3);
    r[REG_PADDING] = ((uint32_t)g->pad_t & 0xfu) << 28 | ((uint32_t)g->pad_r & 0xfu) << 24 |
                     ((uint32_t)g->pad_b & 0xfu) << 20 | ((uint32_t)g->pad_l & 0xfu) << 16 |
                     (uint32_t)t->pad_value;
    r[REG_WEIGHT_OFFSET] = (uint32_t)t->w_offset;
    if (t->norm_quant) {
        r[REG_SCALE_PTR] = (uint32_t)(uintptr_t)t->scale;
        r[REG_SCALE_BIAS_PTR] = (uint32_t)(uintptr_t)t->bias;
        conf |= CONF0_NORM_QUANT | CONF0_SCALE_32BIT | CONF0_SHIFT(t->shift) |
                (t->bias ? CONF0_NORM_BIAS : 0u) | (t->relu ? 0u : CONF0_IDENTITY);
    } else {
        conf |= CONF0_OUT_32BIT;
    }
    r[REG_CONF0] = conf;
}

static void clamp127(int8_t *y, uint32_t n);

/* The 24 job registers r into the acquired context: one sw each, no read back. */
static inline void store_regs(const uint32_t *r)
{
    volatile uint32_t *d = (volatile uint32_t *)(NE16_BASE + NE16_JOB_REG(0));
#define TW_NE16_ST4(i) d[i] = r[i]; d[i + 1] = r[i + 1]; d[i + 2] = r[i + 2]; d[i + 3] = r[i + 3];
    TW_NE16_ST4(0) TW_NE16_ST4(4) TW_NE16_ST4(8) TW_NE16_ST4(12) TW_NE16_ST4(16) TW_NE16_ST4(20)
#undef TW_NE16_ST4
}

/* Acquires a context, writes the job registers r, commits and starts the job (its output
 * clamped at 127 after it when `clamp`, n bytes); returns the job id. */
static int commit(const uint32_t *r, int8_t *clamp, uint32_t clamp_n)
{
    uint32_t id;
    slot_t *s;
    if (g_jobs - g_done >= SLOTS)       /* both contexts busy: wait for the oldest job */
        tw_ne16_wait((int)g_done);
    while ((id = rd(NE16_ACQUIRE)) >= 256)
        ;
    store_regs(r);
    s = &g_slot[g_jobs & (SLOTS - 1)];
    s->context_bit = (id & 1u) ? 1u << 8 : 1u;
    s->clamp = clamp;
    s->clamp_n = clamp_n;
    s->start = cycles();
    wr(NE16_TRIGGER, 0);
#ifdef TW_NE16_TIMED
    {   /* polled right after the trigger, in the same code: no instruction fetch between */
        int polls = 0;
        while (rd(NE16_STATUS))
            polls++;
        g_cycles += cycles() - s->start;
        if (polls == 0)
            g_early++;
        if (s->clamp)
            clamp127(s->clamp, s->clamp_n);
        g_done = ++g_jobs;
        return (int)g_jobs - 1;
    }
#else
    return (int)g_jobs++;
#endif
}

int tw_ne16_dispatch(const tw_ne16_task_t *t)
{
    uint32_t r[REG_COUNT];
    job_regs(t, r);
    return commit(r, t->norm_quant && t->relu && t->out_signed ? (int8_t *)t->out : NULL,
                  (uint32_t)tw_job_out_elems(&t->geom));
}

/* Image k (0 first, 1 middle, 2 last) of the tile's row jobs: job 0, job 1, job jobs − 1. */
static void rows_image(tw_ne16_rows_t *p, int k)
{
    const int j = k == 0 ? 0 : k == 1 ? 1 : p->jobs - 1, r0 = j * p->rows;
    const int h = j + 1 < p->jobs ? p->rows : p->task.geom.out_h - r0;
    tw_ne16_task_t sub;
    tw_ne16_task_rows(&p->task, r0, h, NULL, &sub);
    job_regs(&sub, p->img[k]);
    p->built |= 1 << k;
}

void tw_ne16_rows_prepare(tw_ne16_rows_t *p)
{
    rows_image(p, 0);                   /* the others while NE16 runs job 0 */
}

/* Row job j (tw_ne16.h): the tile's image of its kind with its output pointer and, a middle
 * job, its input pointer (middle jobs read rows·stride input rows further each, no padding:
 * tw_job_rows); images not built yet by tw_ne16_rows_prepare are built when needed, images 1 and
 * 2 while NE16 runs job 0. Jobs are dispatched in order. */
int tw_ne16_dispatch_rows(tw_ne16_rows_t *p, int j, void *out)
{
    const int k = j == 0 ? 0 : j + 1 == p->jobs ? 2 : 1;
    uint32_t *r = p->img[k];
    int id;
    if (!(p->built & (1 << k)))
        rows_image(p, k);
    if (k == 1 && j > 1)
        r[REG_INFEAT_PTR] += p->in_step;
    r[REG_OUTFEAT_PTR] = (uint32_t)(uintptr_t)out;
    id = commit(r, NULL, 0);
    if (j == 0) {
        if (p->jobs > 2 && !(p->built & 2))
            rows_image(p, 1);
        if (p->jobs > 1 && !(p->built & 4))
            rows_image(p, 2);
    }
    return id;
}

/* Clamps n bytes of NE16's uint8 ReLU output at 127, four at a time where aligned. */
static void clamp127(int8_t *y, uint32_t n)
{
    uint32_t i = 0;
    for (; i < n && ((uintptr_t)(y + i) & 3u); i++)
        if (y[i] < 0) y[i] = 127;
    for (; i + 4 <= n; i += 4) {
        uint32_t *w = (uint32_t *)(void *)(y + i), v = *w, hi = v & 0x80808080u;
        if (hi)
            *w = (v & ~(hi | hi >> 1 | hi >> 2 | hi >> 3 | hi >> 4 | hi >> 5 | hi >> 6 | hi >> 7)) |
                 (hi >> 1 | hi >> 2 | hi >> 3 | hi >> 4 | hi >> 5 | hi >> 6 | hi >> 7);
    }
    for (; i < n; i++)
        if (y[i] < 0) y[i] = 127;
}

void tw_ne16_wait(int id)
{
    while (g_done <= (long)id && g_done < g_jobs) {      /* jobs complete in order */
        slot_t *s = &g_slot[g_done % SLOTS];
        /* the last job in flight: NE16 idle; else the job's context free */
        uint32_t mask = g_done + 1 == g_jobs ? 0xFFFFFFFFu : s->context_bit, now;
        int polls = 0;
        while (rd(NE16_STATUS) & mask)
            polls++;
        now = cycles();
        g_cycles += now - s->start;
        if (polls == 0)
            g_early++;
        if (s->clamp)
            clamp127(s->clamp, s->clamp_n);
        g_done++;
    }
}

long tw_ne16_jobs(void)
{
    return g_jobs;
}

uint32_t tw_ne16_cycles(void)
{
    return g_cycles;
}

long tw_ne16_early(void)
{
    return g_early;
}
#endif
