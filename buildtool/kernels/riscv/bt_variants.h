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

/* fused.c's unrolled one-channel conv, an entry per dense tap-run length 1..16 (st: its rv_conv1) and one for a
 * 1x1's longer runs ([0]: bt_fx_rv_run_long), and the table it calls them through: model.c defines it with the lengths its convs take (codegen/fused_c.py
 * rv_runs), so the link keeps no other; fused.c's weak one holds them all */
typedef void bt_fx_rv_run_fn(const int8_t *const *ipr, int32_t step, int32_t n, int8_t *o, int32_t ops,
                             const bt_conv_params *p, const void *st);
bt_fx_rv_run_fn bt_fx_rv_run1, bt_fx_rv_run2, bt_fx_rv_run3, bt_fx_rv_run4, bt_fx_rv_run5, bt_fx_rv_run6,
    bt_fx_rv_run7, bt_fx_rv_run8, bt_fx_rv_run9, bt_fx_rv_run10, bt_fx_rv_run11, bt_fx_rv_run12, bt_fx_rv_run13,
    bt_fx_rv_run14, bt_fx_rv_run15, bt_fx_rv_run16, bt_fx_rv_run_long;
/* the same entries for convs of kh > 1 alone (no 1x1 pass), where no conv of kh 1 takes the length */
bt_fx_rv_run_fn bt_fx_rv_rows1, bt_fx_rv_rows2, bt_fx_rv_rows3, bt_fx_rv_rows4, bt_fx_rv_rows5, bt_fx_rv_rows6,
    bt_fx_rv_rows7, bt_fx_rv_rows8, bt_fx_rv_rows9, bt_fx_rv_rows10, bt_fx_rv_rows11, bt_fx_rv_rows12, bt_fx_rv_rows13,
    bt_fx_rv_rows14, bt_fx_rv_rows15, bt_fx_rv_rows16;
extern bt_fx_rv_run_fn *const bt_fx_rv_runs[17];
#endif
