/* The cortex-m set's kernel variants: model.c calls the one buildtool/codegen/kernel_variants.py picks for
 * each layer (the same rules as the dispatchers bt_conv_s8, bt_depthwise_s8, bt_fully_connected_s8,
 * which stay for the tile runtime and other callers); the linker drops the variants no layer uses.
 * bt_*_variant() names the variant a dispatcher takes for a layer (tests compare it with the table). */
#ifndef BT_VARIANTS_H
#define BT_VARIANTS_H
#include "bt_kernels.h"

#define BT_VARIANTS_CORTEX_M 1

#define BT_CONV_VARIANT(name) \
  void name(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1)
BT_CONV_VARIANT(bt_conv_s8_pm_rq2_ssat);     /* patch matrix, bt_rq2, activation the whole int8 range */
BT_CONV_VARIANT(bt_conv_s8_pm_rq2m_ssat);    /* the same with doubled sums (bt_rq2m): code generation only */
BT_CONV_VARIANT(bt_conv_s8_kxk_rq2_ssat);    /* the shared KxK (conv_kxk.h): code generation only */
BT_CONV_VARIANT(bt_conv_s8_1x1_rq2_ssat);     /* a 1x1 read in place, bt_rq2 folding the zero point: code generation only
                                              (conv_1x1.h) */
BT_CONV_VARIANT(bt_conv_s8_1x1_rq2m_ssat);    /* the same with doubled sums (bt_rq2m): code generation only */
BT_CONV_VARIANT(bt_conv_s8_pm_rq2_ssat_lo);  /* patch matrix, bt_rq2, upper bound 127, a lower bound */
BT_CONV_VARIANT(bt_conv_s8_pm_rq2);          /* patch matrix, bt_rq2, any activation range */
BT_CONV_VARIANT(bt_conv_s8_pm);              /* patch matrix, bt_mbqm_fast */
BT_CONV_VARIANT(bt_conv_s8_direct);          /* direct convolution */
BT_CONV_VARIANT(bt_conv_s8_1x1_wide);        /* a 1x1 over more than BT_COL_MAX input channels (conv_1x1w.h) */
#undef BT_CONV_VARIANT
const char *bt_conv_s8_variant(const bt_conv_params *p);

/* model.c's own instantiation of the patch-matrix loops for one layer (conv_pm.h), its parameters
 * a constant struct: fast 1 is the bt_rq2 requantisation, 2 bt_rq2m (doubled sums), act 2 / 1 / 0 as the
 * variants above. */
#include "conv_pm.h"
#include "conv_stem.h"
#define BT_CONV_PM(p, in, in_y0, out, y0, y1, fast, act) bt_conv_pm_stem(p, in, in_y0, out, y0, y1, fast, act)
/* the same loops' compact form (conv_pm.h bt_conv_pm_form: a loop of a few groups a run, not straight runs), for a
 * layer the stem path does not take: the code budget's compact instance (kernel_variants.COMPACT) */
#define BT_CONV_PMC(p, in, in_y0, out, y0, y1, fast, act) bt_conv_pm_form(p, in, in_y0, out, y0, y1, fast, act, 1)
/* the middle form (conv_stem.h bt_conv_pm_mid: the loops straight, one copy of them, not one per case of the zero
 * point's fold; the row buffer's pixels left after its triples rolled), the stem's too: the code budget's medium
 * instance (kernel_variants.MEDIUM) */
#define BT_CONV_PMM(p, in, in_y0, out, y0, y1, fast, act) bt_conv_pm_mid(p, in, in_y0, out, y0, y1, fast, act)

#define BT_DW_VARIANT(name) \
  void name(const bt_depthwise_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1)
BT_DW_VARIANT(bt_depthwise_s8_m1_rq2);       /* depth multiplier 1, bt_rq2 */
BT_DW_VARIANT(bt_depthwise_s8_m1);           /* depth multiplier 1, bt_mbqm_fast */
BT_DW_VARIANT(bt_ref_depthwise_generic_s8);  /* other depth multipliers: the reference code */
/* the paths of depth multiplier 1 (depthwise.c dw_path; the two above run the one it picks): model.c calls the one
 * kernel_variants.py's "depthwise_m1" table picks for its whole-map call. _rq2: requantisation by bt_rq2 */
BT_DW_VARIANT(bt_dw_kxk_rq2);     /* 5x5, 7x7 */
BT_DW_VARIANT(bt_dw_kxk);
BT_DW_VARIANT(bt_dw_s2g);         /* 3x3 stride 2, the whole int8 range: column pairs, bt_dws2g */
/* bt_dw_s2g where out.w % 6 == N: its loop of rows of N outputs alone (model.c's calls) */
BT_DW_VARIANT(bt_dw_s2g_0); BT_DW_VARIANT(bt_dw_s2g_1); BT_DW_VARIANT(bt_dw_s2g_2);
BT_DW_VARIANT(bt_dw_s2g_3); BT_DW_VARIANT(bt_dw_s2g_4); BT_DW_VARIANT(bt_dw_s2g_5);
BT_DW_VARIANT(bt_dw_planes_8);    /* 3x3 small maps, the whole int8 range: per-channel planes, rows of 8 cells */
BT_DW_VARIANT(bt_dw_planes_16);
BT_DW_VARIANT(bt_dw_planes_32);
BT_DW_VARIANT(bt_dw_planes_56);
BT_DW_VARIANT(bt_dw_small_rq2);   /* 3x3 small maps and stride 2: four channels a word in a padded buffer */
BT_DW_VARIANT(bt_dw_small);
/* the two above where every call's row length RL and groups' requantisation is known (codegen/tile_kernels.py
 * dw_small_entry): sSW every group on the sat path at stride_w SW, f none (bt_rq2), m bt_mbqm_fast */
#define BT_DW_SMALL(rl) BT_DW_VARIANT(bt_dw_small_s1_##rl); BT_DW_VARIANT(bt_dw_small_s2_##rl); \
  BT_DW_VARIANT(bt_dw_small_f_##rl); BT_DW_VARIANT(bt_dw_small_m_##rl)
BT_DW_SMALL(8);
BT_DW_SMALL(16);
BT_DW_SMALL(32);
BT_DW_SMALL(56);
#undef BT_DW_SMALL
BT_DW_VARIANT(bt_dw_rows_q4_8);   /* 3x3 rows, the whole int8 range: bt_dw_q4 on rows of 8 cells */
BT_DW_VARIANT(bt_dw_rows_q4_16);
BT_DW_VARIANT(bt_dw_rows_q4_32);
BT_DW_VARIANT(bt_dw_rows_q4_56);
/* bt_dw_rows_q4_RL where every strip's outputs are whole quads (kernel_variants.dw_rows_entry): no last column */
BT_DW_VARIANT(bt_dw_rows_q4e_8);
BT_DW_VARIANT(bt_dw_rows_q4e_16);
BT_DW_VARIANT(bt_dw_rows_q4e_32);
BT_DW_VARIANT(bt_dw_rows_q4e_56);
BT_DW_VARIANT(bt_dw_rows_rq2);    /* 3x3 rows, any row length and requantisation */
BT_DW_VARIANT(bt_dw_rows);
BT_DW_VARIANT(bt_dw_box_rq2);     /* any layer: the 3x3 interior loop where a row has one, the general pixels */
BT_DW_VARIANT(bt_dw_box);
BT_DW_VARIANT(bt_dw_pix_rq2);     /* a fused tile's calls of a pixel or two: the general pixels, bt_rq2 */
BT_DW_VARIANT(bt_dw_pix4_rq2);    /* the same on channels in fours, one requantisation loop */
#undef BT_DW_VARIANT
const char *bt_depthwise_s8_variant(const bt_depthwise_params *p);
/* the path name dw_path picks for a call of out rows [y0, y1) (the variant's name for depth multipliers above 1) */
const char *bt_depthwise_s8_path(const bt_depthwise_params *p, int32_t in_y0, int32_t y0, int32_t y1);

/* ADD int8 that add.c's add_tab takes (kernel_variants.add_tab_variant): bt_add_s8 without add_dense.h's loops, one
 * per table fill (gen, small) and activation (the whole int8 range, else _act), without run-time checks */
void bt_add_s8_tab_gen(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out);
void bt_add_s8_tab_small(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out);
void bt_add_s8_tab_gen_act(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out);
void bt_add_s8_tab_small_act(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out);
void bt_add_s8_tab(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out); /* checked: tests */
int bt_add_s8_tab_taken(const bt_add_params *p);  /* 0, else 1 + the variant's index above (tests) */

/* AVERAGE_POOL_2D int8 of windows of at most 256 taps (kernel_variants.AVG_SXT_TAPS): bt_avg_pool_s8 without the
 * reference loop it runs larger windows on */
void bt_avg_pool_s8_sxt(const bt_pool_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1);

void bt_fully_connected_s8_widened_rq2_few(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_widened_rq2_pc(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_widened_rq2_ssat32(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_widened_rq2_ssat(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_widened_rq2(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_widened(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_direct(const bt_fc_params *p, const int8_t *in, int8_t *out);
/* Weights in the interleaved order code generation makes for them (buildtool/plan/weight_order.py, the
 * layout in fully_connected.c): model.c calls these directly, never through the dispatcher. */
void bt_fully_connected_s8_il_rq2z_ssat(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_il_rq2z_lo(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_il_rq2z(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_il_rq2_pc_ssat(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_il_rq2(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_il_mbqm(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_il_small(const bt_fc_params *p, const int8_t *in, int8_t *out);
void bt_fully_connected_s8_il(const bt_fc_params *p, const int8_t *in, int8_t *out);   /* picks one of the above */
const char *bt_fully_connected_s8_il_variant(const bt_fc_params *p);
const char *bt_fully_connected_s8_variant(const bt_fc_params *p);
#endif
