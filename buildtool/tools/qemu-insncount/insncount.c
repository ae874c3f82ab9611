/* QEMU TCG plugin (plugin API v1, QEMU 7.2 as in Debian bookworm): counts
   executed guest instructions, in total and per region. A region opens when
   the instruction at start=HEXADDR executes and closes at end=HEXADDR; every
   region is recorded in order, so with per-operator marker functions
   (firmware/common/markers.c) region k is the k-th executed operator.
   Options: out=FILE (else qemu_plugin_outs, visible with -d plugin),
   start=, end=, mode=insn (count per instruction instead of per block).
   Output: insns_total=N, regions=K, region_counts=c0,c1,... (one line each).
   Debian ships no qemu-plugin.h, so the few v1 entry points are declared here.
   Based on the shared toolchain kit's plugin. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op, void *ptr,
                                                uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t insn_count, region_start;
static uint64_t start_addr = ~0ull, end_addr = ~0ull;
static uint64_t *regions;
static size_t n_regions, cap_regions;
static int in_region, per_insn;
static const char *outfile;

static void on_start(unsigned int vcpu, void *u) {
  (void)vcpu;
  (void)u;
  region_start = insn_count;
  in_region = 1;
}

static void on_end(unsigned int vcpu, void *u) {
  (void)vcpu;
  (void)u;
  if (!in_region) return;
  if (n_regions == cap_regions) {
    cap_regions = cap_regions ? 2 * cap_regions : 256;
    regions = realloc(regions, cap_regions * sizeof *regions);
    if (!regions) abort();
  }
  regions[n_regions++] = insn_count - region_start;
  in_region = 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  if (!per_insn) qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insn_count, n);
  for (size_t i = 0; i < n; i++) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    if (per_insn) qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &insn_count, 1);
    uint64_t va = qemu_plugin_insn_vaddr(insn);
    if (va == start_addr) qemu_plugin_register_vcpu_insn_exec_cb(insn, on_start, QEMU_PLUGIN_CB_NO_REGS, NULL);
    if (va == end_addr) qemu_plugin_register_vcpu_insn_exec_cb(insn, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
  }
}

static void at_exit(qemu_plugin_id_t id, void *p) {
  (void)id;
  (void)p;
  FILE *f = outfile ? fopen(outfile, "w") : NULL;
  char buf[64];
  uint64_t sum = 0;
  for (size_t i = 0; i < n_regions; i++) sum += regions[i];
  if (f) {
    fprintf(f, "insns_total=%llu\ninsns_region=%llu\nregions=%llu\nregion_counts=",
            (unsigned long long)insn_count, (unsigned long long)sum, (unsigned long long)n_regions);
    for (size_t i = 0; i < n_regions; i++) fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)regions[i]);
    fputs("\n", f);
    fclose(f);
  } else {
    snprintf(buf, sizeof buf, "insns_total=%llu\n", (unsigned long long)insn_count);
    qemu_plugin_outs(buf);
    snprintf(buf, sizeof buf, "insns_region=%llu regions=%llu\n", (unsigned long long)sum,
             (unsigned long long)n_regions);
    qemu_plugin_outs(buf);
  }
  free(regions);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                               int argc, char **argv) {
  (void)info;
  for (int i = 0; i < argc; i++) {
    if (!strncmp(argv[i], "out=", 4)) outfile = argv[i] + 4;
    else if (!strncmp(argv[i], "start=", 6)) start_addr = strtoull(argv[i] + 6, NULL, 16);
    else if (!strncmp(argv[i], "end=", 4)) end_addr = strtoull(argv[i] + 4, NULL, 16);
    else if (!strcmp(argv[i], "mode=insn")) per_insn = 1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
