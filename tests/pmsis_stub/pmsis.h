/*
 * Minimal stand-in for the PMSIS headers (GAP SDK / pulp-sdk): declarations of exactly the API
 * tilewise's tw_hal_pulp.c, tw_hal_pulp_l3.c and gap_sdk/main.c use (bsp/: the board-support
 * headers of the L3 load), with the real names and argument order, so the PULP HAL can be
 * compiled (-fsyntax-only / -c) on a host without an SDK. The command structure's fields are
 * this stub's own (the real one is opaque to the HAL); tests/c/pmsis_fake.c gives them meaning
 * to run the HAL's DMA decomposition on the host.
 */
#ifndef TILEWISE_PMSIS_STUB_H
#define TILEWISE_PMSIS_STUB_H

#include <stdint.h>

typedef enum {
    PI_CL_DMA_DIR_LOC2EXT = 0,
    PI_CL_DMA_DIR_EXT2LOC = 1
} pi_cl_dma_dir_e;

typedef struct pi_cl_dma_cmd_s {
    uint32_t ext, loc, size, stride, length;
    int dir, is_2d, pending;
} pi_cl_dma_cmd_t;

void pi_cl_dma_cmd(uint32_t ext, uint32_t loc, uint32_t size, pi_cl_dma_dir_e dir,
                   pi_cl_dma_cmd_t *cmd);
void pi_cl_dma_cmd_2d(uint32_t ext, uint32_t loc, uint32_t size, uint32_t stride,
                      uint32_t length, pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd);
void pi_cl_dma_cmd_wait(pi_cl_dma_cmd_t *cmd);

void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg);
void pi_cl_team_barrier(void);
int pi_cl_team_nb_cores(void);
int pi_core_id(void);

/* STUB (tilewise tests): a device handle; the real one is the SDK's, opaque to tilewise code */
struct pi_device {
    void *config;
    void *data;
};

/* cluster-side RAM (L3) reads and writes: tw_hal_pulp_l3.c */
typedef struct pi_cl_ram_req_s {
    uint32_t ram_addr, size;
    void *addr;
    int pending;
} pi_cl_ram_req_t;

void pi_cl_ram_read(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                    pi_cl_ram_req_t *req);
void pi_cl_ram_read_wait(pi_cl_ram_req_t *req);
void pi_cl_ram_write(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                     pi_cl_ram_req_t *req);
void pi_cl_ram_write_wait(pi_cl_ram_req_t *req);

/*
 * STUB (tilewise tests): the fabric-controller side gap_sdk/main.c uses — kickoff and exit,
 * device open from a configuration, the cluster device and its tasks, cluster L1 placement.
 * Real names and argument order; the structures hold only the fields tilewise code sets.
 */
#define PI_CL_L1 __attribute__((section(".stub_cl_l1")))

int pmsis_kickoff(void *arg);
void pmsis_exit(int err);
void pi_open_from_conf(struct pi_device *device, void *conf);

struct pi_cluster_conf {
    int id;
};
void pi_cluster_conf_init(struct pi_cluster_conf *conf);
int pi_cluster_open(struct pi_device *device);
int pi_cluster_close(struct pi_device *device);

struct pi_cluster_task {
    void (*entry)(void *arg);
    void *arg;
    uint32_t stack_size;
    uint32_t slave_stack_size;
};
struct pi_cluster_task *pi_cluster_task(struct pi_cluster_task *task, void (*entry)(void *arg),
                                        void *arg);
int pi_cluster_send_task_to_cl(struct pi_device *device, struct pi_cluster_task *task);

#endif /* TILEWISE_PMSIS_STUB_H */
