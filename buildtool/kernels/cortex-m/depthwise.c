/* DEPTHWISE_CONV_2D int8 for Cortex-M DSP, depth multiplier 1. 3x3 undilated calls with channels in
 * groups of four, stride_w 2 or at most DW_SMALL_PIXELS output pixels, take dw_small (below "small maps
 * and stride 2": the input copied a word of four channels at a time into a zero-point padded buffer, nine
 * straight-line taps a pixel); on Arm those with stride_w 1, rows of at least 3 outputs and every channel
 * on bt_dw_q4's terms take dw_q4s's planes instead (per-channel int16 planes, SMLAD on column pairs, bt_dwp).
 * On Arm, stride 2 both ways with every channel on bt_dw_q4's terms, 3 to 47 outputs a row and at least two rows
 * a call, takes dw_s2 first (below dw_q4s: four channels' int16 column pairs in three rows of cells that
 * each output row refills two of, bt_dws2g).
 * Other 3x3 undilated calls with stride_w 1 or 2, of at least DW_MIN_PIXELS
 * output pixels, 2 rows and DW_MIN_WIDTH columns, take dw_rows (below "3x3, dilation 1"): per group
 * of four channels the input rows of a chunk of output rows are widened once into int16 planes padded
 * with the input zero point, then per channel two outputs a pass with SMLAD on column pairs and the sums
 * requantised two at a time (on Arm, the whole int8 range at stride 1: four outputs a pass, bt_dw_q4_RL,
 * and dw_small's sat groups two pixels a pass, bt_dws2_SW_RL); border pixels are no special case. Other
 * calls: four channels per word.
 * Per tap and 4 channels: LDR input + 2 SXTB16 + 2 SADD16 (offset), LDR filter + 2 SXTB16, then
 * SMLABB/SMLATT into four per-channel accumulators. 3x3 filters get a straight-line path for the pixels whose taps are all inside the
 * image (weights unpacked once per channel group and row, the input offset folded into the bias);
 * border pixels have straight-line 2- and 3-wide tap rows. Requantisation by bt_rq2 (requant.h) when
 * every channel allows it. Depth multiplier > 1 uses the reference code (included under another
 * name); the in-place variant runs this kernel row by row through a ring of rows in scratch, or
 * channel by channel when scratch cannot hold the rows that must wait (below). */
#include "depthwise_core.h"

#define bt_depthwise_s8 bt_ref_depthwise_generic_s8
#define bt_depthwise_s8_inplace bt_ref_depthwise_inplace_s8
#include "../reference/depthwise_ref.h"
#undef bt_depthwise_s8
#undef bt_depthwise_s8_inplace


typedef void (*dw_fn)(const bt_depthwise_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
static const dw_fn dw_paths[DWP_N] = {bt_dw_kxk_rq2, bt_dw_kxk, bt_dw_s2g, bt_dw_planes_8, bt_dw_planes_16,
                                      bt_dw_planes_32, bt_dw_planes_56, bt_dw_small_rq2, bt_dw_small,
                                      bt_dw_rows_q4_8, bt_dw_rows_q4_16, bt_dw_rows_q4_32, bt_dw_rows_q4_56,
                                      bt_dw_rows_rq2, bt_dw_rows, bt_dw_box_rq2, bt_dw_box};
static const char *const dw_path_names[DWP_N] = {
    "bt_dw_kxk_rq2", "bt_dw_kxk", "bt_dw_s2g", "bt_dw_planes_8", "bt_dw_planes_16", "bt_dw_planes_32",
    "bt_dw_planes_56", "bt_dw_small_rq2", "bt_dw_small", "bt_dw_rows_q4_8", "bt_dw_rows_q4_16", "bt_dw_rows_q4_32",
    "bt_dw_rows_q4_56", "bt_dw_rows_rq2", "bt_dw_rows", "bt_dw_box_rq2", "bt_dw_box"};

void bt_depthwise_s8_m1_rq2(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                            int32_t y1) {
  dw_paths[dw_path(&dp->conv, in_y0, y0, y1, 1)](dp, in, in_y0, out, y0, y1);
}

void bt_depthwise_s8_m1(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                        int32_t y1) {
  dw_paths[dw_path(&dp->conv, in_y0, y0, y1, 0)](dp, in, in_y0, out, y0, y1);
}

static const dw_fn dw_variants[] = {bt_depthwise_s8_m1_rq2, bt_depthwise_s8_m1, bt_ref_depthwise_generic_s8};
static const char *const dw_names[] = {"bt_depthwise_s8_m1_rq2", "bt_depthwise_s8_m1", "bt_ref_depthwise_generic_s8"};

/* Index in dw_variants of the variant for dp (buildtool/codegen/kernel_variants.py states the same rules). */
static int dw_variant(const bt_depthwise_params *dp) {
  if (dp->depth_multiplier != 1) return 2;
  return bt_rq2_ok(dp->conv.multiplier, dp->conv.shift, dp->conv.out.c) ? 0 : 1;
}

const char *bt_depthwise_s8_variant(const bt_depthwise_params *dp) { return dw_names[dw_variant(dp)]; }

const char *bt_depthwise_s8_path(const bt_depthwise_params *dp, int32_t in_y0, int32_t y0, int32_t y1) {
  const int v = dw_variant(dp);
  return v == 2 ? dw_names[2] : dw_path_names[dw_path(&dp->conv, in_y0, y0, y1, v == 0)];
}

void bt_depthwise_s8(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0,
                     int8_t *out, int32_t y0, int32_t y1) {
  dw_variants[dw_variant(dp)](dp, in, in_y0, out, y0, y1);
}

#include "dw_inplace_rows.h"

