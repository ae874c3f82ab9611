/* Depthwise 3x3 stride 2 (dw_s2, bt_dws2g): bt_dw_s2g, bt_dw_s2g_N (depthwise_core.h: the helpers, the layout of the files) */
#define DW_EMIT_S2G
#include "depthwise_core.h"

#define BT_DW_PATH(name) \
  void name(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1)
#if DW_Q4
/* bt_dw_s2g links the loops of rows of every out.w % 6 (bt_dws2_tN); model.c calls bt_dw_s2g_N, out.w % 6 == N, which
 * links its own alone (kernel_variants.dw_s2g_entry) */
static const dw_s2_tail dw_s2_tails[6] = {0, bt_dws2_t1, bt_dws2_t2, bt_dws2_t3, bt_dws2_t4, bt_dws2_t5};
BT_DW_PATH(bt_dw_s2g) { dw_s2(&dp->conv, in, in_y0, out, y0, y1, dw_s2_tails[dp->conv.out.w % 6]); }
#define DW_S2G(n, t) BT_DW_PATH(bt_dw_s2g_##n) { dw_s2(&dp->conv, in, in_y0, out, y0, y1, t); }
DW_S2G(0, 0)
DW_S2G(1, bt_dws2_t1)
DW_S2G(2, bt_dws2_t2)
DW_S2G(3, bt_dws2_t3)
DW_S2G(4, bt_dws2_t4)
DW_S2G(5, bt_dws2_t5)
#undef DW_S2G
#else
BT_DW_PATH(bt_dw_s2g) {
  const bt_conv_params *p = &dp->conv;
  if (dw_small_ok(p, y0, y1)) dw_small(p, in, in_y0, out, y0, y1, 1);
  else if (dw_rows_take(p, y0, y1)) dw_rows_call(p, in, in_y0, out, y0, y1, 1, -1, -1, 0, 0);
  else dw_box(p, in, in_y0, out, y0, y1, 1);
}
#define DW_S2G(n) BT_DW_PATH(bt_dw_s2g_##n) { bt_dw_s2g(dp, in, in_y0, out, y0, y1); }
DW_S2G(0)
DW_S2G(1)
DW_S2G(2)
DW_S2G(3)
DW_S2G(4)
DW_S2G(5)
#undef DW_S2G
#endif
#undef BT_DW_PATH
