/* vpu_test.c -- tests of xcore/vpu.h (the VPU model), against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

#ifdef BT_SET_XCORE
/* The VPU model against hand-computed XS3 semantics (instructions the kernels do not all use). */
static void test_vpu_model(void) {
  int8_t a[32] __attribute__((aligned(4))), c[32] __attribute__((aligned(4))), r[32] __attribute__((aligned(4)));
  uint16_t sh[16] __attribute__((aligned(4)));
  int32_t acc[16];
  int bad = 0;
  for (int i = 0; i < 32; i++) { a[i] = (int8_t)(i - 16); c[i] = (int8_t)(3 - i % 7); }
  VSETC_S8(); VCLRDR(); VLDC(c);
  for (int k = 0; k < 16; k++) { a[0] = (int8_t)k; VLMACCR(a); }       /* row k ends in acc[15-k] */
  bt_vpu_read_acc(acc);
  for (int k = 0; k < 16; k++) {
    int32_t want = 0;
    for (int i = 0; i < 32; i++) want += c[i] * (i == 0 ? 15 - k : i - 16);
    bad += acc[k] != want;
  }
  VCLRDR(); VLMACC(a); VLMACC(a); bt_vpu_read_acc(acc);                 /* element-wise, 16 lanes */
  for (int i = 0; i < 16; i++) bad += acc[i] != 2 * c[i] * a[i];
  for (int i = 0; i < 16; i++) sh[i] = (uint16_t)(i % 4);
  VLSAT(sh); VSTR(r);                                                    /* round half up, sat +-127 */
  for (int i = 0; i < 16; i++) {
    int32_t v = acc[i], s2 = i % 4, want = s2 ? (v >> s2) + ((v >> (s2 - 1)) & 1) : v;
    want = want > 127 ? 127 : (want < -127 ? -127 : want);
    bad += r[i] != want;
  }
  for (int i = 16; i < 32; i++) bad += r[i] != 0;
  for (int i = 0; i < 32; i++) a[i] = (int8_t)(i * 8 - 128);
  VLASHR(a, 1); VLADD(a); VSTR(r);                                       /* sat8(a/2 + a) */
  for (int i = 0; i < 32; i++) {
    int32_t want = (a[i] >> 1) + a[i];
    bad += r[i] != (want > 127 ? 127 : (want < -127 ? -127 : want));
  }
  for (int i = 0; i < 32; i++) r[i] = 5;
  VSTRPV(r, 0x0000f00fu);
  for (int i = 0; i < 32; i++) bad += r[i] != (((0x0000f00fu >> i) & 1) ? bt_vpu.vR.s8[i] : 5);
  if (bad) { failed++; bt_puts("FAIL vpu model: "); put_i(bad); bt_puts(" mismatches\n"); }
  else passed++;
}
#endif
