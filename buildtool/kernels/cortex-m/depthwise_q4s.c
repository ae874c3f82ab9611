/* Depthwise 3x3 stride 1 on bt_dw_q4's terms, the map as it is (dw_q4s): bt_dw_rows_q4e_RL (bt_dw_q4e_RL), bt_dw_planes_RL (bt_dwp_RL) (depthwise_core.h: the helpers, the layout of the files) */
#define DW_EMIT_Q4E
#define DW_EMIT_W4
#define DW_EMIT_DWP
#include "depthwise_core.h"

#define BT_DW_PATH(name) \
  void name(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1)
#if DW_Q4
#define DW_PLANES(rl, li) \
  BT_DW_PATH(bt_dw_planes_##rl) { dw_q4s(&dp->conv, in, in_y0, out, y0, y1, li, bt_dwp_##rl, 1); }
/* bt_dw_rows_q4e_RL: bt_dw_rows_q4_RL where every strip's outputs are whole quads (model.c's calls where
 * kernel_variants.dw_rows_entry finds them so): bt_dw_q4e_RL without the last column, no dw_sums_q_1_rl */
#define DW_ROWS_Q4E(rl, li) \
  BT_DW_PATH(bt_dw_rows_q4e_##rl) { dw_q4s(&dp->conv, in, in_y0, out, y0, y1, li, bt_dw_q4e_##rl, 0); }
#else
#define DW_PLANES(rl, li) BT_DW_PATH(bt_dw_planes_##rl) { dw_small(&dp->conv, in, in_y0, out, y0, y1, 1); }
#define DW_ROWS_Q4E(rl, li) \
  BT_DW_PATH(bt_dw_rows_q4e_##rl) { dw_rows_call(&dp->conv, in, in_y0, out, y0, y1, 1, -1, -1, 0, 0); }
#endif
DW_PLANES(8, 0)
DW_PLANES(16, 1)
DW_PLANES(32, 2)
DW_PLANES(56, 3)
DW_ROWS_Q4E(8, 0)
DW_ROWS_Q4E(16, 1)
DW_ROWS_Q4E(32, 2)
DW_ROWS_Q4E(56, 3)
#undef DW_PLANES
#undef DW_ROWS_Q4E
#undef BT_DW_PATH
