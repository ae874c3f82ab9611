/* Firmware harness: check the weights image, then read an input, run the model and write the
   output for every input set given (state persists between them), report the arena size. The start-up code reports the
   stack high-water mark and the static RAM after bt_main returns. */
#include "bt_platform.h"
#include "model.h"
BT_HARNESS_FOR_SIZE

int bt_main(void) {
  int rc = model_init();
  if (rc != 0) {
    bt_puts("bt: weights image does not match this firmware (magic/version/model hash)\n");
    return BT_EXIT_IMAGE;
  }
  /* One invocation per input set until the input ends: the model's state (variable tensors)
     carries over between invocations. A streamed input (0 bytes here) runs once. */
  for (int run = 0;; run++) {
    for (int i = 0; i < MODEL_NUM_INPUTS; i++) {
      int r = bt_read_input(model_input(i), model_input_bytes(i));
      if (r == BT_INPUT_END && i == 0 && run > 0) goto done;
      if (r != 0) {
        bt_puts("bt: cannot read the input\n");
        return BT_EXIT_IO;
      }
    }
    rc = model_invoke();
    if (rc != 0) {
#ifdef MODEL_ITERATION_LIMIT_STATUS  /* a model with a WHILE (codegen/control_c.py): its line, else none */
      if (rc == MODEL_ITERATION_LIMIT_STATUS)
        bt_puts("bt: a WHILE operator ran BT_MAX_ITERATIONS iterations and its condition still holds\n");
      else
#endif
        bt_puts("bt: model_invoke failed\n");
      return BT_EXIT_INVOKE;
    }
    for (int i = 0; i < MODEL_NUM_OUTPUTS; i++)
      if (bt_write_output(model_output(i), model_output_bytes(i)) != 0) {
        bt_puts("bt: cannot write the output\n");
        return BT_EXIT_IO;
      }
    if (MODEL_NUM_INPUTS == 0 || model_input_bytes(0) == 0) break;
  }
done:
  bt_puts("arena_bytes=");
  bt_putu(MODEL_ARENA_BYTES);
  bt_puts("\n");
  return BT_EXIT_OK;
}
