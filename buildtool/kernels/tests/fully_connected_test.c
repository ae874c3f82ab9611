/* fully_connected_test.c -- tests of fully_connected.c, against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

/* ------------------------------------------------------------------ fully connected */
#ifdef BT_VARIANTS_CORTEX_M
static int8_t g_wil[24576] __attribute__((aligned(16)));
/* w [m][n] in the cortex-m set's interleaved order (fully_connected.c; code generation makes it with
 * buildtool/plan/weight_order.py, tests/test_weight_order.py checks the two agree). */
static void fc_interleave(const int8_t *w, int32_t n, int32_t m, int8_t *d) {
  const int32_t n4 = n & ~3, m4 = m & ~3;
  for (int32_t g = 0; g < m4; g += 4) {
    const int8_t *r = w + g * n;
    for (int32_t k = 0; k < n4; k += 4)
      for (int32_t pr = 0; pr < 4; pr += 2)
        for (int32_t s = 0; s < 2; s++) {
          *d++ = (int8_t)(r[pr * n + k + s] ^ 0x80); *d++ = r[(pr + 1) * n + k + s];
          *d++ = (int8_t)(r[pr * n + k + s + 2] ^ 0x80); *d++ = r[(pr + 1) * n + k + s + 2];
        }
    for (int32_t q = 0; q < 4; q++)
      for (int32_t k = n4; k < n; k++) *d++ = r[q * n + k];
  }
  for (int32_t i = m4 * n; i < m * n; i++) *d++ = w[i];
}
#endif

/* Runs layer p (weights, bias and quantisation set) on a random input with the set and the reference
 * set, and compares the outputs and the 8 bytes after them; on the cortex-m set also
 * bt_fully_connected_s8_il on the weights interleaved, when code generation would take it. */
static void fc_check(const char *name, int32_t t, const bt_fc_params *p) {
  fill(g_in, p->n_in * p->batches);
  const int32_t nout = p->n_out * p->batches + 8;
  fill(g_ref, nout); copy(g_opt, g_ref, nout);
  ref_bt_fully_connected_s8(p, g_in, g_ref);
  NOTE_FC(p);
  bt_fully_connected_s8(p, g_in, g_opt);
  check(name, t, g_ref, g_opt, nout);
#ifdef BT_VARIANTS_CORTEX_M
  if (p->filter_offset == 0 && p->n_in >= 4 && p->n_in <= 1280 && p->n_out >= 4 &&
      p->n_in * p->n_out <= (int32_t)sizeof g_wil) {
    bt_fc_params q = *p;
    fc_interleave(p->weights, p->n_in, p->n_out, g_wil);
    q.weights = g_wil;
    fill(g_opt, p->n_out * p->batches);   /* the 8 bytes after stay g_ref's */
    note_variant(bt_fully_connected_s8_il_variant(&q));
    bt_fully_connected_s8_il(&q, g_in, g_opt);
    check("fc_il", t, g_ref, g_opt, nout);
  }
#endif
}

static void test_fc(void) {
  for (int32_t t = 0; t < 40; t++) {
    bt_fc_params p;
    p.n_in = (t % 3 == 0) ? 4 * ri(1, 80) : ri(1, 300);
    p.n_out = ri(1, 40); p.batches = ri(1, 3);
    p.input_offset = ri(-127, 128); p.output_offset = ri(-128, 127);
    p.filter_offset = (t % 5 == 4) ? ri(-3, 3) : 0;
    rand_act(&p.act_min, &p.act_max, p.output_offset);
    fill(g_w, p.n_in * p.n_out);
    p.weights = g_w;
    for (int32_t i = 0; i < p.n_out; i++) g_bias[i] = ri(-30000, 30000);
    p.bias = (rnd() % 4) ? g_bias : NULL;
    p.per_channel = (int32_t)(rnd() & 1);
    rand_quant(p.n_out, 14 + ilog2((uint32_t)p.n_in) / 2);
    p.multiplier = g_mult; p.shift = g_shift;
    fc_check("fully_connected", t, &p);
  }
}

/* Fully connected at the sizes around the optimised sets' row and input blocks: n_in and n_out each
 * 1, 3, 5 and 17, per-channel and per-tensor, with and without bias, extreme input offsets, and one
 * output whose multiplier or shift bt_rq2 does not take (the generic requantisation). */
static void test_fc_sizes(void) {
  static const int32_t sizes[] = {1, 3, 5, 17};
  static const int32_t offs[] = {-127, 128, 0, 5};
  for (int32_t t = 0; t < 16; t++) {
    bt_fc_params p;
    p.n_in = sizes[t % 4]; p.n_out = sizes[t / 4]; p.batches = 1 + (t % 3 == 2);
    p.input_offset = offs[(t + t / 4) % 4]; p.output_offset = ri(-128, 127); p.filter_offset = 0;
    rand_act(&p.act_min, &p.act_max, p.output_offset);
    fill(g_w, p.n_in * p.n_out); p.weights = g_w;
    for (int32_t j = 0; j < p.n_out; j++) g_bias[j] = ri(-30000, 30000);
    p.bias = (t % 5 == 1) ? NULL : g_bias;
    p.per_channel = (t % 2 == 0);
    rand_quant(p.n_out, 14 + ilog2((uint32_t)p.n_in) / 2);
    if (t % 4 == 3) g_shift[ri(0, p.n_out - 1)] = ri(-1, 1);
    if (t % 8 == 5) g_mult[ri(0, p.n_out - 1)] = ri(1, (1 << 30) - 1);
    p.multiplier = g_mult; p.shift = g_shift;
    fc_check("fc_sizes", t, &p);
  }
}

/* Per-tensor fully connected on the whole int8 range with inputs a multiple of 32 (the cortex-m set's
 * widened path without tail steps) and around it, batches of 1-2, extreme input offsets, with and without
 * bias, and output shifts down to -26 (the requantisation's whole range of right shifts). */
static void test_fc_full(void) {
  static const int32_t sizes[] = {32, 64, 96, 640, 1280, 1248, 36, 128};
  for (int32_t t = 0; t < 16; t++) {
    bt_fc_params p;
    p.n_in = sizes[t % 8]; p.n_out = 1 + (t * 7) % 17; p.batches = 1 + (t % 5 == 3);
    p.input_offset = (t % 3 == 0) ? 128 : (t % 3 == 1) ? -127 : ri(-127, 128);
    p.output_offset = ri(-128, 127); p.filter_offset = 0;
    p.act_min = -128; p.act_max = 127;
    fill(g_w, p.n_in * p.n_out); p.weights = g_w;
    for (int32_t j = 0; j < p.n_out; j++) g_bias[j] = ri(-30000, 30000);
    p.bias = (t % 4 == 1) ? NULL : g_bias;
    p.per_channel = 0;
    rand_quant(1, 14 + ilog2((uint32_t)p.n_in) / 2);
    if (t == 5) g_shift[0] = -26;
    p.multiplier = g_mult; p.shift = g_shift;
    fc_check("fc_full", t, &p);
  }
}

/* The interleaved-weights variants each (cortex-m set; elsewhere the plain kernel): inputs of 4-70 values
 * (the asm's 32/16/8/4-value steps and the n % 4 tail), 4-13 outputs (the n_out % 4 rows), batches 1-2,
 * per-tensor and per-channel, the activation the whole range, RELU-like (act_max 127) or narrower, right
 * shifts within bt_rq2_zp_ok, beyond it (-23..-31) and a multiplier bt_rq2 does not take. */
static void test_fc_il(void) {
  for (int32_t t = 0; t < 40; t++) {
    bt_fc_params p;
    p.n_in = ri(4, 70); p.n_out = ri(4, 13); p.batches = 1 + (t % 3 == 1);
    p.input_offset = (t % 4 == 0) ? 128 : (t % 4 == 1) ? -127 : ri(-127, 128);
    p.output_offset = ri(-128, 127); p.filter_offset = 0;
    const int32_t act = t % 3;
    p.act_min = act == 0 ? -128 : ri(-128, 0); p.act_max = act == 2 ? ri(p.act_min, 126) : 127;
    fill(g_w, p.n_in * p.n_out); p.weights = g_w;
    if (t % 7 == 3) for (int32_t i = 0; i < p.n_in * p.n_out; i++) g_w[i] = (i & 1) ? -128 : 127;
    for (int32_t j = 0; j < p.n_out; j++) g_bias[j] = ri(-30000, 30000);
    p.bias = (t % 6 == 5) ? NULL : g_bias;
    p.per_channel = (t % 4 == 2);
    rand_quant(p.n_out, 14 + ilog2((uint32_t)p.n_in) / 2);
    if (t % 5 == 4) g_shift[0] = ri(-31, -23);
    if (t % 10 == 7) g_mult[0] = ri(1, (1 << 30) - 1);
    p.multiplier = g_mult; p.shift = g_shift;
    fc_check("fc_il_variants", t, &p);
  }
}
