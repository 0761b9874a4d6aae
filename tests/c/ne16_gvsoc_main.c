/*
 * Firmware program of tests/test_ne16_gvsoc.py: the cluster's side of an NE16 layer
 * (bindings/ne16/c/tw_ne16_kernels.c: tw_ne16_requant_s8_<variant>, tw_ne16_to_u8) on the
 * pulp-open cluster (GVSoC), case by case against golden outputs computed in Python, on the
 * project's bare-metal runtime (crt0, tw_fw.c, tw_hal_pulp_open.c's fork). GVSoC has no NE16: the
 * int32 accumulators a job would write are the case's data.
 *
 * cases.h (generated) holds TW_CASES cases: kind (REQUANT, TO_U8, NOP), variant, n, k, the
 * zero point and clamp, the buffers (L2 data copied into the L1 arena, word-aligned) and the
 * expected output bytes. Each case runs on the core counts of its mask; a line per run:
 *     TW_CASE <case> <cores> <mismatching bytes> <cycles of the fork>
 * then TW_DONE. Marshalling only: the arithmetic is the kernels'.
 */
#include <stdint.h>
#include <string.h>

#include "tw_fw.h"
#include "tw_hal.h"
#include "tw_ne16_kernels.h"

typedef struct {
    const void *data;          /* L2 contents, or NULL (output: 0x5A) */
    int bytes;
} tw_buf_t;

/* REQUANT bufs: out, acc, bias, words; TO_U8 bufs: out, x */
typedef struct {
    int kind, variant, n, k;
    int32_t zero_point, qmin, qmax;
    const tw_buf_t *bufs;
    int nbuf;
    const int8_t *want;
    int cores_mask;
} tw_case_t;

enum { REQUANT, TO_U8, NOP };

#include "cases.h"

#define ARENA 49152
static TW_FW_L1 int8_t g_arena[ARENA] __attribute__((aligned(4)));
static int8_t *g_buf[4];
static const tw_case_t *g_case;
static tw_ne16_rq_args_t g_rq;

#define TW_NE16_RQ_FN(name, mode) tw_ne16_requant_s8_##name,
static void (*const g_requant[])(const tw_ne16_rq_args_t *, int, int) = {
    TW_PULP_VARIANTS(TW_NE16_RQ_FN)
    tw_ne16_requant_s8_mulh, tw_ne16_requant_s8_mulh,   /* mulh_tflite, mulh_tflite_right */
};

static void job(void *arg)
{
    int core = tw_core_id(), cores = tw_core_count();
    tw_ne16_rq_args_t r = g_rq;      /* on the core's stack, as a layer's compute() has it */
    (void)arg;
    if (g_case->kind == REQUANT)
        g_requant[g_case->variant](&r, core, cores);
    else if (g_case->kind == TO_U8)
        tw_ne16_to_u8_part((uint8_t *)g_buf[0], g_buf[1], g_case->n, core, cores);
}

static int place(const tw_case_t *c)
{
    int i, off = 0;
    for (i = 0; i < c->nbuf; i++) {
        int n = (c->bufs[i].bytes + 3) & ~3;
        if (off + n > ARENA)
            return 0;
        g_buf[i] = g_arena + off;
        if (c->bufs[i].data)
            memcpy(g_buf[i], c->bufs[i].data, (size_t)c->bufs[i].bytes);
        else
            memset(g_buf[i], 0x5A, (size_t)n);
        off += n;
    }
    if (c->kind == REQUANT) {
        g_rq.out = g_buf[0];
        g_rq.acc = (const int32_t *)(const void *)g_buf[1];
        g_rq.bias = (const int32_t *)(const void *)g_buf[2];
        g_rq.rq.words = (const int32_t *)(const void *)g_buf[3];
        g_rq.rq.n = c->k;
        g_rq.rq.zero_point = c->zero_point;
        g_rq.rq.qmin = c->qmin;
        g_rq.rq.qmax = c->qmax;
        g_rq.n = c->n;
        g_rq.k = c->k;
    }
    return 1;
}

int tw_fw_main(void)
{
    int i, cores;
    for (i = 0; i < TW_CASES; i++) {
        const tw_case_t *c = &tw_cases[i];
        for (cores = 1; cores <= 8; cores++) {
            uint32_t t0, t1, bad = 0;
            int j;
            if (!(c->cores_mask & (1 << cores)))
                continue;
            if (!place(c))
                return 2;
            g_case = c;
            t0 = tw_fw_cycles();
            tw_fork(cores, job, NULL);
            t1 = tw_fw_cycles();
            for (j = 0; j < c->bufs[0].bytes; j++)
                bad += g_buf[0][j] != c->want[j];
            tw_fw_puts("TW_CASE ");
            tw_fw_put_uint((uint32_t)i);
            tw_fw_puts(" ");
            tw_fw_put_uint((uint32_t)cores);
            tw_fw_puts(" ");
            tw_fw_put_uint(bad);
            tw_fw_puts(" ");
            tw_fw_put_uint(t1 - t0);
            tw_fw_puts("\n");
        }
    }
    tw_fw_puts("TW_DONE\n");
    return 0;
}
