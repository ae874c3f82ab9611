/* kernel_test.c -- runs every kernel of the set under test on deterministic pseudo-random cases and
 * compares the results byte for byte with the reference set, linked next to it under the ref_bt_
 * prefix (reference files compiled a second time with -DBT_KERNEL_PREFIX_REF).
 * The fused-plan tile runtime (bt_fused.h) is checked the same way: tiles against whole tensors.
 * Prints "N passed, N failed"; the exit code is 1 when any case failed.
 *
 * Build: the set's files + the reference files (renamed) + this file, with
 *   -DBT_HOST            host program (stdio, main)
 *   otherwise            bare metal: link firmware/<arch>/ start-up + firmware/common/semihost_io.c,
 *                        which call bt_main() and provide bt_puts (bt_platform.h: bt_putu).
 *   -DBT_RVV             enable the RISC-V vector unit before running (RVV kernel set).
 *   -DBT_BENCH           first run the benchmark kernels once each between marker functions
 *                        bench_<k>_<ref|opt>_{begin,end} (for the QEMU insn-count plugin).
 */

#include "kernel_test.h"

/* One test file per kernel file (or family), as the kernel folders name them (see README.md). */
#include "conv_test.c"
#include "depthwise_test.c"
#include "pooling_test.c"
#include "fully_connected_test.c"
#include "add_mul_test.c"
#include "unary_test.c"
#include "mean_test.c"
#include "data_movement_test.c"
#include "requant_test.c"
#include "vpu_test.c"
#include "fast_paths_test.c"
#include "fused_test.c"

/* ------------------------------------------------------------------ benchmark cases */
static void shape_cases(void) {
  /* the representative shapes of the benchmark, checked for correctness too */
  spatial_case c;
  c.kind = K_CONV;
  gen_conv(&c.dw.conv, 16, 16, 32, 64, 1, 1, 1, 1, 1, 1, 1, 32, 64, 0);
  fill(g_in, 16 * 16 * 32);
  spatial_check("conv1x1_16x16x32_64", 0, &c);
  c.kind = K_DW; c.dw.depth_multiplier = 1;
  gen_conv(&c.dw.conv, 40, 40, 96, 96, 3, 3, 1, 1, 1, 1, 1, 96, 96, 1);
  fill(g_in, 40 * 40 * 96);
  spatial_check("dw3x3_40x40x96", 0, &c);
}

#ifdef BT_BENCH
#define MARK(n) \
  __attribute__((noinline, used)) void n(void) { __asm__ volatile("" ::: "memory"); }
MARK(bench_0_ref_begin) MARK(bench_0_ref_end) MARK(bench_0_opt_begin) MARK(bench_0_opt_end)
MARK(bench_1_ref_begin) MARK(bench_1_ref_end) MARK(bench_1_opt_begin) MARK(bench_1_opt_end)
MARK(bench_2_ref_begin) MARK(bench_2_ref_end) MARK(bench_2_opt_begin) MARK(bench_2_opt_end)
MARK(bench_3_ref_begin) MARK(bench_3_ref_end) MARK(bench_3_opt_begin) MARK(bench_3_opt_end)
/* xcore set: VPU instructions issued by the benchmark kernel just run (model count) */
static void vpu_report(int k) {
#ifdef BT_SET_XCORE
  static uint32_t last;
  bt_puts("bench "); put_i(k); bt_puts(" vpu_ops="); bt_putu(bt_vpu_ops - last); bt_puts("\n");
  last = bt_vpu_ops;
#else
  (void)k;
#endif
}
/* 0: conv 1x1 16x16x32->64   1: depthwise 3x3 40x40x96 s1 SAME
 * 2: conv 3x3 16x16x16->32 SAME   3: fully connected 512->64 */
static void bench(void) {
  bt_depthwise_params d; bt_fc_params f;
  gen_conv(&d.conv, 16, 16, 32, 64, 1, 1, 1, 1, 1, 1, 1, 32, 64, 0);
  fill(g_in, BUF);
  vpu_report(-1);
  bench_0_ref_begin(); ref_bt_conv_s8(&d.conv, g_in, 0, g_ref, 0, 16); bench_0_ref_end();
  bench_0_opt_begin(); bt_conv_s8(&d.conv, g_in, 0, g_opt, 0, 16); bench_0_opt_end(); vpu_report(0);
  check("bench_conv1x1", 0, g_ref, g_opt, 16 * 16 * 64);
  gen_conv(&d.conv, 40, 40, 96, 96, 3, 3, 1, 1, 1, 1, 1, 96, 96, 1); d.depth_multiplier = 1;
  bench_1_ref_begin(); ref_bt_depthwise_s8(&d, g_in, 0, g_ref, 0, 40); bench_1_ref_end();
  bench_1_opt_begin(); bt_depthwise_s8(&d, g_in, 0, g_opt, 0, 40); bench_1_opt_end(); vpu_report(1);
  check("bench_dw3x3", 0, g_ref, g_opt, 40 * 40 * 96);
  gen_conv(&d.conv, 16, 16, 16, 32, 3, 3, 1, 1, 1, 1, 1, 16, 32, 0);
  bench_2_ref_begin(); ref_bt_conv_s8(&d.conv, g_in, 0, g_ref, 0, 16); bench_2_ref_end();
  bench_2_opt_begin(); bt_conv_s8(&d.conv, g_in, 0, g_opt, 0, 16); bench_2_opt_end(); vpu_report(2);
  check("bench_conv3x3", 0, g_ref, g_opt, 16 * 16 * 32);
  f.n_in = 512; f.n_out = 64; f.batches = 1; f.input_offset = 5; f.filter_offset = 0; f.output_offset = -3;
  f.act_min = -128; f.act_max = 127; fill(g_w, 512 * 64); f.weights = g_w; f.bias = g_bias;
  rand_quant(64, 18); f.multiplier = g_mult; f.shift = g_shift; f.per_channel = 1;
  bench_3_ref_begin(); ref_bt_fully_connected_s8(&f, g_in, g_ref); bench_3_ref_end();
  bench_3_opt_begin(); bt_fully_connected_s8(&f, g_in, g_opt); bench_3_opt_end(); vpu_report(3);
  check("bench_fc", 0, g_ref, g_opt, 64);
}
#endif

int bt_main(void) {
#ifdef BT_RVV
  __asm__ volatile(".option push\n.option arch,+zicsr\ncsrs mstatus, %0\n.option pop" ::"r"(1u << 9));
#endif
  bt_puts("kernel set: "); bt_puts(bt_kernel_set_name()); bt_puts("\n");
#ifdef BT_BENCH
  bench();
#endif
  test_requant_helpers();
#ifdef BT_SET_XCORE
  test_vpu_model();
#endif
  test_conv();
  test_depthwise();
  test_pool();
  test_pool_wide();
  test_fc();
  test_add_mul();
  test_add_pairs();
  test_unary();
  test_softmax_widths();
  test_mean();
  test_data_movement();
  shape_cases();
  test_fast_paths();
  test_rv_requant();
  test_host_requant();
  test_fused_spatial();
  test_fused_channelwise();
  test_fused_chw();
  test_fused_elementwise();
  test_conv_variants();
  test_conv_instances();
  test_rq2();
  test_fc_sizes();
  test_fc_full();
  test_fc_il();
#ifdef BT_SET_XCORE
  if (bt_vpu_align_faults) { failed++; bt_puts("FAIL unaligned VPU memory operands: "); bt_putu(bt_vpu_align_faults); bt_puts("\n"); }
  else passed++;
#endif
  bt_puts("variants:");
  for (int i = 0; i < g_nvariants; i++) { bt_puts(" "); bt_puts(g_variants[i]); }
  bt_puts("\n");
  put_i(passed); bt_puts(" passed, "); put_i(failed); bt_puts(" failed\n");
  return failed ? 1 : 0;
}
