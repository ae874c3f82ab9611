/* data_movement_test.c -- tests of pad.c, concat.c, split.c, strided_slice.c, against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

static void test_data_movement(void) {
  for (int32_t t = 0; t < 15; t++) {
    bt_pad_params p;
    int32_t total = 1;
    for (int k = 0; k < 4; k++) {
      p.in_dims[k] = k == 0 ? 1 : ri(1, 6);
      p.before[k] = ri(0, 2);
      p.out_dims[k] = p.in_dims[k] + p.before[k] + ri(0, 2);
      p.out_stride[k] = 0;
      total *= p.out_dims[k];
    }
    p.pad_value = ri(-128, 127);
    fill(g_in, p.in_dims[1] * p.in_dims[2] * p.in_dims[3]);
    fill(g_ref, total + 8); copy(g_opt, g_ref, total + 8);
    ref_bt_pad_s8(&p, g_in, g_ref); bt_pad_s8(&p, g_in, g_opt);
    check("pad", t, g_ref, g_opt, total + 8);
  }
  for (int32_t t = 0; t < 10; t++) {
    int32_t sizes[4];
    bt_concat_params p = {ri(1, 4), ri(1, 20), sizes};
    const int8_t *ins[4];
    int8_t *outs_r[4], *outs_o[4];
    int32_t row = 0, off = 0;
    for (int32_t k = 0; k < p.n; k++) { sizes[k] = ri(1, 30); row += sizes[k]; }
    fill(g_in, p.outer * row);
    for (int32_t k = 0; k < p.n; k++) { ins[k] = g_in + off; off += p.outer * sizes[k]; }
    fill(g_ref, p.outer * row + 8); copy(g_opt, g_ref, p.outer * row + 8);
    ref_bt_concat_s8(&p, ins, g_ref); bt_concat_s8(&p, ins, g_opt);
    check("concat", t, g_ref, g_opt, p.outer * row + 8);
    off = 0;
    for (int32_t k = 0; k < p.n; k++) { outs_r[k] = g_ref + off; outs_o[k] = g_opt + off; off += p.outer * sizes[k]; }
    fill(g_ref, p.outer * row + 8); copy(g_opt, g_ref, p.outer * row + 8);
    ref_bt_split_s8(&p, g_in, outs_r); bt_split_s8(&p, g_in, outs_o);
    check("split", t, g_ref, g_opt, p.outer * row + 8);
  }
  for (int32_t t = 0; t < 10; t++) {
    bt_slice_params p;
    int32_t total = 1, in_total = 1;
    for (int k = 0; k < 4; k++) {
      p.in_dims[k] = ri(1, 6);
      p.stride[k] = (rnd() % 3 == 0) ? -ri(1, 2) : ri(1, 2);
      p.begin[k] = p.stride[k] > 0 ? ri(0, p.in_dims[k] - 1) : p.in_dims[k] - 1 - ri(0, p.in_dims[k] - 1);
      int32_t avail = p.stride[k] > 0 ? (p.in_dims[k] - p.begin[k] + p.stride[k] - 1) / p.stride[k]
                                     : (p.begin[k] + 1 + (-p.stride[k]) - 1) / (-p.stride[k]);
      p.out_dims[k] = ri(1, avail);
      total *= p.out_dims[k]; in_total *= p.in_dims[k];
    }
    fill(g_in, in_total);
    fill(g_ref, total + 8); copy(g_opt, g_ref, total + 8);
    ref_bt_strided_slice_s8(&p, g_in, g_ref); bt_strided_slice_s8(&p, g_in, g_opt);
    check("strided_slice", t, g_ref, g_opt, total + 8);
  }
}
