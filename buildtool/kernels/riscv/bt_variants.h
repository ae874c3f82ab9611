/* The riscv set's kernel variants (rv32imac scalar; the RVV build keeps its dispatchers): model.c
 * calls the one buildtool/codegen/kernel_variants.py picks for each layer (the same rule as bt_conv_s8, which
 * stays for the tile runtime and other callers); the linker drops the variants no layer uses.
 * bt_conv_s8_variant() names the variant bt_conv_s8 takes (tests compare it with the table). */
#ifndef BT_VARIANTS_H
#define BT_VARIANTS_H
#include "bt_kernels.h"

#ifndef BT_RVV
#define BT_VARIANTS_RISCV 1

/* 1x1 without padding, no multiplier INT32_MIN: four channels x two pixels per step */
void bt_conv_s8_pointwise(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                          int32_t y1);
/* any other convolution */
void bt_conv_s8_general(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                        int32_t y1);
const char *bt_conv_s8_variant(const bt_conv_params *p);

/* model.c's own instantiation of the pointwise loops for one layer (conv_pw.h), its parameters a
 * constant struct */
#include "conv_pw.h"
#define BT_CONV_PW(p, in, in_y0, out, y0, y1) bt_conv_pw(p, in, in_y0, out, y0, y1)
#endif
#endif
