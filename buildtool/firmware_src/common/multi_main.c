/* Multi-model firmware harness: check every model's weights image (and reset its state), then for
   each entry of bt_run_order read that model's inputs, invoke it and write its outputs. The models
   share one arena (bt_arena); each one's state survives the others' runs. */
#include "bt_platform.h"
#include "bt_multi.h"

int bt_main(void) {
  for (int m = 0; m < bt_num_models; m++)
    if (bt_models[m].init() != 0) {
      bt_puts("bt: weights image does not match this firmware (magic/version/model hash)\n");
      return BT_EXIT_IMAGE;
    }
  for (int k = 0; k < bt_num_runs; k++) {
    const bt_model_entry *e = &bt_models[bt_run_order[k]];
    for (int i = 0; i < e->num_inputs; i++)
      if (bt_read_input(e->input(i), e->input_bytes(i)) != 0) {
        bt_puts("bt: cannot read the input\n");
        return BT_EXIT_IO;
      }
    if (e->invoke() != 0) {
      bt_puts("bt: model_invoke failed\n");
      return BT_EXIT_INVOKE;
    }
    for (int i = 0; i < e->num_outputs; i++)
      if (bt_write_output(e->output(i), e->output_bytes(i)) != 0) {
        bt_puts("bt: cannot write the output\n");
        return BT_EXIT_IO;
      }
  }
  bt_puts("arena_bytes=");
  bt_putu(bt_joint_arena_bytes);
  bt_puts("\n");
  return BT_EXIT_OK;
}
