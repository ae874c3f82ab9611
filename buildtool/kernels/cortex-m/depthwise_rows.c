/* Depthwise on dw_widen's int16 planes: 3x3 rows (dw_rows) bt_dw_rows_rq2, bt_dw_rows, bt_dw_rows_q4_RL; 5x5 and 7x7
 * (dw_kxk.h's dwk) bt_dw_kxk_rq2, bt_dw_kxk: one file, as dw_widen and dw_requant_RQ serve both (apart, gcc specialised
 * dw_widen for dwk alone: other code) (depthwise_core.h: the helpers, the layout of the files) */
#define DW_EMIT_Q4
#define DW_EMIT_W4
#define DW_PART_ROWS
#include "depthwise_core.h"

#define BT_DW_PATH(name) \
  void name(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1)
BT_DW_PATH(bt_dw_rows_rq2) { dw_rows_call(&dp->conv, in, in_y0, out, y0, y1, 1, -1, -1, 0, 0); }
BT_DW_PATH(bt_dw_rows) { dw_rows_call(&dp->conv, in, in_y0, out, y0, y1, 0, -1, -1, 0, 0); }
#if DW_Q4
/* bt_dw_rows_q4_RL: one dw_rows for the four row lengths (li an argument: its per-strip set-up is not the loop's) */
static __attribute__((noinline, optimize("Os"))) void dw_rows_q4(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out,
                                                 int32_t y0, int32_t y1, int li, dw_q4_fn q4f, dw_pair_fn pf) {
  dw_rows_call(p, in, in_y0, out, y0, y1, 1, li, 1, q4f, pf);
}
#define DW_ROWS_Q4(rl, li) \
  BT_DW_PATH(bt_dw_rows_q4_##rl) { dw_rows_q4(&dp->conv, in, in_y0, out, y0, y1, li, bt_dw_q4_##rl, dw_sums_q_1_rl); }
#else
#define DW_ROWS_Q4(rl, li) \
  BT_DW_PATH(bt_dw_rows_q4_##rl) { dw_rows_call(&dp->conv, in, in_y0, out, y0, y1, 1, -1, -1, 0, 0); }
#endif
DW_ROWS_Q4(8, 0)
DW_ROWS_Q4(16, 1)
DW_ROWS_Q4(32, 2)
DW_ROWS_Q4(56, 3)
#undef DW_ROWS_Q4
BT_DW_PATH(bt_dw_kxk_rq2) { dwk(&dp->conv, in, in_y0, out, y0, y1, 1); }
BT_DW_PATH(bt_dw_kxk) { dwk(&dp->conv, in, in_y0, out, y0, y1, 0); }
#undef BT_DW_PATH
