/*
 * common.h: the command-id bookkeeping node of the tpu-kernel API.
 *
 * Compiler-generated glue (tpu-mlir backends) owns CMD_ID_NODE objects and
 * hands them to tpu_set_id_node / tpu_get_id_node / tpu_*_parallel_id_node,
 * which copy the emulator's per-engine command counters into and out of
 * them. Kernels only ever pass a node around as `void *` and never look
 * inside, so the layout below is this SDK's own (field names follow the
 * vendor node; the layout is not binary compatible with it).
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_COMMON_H
#define TPU_SDK_COMMON_H

#ifdef __cplusplus
extern "C" {
#endif

/* Shape and formats of the last GDMA command, kept for profiling. */
typedef struct {
  int n, c, h, w;
  int direction;    /* 0 S2L, 1 L2S, 2 S2S, 3 L2L */
  int src_format;   /* GDMA data format of the source */
  int dest_format;  /* GDMA data format of the destination */
  int setted;       /* non-zero once the fields above describe a command */
} GDMA_CMD_INFO;

/* Profile of the last issued command. */
typedef struct {
  unsigned long long cycle;            /* engine cycles the command took */
  unsigned long long gdma_size;        /* bytes moved (GDMA / SDMA) */
  int gdma_direction;                  /* 0 S2L, 1 L2S, 2 S2S, 3 L2L */
  int src_format;                      /* data format of the source */
  int dst_format;                      /* data format of the destination */
  int is_l2_sram;                      /* the system side is L2 SRAM, not DDR */
  unsigned long long ddr_energy;       /* estimated energy, picojoules */
  unsigned long long l2_sram_energy;   /* estimated energy, picojoules */
  unsigned long long local_mem_energy; /* estimated energy, picojoules */
  unsigned long long compute_energy;   /* estimated energy, picojoules */
  unsigned long long compute_ability;  /* peak operations per cycle */
} INST_PROFILE;

typedef struct cmd_id_node {
  unsigned int bd_cmd_id;    /* TIU (BDC) commands issued */
  unsigned int gdma_cmd_id;  /* GDMA commands issued */
  unsigned int hau_cmd_id;   /* HAU commands issued */
  int in_parallel_state;     /* inside tpu_parallel_start / tpu_parallel_end */
  unsigned long long cycle_count;   /* accumulated cycles */
  unsigned long long cur_op_cycle;  /* cycles of the current operation */
  char cmd_name[16];
  char name_prefix[64];
  GDMA_CMD_INFO gdma_cmd_info;
  INST_PROFILE inst_profile;
  unsigned int sdma_cmd_id;      /* SDMA commands issued */
  unsigned int cdma_cmd_id[10];  /* CDMA commands issued, per port */
} CMD_ID_NODE;

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_COMMON_H */
