/* The cortex-m55 set's kernel entry points for generated code (buildtool/codegen/kernel_variants.py and
 * tile_kernels.py): the fused runtime's tile kernels call the conv with each output channel's
 * bias + input_offset * (sum of its filter) made at code generation (kb), so a tile's call does not sum the
 * filters again; with another kernel set linked, model.c falls back to bt_conv_s8. */
#ifndef BT_VARIANTS_H
#define BT_VARIANTS_H
#include "bt_kernels.h"

#define BT_VARIANTS_CORTEX_M55 1

void bt_conv_s8_kb(const bt_conv_params *p, const int32_t *kb, const int8_t *in, int32_t in_y0, int8_t *out,
                   int32_t y0, int32_t y1);
#define BT_CONV_KB(p, kb, in, in_y0, out, y0, y1) bt_conv_s8_kb(p, kb, in, in_y0, out, y0, y1)
#endif
