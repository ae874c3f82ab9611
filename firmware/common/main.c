/* Firmware harness: check the weights image, read the input, run the model,
   write the output, report the arena size. The start-up code reports the
   stack high-water mark and the static RAM after bt_main returns. */
#include "bt_platform.h"
#include "model.h"

int bt_main(void) {
  int rc = model_init();
  if (rc != 0) {
    bt_puts("bt: weights image does not match this firmware (magic/version/model hash)\n");
    return BT_EXIT_IMAGE;
  }
  for (int i = 0; i < MODEL_NUM_INPUTS; i++)
    if (bt_read_input(model_input(i), model_input_bytes(i)) != 0) {
      bt_puts("bt: cannot read the input\n");
      return BT_EXIT_IO;
    }
  if (model_invoke() != 0) {
    bt_puts("bt: model_invoke failed\n");
    return BT_EXIT_INVOKE;
  }
  for (int i = 0; i < MODEL_NUM_OUTPUTS; i++)
    if (bt_write_output(model_output(i), model_output_bytes(i)) != 0) {
      bt_puts("bt: cannot write the output\n");
      return BT_EXIT_IO;
    }
  bt_puts("arena_bytes=");
  bt_putu(MODEL_ARENA_BYTES);
  bt_puts("\n");
  return BT_EXIT_OK;
}
