/* A user application: classify one input with the generated model and print the class.
   The board's start-up code calls bt_main(); bt_platform.h reads the input (stdin on the host,
   input.bin over semihosting in QEMU) and writes the output (stdout / output.bin). */
#include <stdint.h>

#include "bt_platform.h"
#include "model.h"

int bt_main(void) {
  if (model_init() != 0) {
    bt_puts("app: weights image does not match this firmware\n");
    return BT_EXIT_IMAGE;
  }
  if (bt_read_input(model_input(0), model_input_bytes(0)) != 0) {
    bt_puts("app: cannot read the input\n");
    return BT_EXIT_IO;
  }
  if (model_invoke() != 0) {
    bt_puts("app: model_invoke failed\n");
    return BT_EXIT_INVOKE;
  }
  const int8_t *scores = (const int8_t *)model_output(0);
  uint32_t best = 0;
  for (uint32_t i = 1; i < (uint32_t)model_output_bytes(0); i++)
    if (scores[i] > scores[best]) best = i;
  if (bt_write_output(scores, model_output_bytes(0)) != 0) return BT_EXIT_IO;
  bt_puts("class=");
  bt_putu(best);
  bt_puts("\n");
  return BT_EXIT_OK;
}
