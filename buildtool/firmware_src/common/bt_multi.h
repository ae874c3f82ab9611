/* The models of a multi-model firmware (generated models.c fills the table): each one's entry
   points, and the order the harness (multi_main.c) invokes them in. */
#ifndef BT_MULTI_H
#define BT_MULTI_H
#include <stdint.h>

typedef struct {
  int (*init)(void);
  int (*invoke)(void);
  void *(*input)(int i);
  void *(*output)(int i);
  uint32_t (*input_bytes)(int i);
  uint32_t (*output_bytes)(int i);
  int num_inputs, num_outputs;
} bt_model_entry;

extern const bt_model_entry bt_models[];
extern const int bt_num_models;
extern const int bt_run_order[];  /* model indices, one per invocation */
extern const int bt_num_runs;
extern const uint32_t bt_joint_arena_bytes;
#endif
