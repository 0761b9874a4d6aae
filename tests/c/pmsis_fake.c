/*
 * A host fake of the PMSIS functions declared in tests/pmsis_stub/pmsis.h, so that
 * tests/test_hal.py can run tw_hal_pulp.c's DMA decomposition on the host: commands are recorded
 * at issue and executed at their wait (cluster-DMA semantics: the external side strided by
 * `stride` in lines of `length` bytes for 2D, the local side contiguous). Team functions run a
 * single core. Addresses are 32-bit on PULP: the test keeps every buffer inside one 4 GiB window
 * whose upper bits it registers with pmsis_fake_set_base.
 */
#include <stdint.h>
#include <string.h>

#include "pmsis.h"

static uintptr_t g_high;
static int g_in_flight, g_max_in_flight, g_commands, g_commands_2d, g_bad;
static uint32_t g_max_size;

void pmsis_fake_set_base(const void *p) { g_high = (uintptr_t)p & ~(uintptr_t)0xFFFFFFFFu; }
int pmsis_fake_commands(void) { return g_commands; }
int pmsis_fake_commands_2d(void) { return g_commands_2d; }
int pmsis_fake_in_flight(void) { return g_in_flight; }
int pmsis_fake_max_in_flight(void) { return g_max_in_flight; }
int pmsis_fake_bad(void) { return g_bad; }
uint32_t pmsis_fake_max_size(void) { return g_max_size; }
void pmsis_fake_reset(void) { g_in_flight = g_max_in_flight = g_commands = g_commands_2d = g_bad = 0; g_max_size = 0; }

static uint8_t *ptr(uint32_t a) { return (uint8_t *)(g_high | (uintptr_t)a); }

static void record(pi_cl_dma_cmd_t *cmd, uint32_t ext, uint32_t loc, uint32_t size,
                   uint32_t stride, uint32_t length, pi_cl_dma_dir_e dir, int is_2d)
{
    if (cmd->pending) g_bad++;                 /* reusing a command still in flight */
    cmd->ext = ext; cmd->loc = loc; cmd->size = size; cmd->stride = stride;
    cmd->length = length; cmd->dir = (int)dir; cmd->is_2d = is_2d; cmd->pending = 1;
    g_commands++;
    g_commands_2d += is_2d;
    if (size > g_max_size) g_max_size = size;
    if (++g_in_flight > g_max_in_flight) g_max_in_flight = g_in_flight;
}

void pi_cl_dma_cmd(uint32_t ext, uint32_t loc, uint32_t size, pi_cl_dma_dir_e dir,
                   pi_cl_dma_cmd_t *cmd)
{
    record(cmd, ext, loc, size, 0, size, dir, 0);
}

void pi_cl_dma_cmd_2d(uint32_t ext, uint32_t loc, uint32_t size, uint32_t stride,
                      uint32_t length, pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd)
{
    if (length == 0 || size % length != 0) g_bad++;
    record(cmd, ext, loc, size, stride, length, dir, 1);
}

void pi_cl_dma_cmd_wait(pi_cl_dma_cmd_t *cmd)
{
    uint32_t done = 0, line = 0;
    if (!cmd->pending) { g_bad++; return; }
    while (done < cmd->size) {
        uint8_t *ext = ptr(cmd->ext) + (cmd->is_2d ? (size_t)line * cmd->stride : 0);
        uint8_t *loc = ptr(cmd->loc) + done;
        uint32_t n = cmd->length;
        if (cmd->dir == PI_CL_DMA_DIR_EXT2LOC) memcpy(loc, ext, n);
        else memcpy(ext, loc, n);
        done += n;
        line++;
    }
    cmd->pending = 0;
    g_in_flight--;
}

void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg) { (void)nb_cores; entry(arg); }
void pi_cl_team_barrier(void) {}
int pi_cl_team_nb_cores(void) { return 1; }
int pi_core_id(void) { return 0; }
