/* Depthwise 3x3 small maps and stride 2, four channels a word in a padded buffer (dw_small): bt_dw_small_rq2, bt_dw_small, bt_dw_small_{s1,s2,f,m}_RL (depthwise_core.h: the helpers, the layout of the files) */
#define DW_EMIT_DWS2
#define DW_PART_SMALL
#include "depthwise_core.h"

#define BT_DW_PATH(name) \
  void name(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1)
BT_DW_PATH(bt_dw_small_rq2) { dw_small(&dp->conv, in, in_y0, out, y0, y1, 1); }
BT_DW_PATH(bt_dw_small) { dw_small(&dp->conv, in, in_y0, out, y0, y1, 0); }
/* bt_dw_small_rq2 / bt_dw_small where code generation knows the row length RL and each group's requantisation of every
 * call (dw_small_one, one band): _sSW_RL every group on the sat path at stride_w SW, _f_RL none (bt_rq2), _m_RL
 * bt_mbqm_fast */
#define DW_SMALL_ENTRIES(rl)                                                                                 \
  BT_DW_PATH(bt_dw_small_s1_##rl) { dw_small_one(&dp->conv, in, in_y0, out, y0, y1, dw_small_##rl##_s1); } \
  BT_DW_PATH(bt_dw_small_s2_##rl) { dw_small_one(&dp->conv, in, in_y0, out, y0, y1, dw_small_##rl##_s2); } \
  BT_DW_PATH(bt_dw_small_f_##rl) { dw_small_one(&dp->conv, in, in_y0, out, y0, y1, dw_small_##rl##_f); }   \
  BT_DW_PATH(bt_dw_small_m_##rl) { dw_small_one(&dp->conv, in, in_y0, out, y0, y1, dw_small_##rl##_m); }
DW_SMALL_ENTRIES(8)
DW_SMALL_ENTRIES(16)
DW_SMALL_ENTRIES(32)
DW_SMALL_ENTRIES(56)
#undef DW_SMALL_ENTRIES
#undef BT_DW_PATH
