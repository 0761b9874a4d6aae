/*
 * main.c — the GAP SDK (PMSIS) program of a tilewise project for GAP8 / GAP9 (gap_sdk/Makefile).
 *
 * The fabric controller (fc_main):
 *   1. with an L3 image (TW_NETWORK_L3_BYTES > 0): opens the RAM device, copies weights_l3.bin
 *      into it at TW_L3_BASE (network.h) — load_l3() reads the file from the flash's read-only
 *      file system, where the Makefile puts it (READFS_FILES); define TW_L3_LOAD to the name of
 *      your own `int fn(struct pi_device *ram)` (returning 0 on success) to load it another way —
 *      and gives the device to tw_hal_pulp_set_ram() (tw_hal_pulp.h);
 *   2. opens the cluster (pi_cluster_open) and, for each sample of inputs.c (TW_FW_INPUTS, one
 *      input per network input, as tw_network_run takes them; generate embeds one at the inputs'
 *      zero points), sends a cluster
 *      task (cluster_run) that runs tw_network_run on the cluster cores: its layers fork the
 *      team themselves (tw_fork in tw_hal_pulp.c), with the L1 arena in the cluster's L1
 *      (TW_L1_SECTION, PI_CL_L1 unless defined) and the L2 arena in L2 (TW_L2_SECTION);
 *   3. prints each inference's outputs as "TW_OUT <n> <bytes in hex>" (every output of
 *      tw_network_run, back to back in its order), then "TW_DONE", and exits with 0, or 1
 *      when the network returned an error (a failure to load L3 prints TW_TRAP and exits 1).
 * The cluster task's stacks: TW_CL_STACK bytes for the core that runs the network, TW_CL_SLAVE_STACK
 * for the others (define either to change it).
 */
#include <stdint.h>
#include <stdio.h>

#include "pmsis.h"

#ifndef TW_L1_SECTION
#define TW_L1_SECTION PI_CL_L1
#endif

#include "inputs.h"
#include "network.h"
#include "tw_hal_pulp.h"

#if TW_NETWORK_L3_BYTES
#include "bsp/flash.h"
#include "bsp/fs.h"
#include "bsp/fs/readfs.h"
#include "bsp/ram.h"
#endif

#ifndef TW_CL_STACK
#define TW_CL_STACK 2048
#endif
#ifndef TW_CL_SLAVE_STACK
#define TW_CL_SLAVE_STACK 1024
#endif

static int8_t l1_arena[TW_NETWORK_L1_BYTES] TW_L1_SECTION __attribute__((aligned(4)));
static int8_t l2_arena[TW_NETWORK_L2_BYTES] TW_L2_SECTION __attribute__((aligned(4)));
/* the outputs of one inference, back to back in tw_network_run's order */
static int8_t output[TW_NETWORK_OUTPUT_TOTAL_BYTES];

/* what a cluster task runs on, and what it returns */
typedef struct {
    const int8_t *const *inputs;   /* one pointer per network input (inputs.c's table) */
    int status;
} tw_gap_run_t;

#if TW_NETWORK_L3_BYTES
static struct pi_device g_ram;

#ifdef TW_L3_LOAD
int TW_L3_LOAD(struct pi_device *ram);
#else
#ifndef TW_L3_CHUNK
#define TW_L3_CHUNK 1024
#endif
static int8_t g_chunk[TW_L3_CHUNK] __attribute__((aligned(4)));

/* weights_l3.bin from the flash's read-only file system into the RAM at TW_L3_BASE, by
 * TW_L3_CHUNK-byte pieces through an L2 buffer; 0 on success. */
static int load_l3(struct pi_device *ram)
{
    struct pi_device flash, fs;
    struct pi_default_flash_conf flash_conf;
    struct pi_readfs_conf fs_conf;
    pi_fs_file_t *file;
    uint32_t done = 0;

    pi_default_flash_conf_init(&flash_conf);
    pi_open_from_conf(&flash, &flash_conf);
    if (pi_flash_open(&flash))
        return -1;
    pi_readfs_conf_init(&fs_conf);
    fs_conf.fs.flash = &flash;
    pi_open_from_conf(&fs, &fs_conf);
    if (pi_fs_mount(&fs))
        return -1;
    file = pi_fs_open(&fs, "weights_l3.bin", 0);
    if (file == NULL || file->size != (uint32_t)TW_NETWORK_L3_BYTES)
        return -1;
    while (done < (uint32_t)TW_NETWORK_L3_BYTES) {
        uint32_t n = (uint32_t)TW_NETWORK_L3_BYTES - done;
        if (n > TW_L3_CHUNK)
            n = TW_L3_CHUNK;
        if (pi_fs_read(file, g_chunk, n) != (int)n)
            return -1;
        pi_ram_write(ram, (uint32_t)TW_L3_BASE + done, g_chunk, n);
        done += n;
    }
    pi_fs_close(file);
    pi_fs_unmount(&fs);
    pi_flash_close(&flash);
    return 0;
}
#define TW_L3_LOAD load_l3
#endif

static int open_l3(void)
{
    struct pi_default_ram_conf conf;
    pi_default_ram_conf_init(&conf);
    pi_open_from_conf(&g_ram, &conf);
    if (pi_ram_open(&g_ram) || TW_L3_LOAD(&g_ram) != 0)
        return -1;
    tw_hal_pulp_set_ram(&g_ram);
    return 0;
}
#endif

/* The cluster task: one inference on the cluster (this core is the team's core 0). */
static void cluster_run(void *arg)
{
    tw_gap_run_t *run = (tw_gap_run_t *)arg;
    int8_t *outs[TW_NETWORK_OUTPUTS];
    tw_network_output_pointers(output, outs);
    /* tw_network_run(inputs…, outputs…, l1, l2[, l3]) (network.h) */
#if TW_NETWORK_L3_BYTES
    run->status = TW_NETWORK_RUN_IO(run->inputs, outs, l1_arena, l2_arena,
                                    (void *)(uintptr_t)TW_L3_BASE);
#else
    run->status = TW_NETWORK_RUN_IO(run->inputs, outs, l1_arena, l2_arena);
#endif
}

static void fc_main(void)
{
    struct pi_device cluster;
    struct pi_cluster_conf conf;
    struct pi_cluster_task task;
    tw_gap_run_t run;
    int n, i, status = 0;

#if TW_NETWORK_L3_BYTES
    if (open_l3() != 0) {
        printf("TW_TRAP cannot load weights_l3.bin into L3\n");
        pmsis_exit(1);
    }
#endif
    pi_cluster_conf_init(&conf);
    conf.id = 0;
    pi_open_from_conf(&cluster, &conf);
    if (pi_cluster_open(&cluster)) {
        printf("TW_TRAP cannot open the cluster\n");
        pmsis_exit(1);
    }
#ifdef TW_NETWORK_STATE_BYTES
    tw_network_reset(l2_arena);   /* the inputs are consecutive inferences from a zero state */
#endif
    for (n = 0; n < TW_FW_INPUTS; n++) {
        run.inputs = tw_fw_input_table[n];
        run.status = -1;
        pi_cluster_task(&task, cluster_run, &run);
        task.stack_size = TW_CL_STACK;
        task.slave_stack_size = TW_CL_SLAVE_STACK;
        pi_cluster_send_task_to_cl(&cluster, &task);
        printf("TW_OUT %d ", n);
        for (i = 0; i < TW_NETWORK_OUTPUT_TOTAL_BYTES; i++)
            printf("%02x", (unsigned)(uint8_t)output[i]);
        printf("\n");
        if (run.status != 0)
            status = 1;
    }
    pi_cluster_close(&cluster);
    printf("TW_DONE\n");
    pmsis_exit(status);
}

int main(void)
{
    return pmsis_kickoff((void *)fc_main);
}
