/* QEMU TCG plugin (plugin API v1, QEMU 7.2 as in Debian bookworm): counts
   executed guest instructions, in total and per region. A region opens when
   the instruction at start=HEXADDR executes and closes at end=HEXADDR; every
   region is recorded in order, so with per-operator marker functions
   (firmware/common/markers.c) region k is the k-th executed operator.
   Options: out=FILE (else qemu_plugin_outs, visible with -d plugin),
   start=, end=, mode=insn (count per instruction instead of per block),
   mix=on (also the instruction mix of every region, below), pcs=FILE (a
   per-instruction profile of the whole run: one line "ADDR<TAB>N" per
   instruction address executed, N its executions; the runner folds them
   into functions with the ELF's symbols), pcs_region=K (that profile only
   inside the K-th region executed, 0 first: one operator or fused block).
   Output: insns_total=N, regions=K, region_counts=c0,c1,... (one line each).
   With mix=on, one more line per region and kind of instruction:
   "mix<TAB>region<TAB>count<TAB>key". The key is QEMU's disassembly of the
   instruction: its mnemonic alone, or the whole text when it writes pc or has
   a register list ("pop {r4, pc}"); a single load or store's key starts with
   '+' when it directly follows a single load in the same block whose
   destination its address does not use (the TRM's pipelined pair, 3.3.2),
   '~' when its address uses only that load's written-back base, and ends with
   " [reg]" when its address has a register offset ("ldr [reg]"). The key
   "(refill)" counts blocks entered at an address other than the end of the
   block executed before (taken branches, calls, returns, exceptions);
   "(other)" the instructions of kinds beyond the first 1022 seen.
   flash=ORIGIN:SIZE (hex; with mix=on): also count, per region, the accesses
   to that address range (the board's flash), for the cycle estimate's wait
   states: one more line per region "flash<TAB>region<TAB>fetches<TAB>
   branch fetches<TAB>loads". fetches: the 32-bit words of code executed from
   the range (each executed block's aligned words, a word shared with the
   block executed just before counted once); branch fetches: blocks entered
   there other than straight after the block before (the "(refill)"s whose
   target is in the range); loads: data reads whose address is in the range
   (one per access QEMU makes: an LDM or LDRD counts each word).
   mem=WS:READ:IL:ILB:IW:DL:DLB:DW:FLAGS (decimal; with flash=): a part's flash memory system, simulated
   on every fetch and load in the flash= range (firmware/memory_model.py documents the model): WS wait
   states, READ bytes a flash read delivers; an instruction cache of IL lines of ILB bytes, IW ways (IL = 0:
   none, IW = IL: fully associative), a data cache the same (DL, DLB, DW); replacement LRU; a line filled one
   flash read at a time; FLAGS bit 0: sequential prefetch (a fetch of the read after the one executing waits
   WS + 1 less the instructions executed from that one, not WS), bit 1: data loads go through the
   instruction cache (one cache on the code bus). One more line per region "mem<TAB>region<TAB>fetch
   stalls<TAB>load stalls<TAB>fetch misses<TAB>load misses": the cycles the core waits on flash reads the
   caches and prefetch did not hide, and the reads each side made.
   sbus=ORIGIN:SIZE (hex; with mem=): code executed from that range (the part's SRAM) is fetched over the
   core's System bus (Cortex-M4 TRM, System interface: a fetch there takes two cycles, no two back to back, data
   accesses first): a 32-bit word of code reached by falling through waits 2 less the instructions starting in
   the word before (each at least one cycle), never below 0; one reached by a taken branch 1; and each data access
   to the range made while executing from it 1 (the fetch it held off). Counted as fetch stalls; fetch misses
   stay the flash reads.
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
typedef uint32_t qemu_plugin_meminfo_t;
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                                          void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw, void *userdata);
_Bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
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
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t insn_count, region_start;
static uint64_t start_addr = ~0ull, end_addr = ~0ull;
static uint64_t *regions;
static size_t n_regions, cap_regions;
static int in_region, per_insn, with_mix;
static const char *outfile, *pcs_file;
static long long pcs_region = -1;

/* The per-instruction profile: one execution counter per translated block and the addresses of its
   instructions (a block translated again gets a new counter; at exit the counts of one address are
   summed). */
struct tb_count {
  uint64_t execs;
  size_t n;
  struct tb_count *next;
  uint64_t vaddr[];
};
struct pc_count {
  uint64_t vaddr, execs;
};
static struct tb_count *tb_counts;

/* The instruction mix: one counter per key, snapshots at region starts and ends. */
#define MAX_KEYS 1024
static char *keys[MAX_KEYS];
static uint64_t key_counts[MAX_KEYS], key_start[MAX_KEYS];
static size_t n_keys;
static uint64_t *mix; /* n_regions x MAX_KEYS */
static const struct tb_span *last_span; /* the block executed last (NULL before the first) */
/* the keys every mix has: refills, the kinds beyond MAX_KEYS, and the unaligned single loads and stores by their
   extra cycles (+1: a halfword-aligned word or a byte-aligned halfword, +2: a byte-aligned word) */
enum { REFILL_KEY = 0, OTHER_KEY = 1, UNALIGNED_LOAD1 = 2, UNALIGNED_LOAD2 = 3, UNALIGNED_STORE1 = 4,
       UNALIGNED_STORE2 = 5 };

/* flash=: accesses to [flash_lo, flash_lo + flash_size): fetched words, branch fetches, data loads; snapshots
   at region starts, one row per region. */
enum { FETCH = 0, BRANCH_FETCH = 1, LOAD = 2, N_FLASH = 3 };
static int with_flash;
static uint64_t flash_lo, flash_size;
static uint64_t flash_counts[N_FLASH], flash_start[N_FLASH];
static uint64_t *flash_rows; /* n_regions x N_FLASH */

static int in_flash(uint64_t a) { return a - flash_lo < flash_size; }

/* mem=: the flash memory system (see the top comment). A cache line holds (line / read) flash reads, each
   valid on its own (bit k of valid: the k-th read of the line); LRU by a use stamp. */
struct cache {
  unsigned sets, ways, line_shift;
  uint64_t *tag, *stamp, clock;
  uint32_t *valid;
};
enum { FETCH_STALL = 0, LOAD_STALL = 1, FETCH_MISS = 2, LOAD_MISS = 3, N_MEM = 4 };
static int with_mem, mem_prefetch, mem_unified;
static unsigned mem_ws, read_shift;
static struct cache icache, dcache;
static uint64_t mem_counts[N_MEM], mem_start[N_MEM], *mem_rows; /* n_regions x N_MEM */
static uint64_t cur_read = ~0ull, cur_insns, last_dread = ~0ull; /* the read the fetch unit holds, its insns */
/* sbus=: [sbus_lo, sbus_lo + sbus_size); the System-bus word the fetch unit holds, its instructions; whether the
   block executing is there */
static int with_sbus, on_sbus;
static uint64_t sbus_lo, sbus_size, cur_word = ~0ull, cur_word_insns;

static int in_sbus(uint64_t a) { return with_sbus && a - sbus_lo < sbus_size; }

/* The fetch unit moves to System-bus word w (4-aligned), n instructions starting in it; seq: by falling through. */
static void fetch_word(uint64_t w, int seq, uint64_t n) {
  if (w == cur_word) {
    cur_word_insns += n;
    return;
  }
  if (seq && cur_word != ~0ull && w == cur_word + 4) mem_counts[FETCH_STALL] += cur_word_insns >= 2 ? 0 : 2 - cur_word_insns;
  else mem_counts[FETCH_STALL] += 1;
  cur_word = w, cur_word_insns = n;
}

static unsigned log2u(unsigned v) {
  unsigned s = 0;
  while ((1u << s) < v) s++;
  return s;
}

static void cache_init(struct cache *c, unsigned lines, unsigned line_bytes, unsigned ways) {
  if (!lines) return;
  if (!ways || ways > lines) ways = lines;
  c->ways = ways, c->sets = lines / ways, c->line_shift = log2u(line_bytes);
  c->tag = calloc(lines, sizeof *c->tag), c->stamp = calloc(lines, sizeof *c->stamp);
  c->valid = calloc(lines, sizeof *c->valid);
  if (!c->tag || !c->stamp || !c->valid) abort();
}

/* 1 when the flash read at addr (read-aligned) is in cache c; else it is filled in (LRU victim) and 0. */
static int cache_access(struct cache *c, uint64_t addr) {
  uint64_t line = addr >> c->line_shift;
  uint32_t bit = 1u << ((addr >> read_shift) & ((1u << (c->line_shift - read_shift)) - 1));
  size_t base = (size_t)(line % c->sets) * c->ways, victim = base;
  for (size_t w = base; w < base + c->ways; w++) {
    if (c->valid[w] && c->tag[w] == line) {
      c->stamp[w] = ++c->clock;
      if (c->valid[w] & bit) return 1;
      c->valid[w] |= bit;
      return 0;
    }
    if (!c->valid[victim]) continue;
    if (!c->valid[w] || c->stamp[w] < c->stamp[victim]) victim = w;
  }
  c->tag[victim] = line, c->valid[victim] = bit, c->stamp[victim] = ++c->clock;
  return 0;
}

/* The fetch unit moves to flash read r (read-aligned address), n instructions starting in it; seq: reached
   by falling through from the read before (no taken branch). */
static void fetch_read(uint64_t r, int seq, uint64_t n) {
  if (r == cur_read) {
    cur_insns += n;
    return;
  }
  int sequential = seq && cur_read != ~0ull && r == cur_read + (1ull << read_shift);
  if (!(icache.sets && cache_access(&icache, r))) {
    uint64_t stall = mem_ws;
    if (sequential && mem_prefetch) stall = cur_insns >= mem_ws + 1 ? 0 : mem_ws + 1 - cur_insns;
    mem_counts[FETCH_STALL] += stall;
    mem_counts[FETCH_MISS]++;
  }
  cur_read = r, cur_insns = n;
}

static void load_read(uint64_t vaddr) {
  uint64_t r = vaddr >> read_shift << read_shift;
  struct cache *c = mem_unified ? &icache : &dcache;
  int hit = c->sets ? cache_access(c, r) : r == last_dread;
  last_dread = r;
  if (!hit) mem_counts[LOAD_STALL] += mem_ws, mem_counts[LOAD_MISS]++;
}

/* Every access of a single halfword or word load or store (with mix=on: mix_tb) and, with flash=, of any
   instruction: the flash loads, and
   the unaligned accesses by their size and address (a word at 2 mod 4 is two halfword accesses, at 1 or 3 mod 4
   a byte, a halfword and a byte; a halfword at an odd address two bytes). LDM, LDRD and the like fault when
   unaligned, so only single loads and stores can count. */
static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *u) {
  (void)vcpu;
  (void)u;
  const int store = qemu_plugin_mem_is_store(info);
  if (with_flash && in_flash(vaddr) && !store) {
    flash_counts[LOAD]++;
    if (with_mem) load_read(vaddr);
  }
  if (on_sbus && in_sbus(vaddr)) mem_counts[FETCH_STALL]++; /* the data access holds off a fetch */
  const unsigned shift = qemu_plugin_mem_size_shift(info);
  const int extra = shift == 2 ? ((vaddr & 1) ? 2 : (vaddr & 2) ? 1 : 0) : shift == 1 ? (int)(vaddr & 1) : 0;
  if (extra) key_counts[(store ? UNALIGNED_STORE1 : UNALIGNED_LOAD1) + extra - 1]++;
}

static size_t key_id(const char *key) {
  for (size_t i = 0; i < n_keys; i++)
    if (!strcmp(keys[i], key)) return i;
  if (n_keys == MAX_KEYS) return OTHER_KEY; /* every further kind of instruction: "(other)" */
  keys[n_keys] = strdup(key);
  return n_keys++;
}

static int starts_with(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

static int single_load_store(const char *m) {
  return (starts_with(m, "ldr") || starts_with(m, "str")) && !starts_with(m, "ldrd") && !starts_with(m, "strd") &&
         !starts_with(m, "ldrex") && !starts_with(m, "strex");
}

/* A memory operand "[rn, rm...]" (not "[rn]", "[rn, #imm]" or "[rn], #imm"). */
static int register_offset(const char *ops) {
  const char *b = strchr(ops, '[');
  if (!b) return 0;
  const char *c = strpbrk(b, ",]");
  return c && *c == ',' && c[1 + strspn(c + 1, " ")] != '#';
}

/* The registers a load writes: its destination (the first operand) and, with writeback ("[rn, #imm]!",
   "[rn], #imm"), its base; "" where none. */
struct load_regs {
  char dest[8], base[8];
};

/* The first register name at s (up to a ',', ']', '!' or space) into r. */
static void reg_name(const char *s, char *r, size_t cap) {
  s += strspn(s, " \t");
  size_t n = strcspn(s, ",]! \t");
  snprintf(r, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), s);
}

/* 1 when the memory operand "[...]" of ops names register r (its base or offset). */
static int address_uses(const char *ops, const char *r) {
  const char *b = strchr(ops, '[');
  if (!b || !*r) return 0;
  const char *e = strchr(b, ']');
  size_t n = strlen(r);
  for (const char *q = b + 1; q && (!e || q < e); q = strchr(q, ',')) {
    q += (*q == ',') + strspn(q + (*q == ','), " \t");
    if (!strncmp(q, r, n) && strchr(",] \t!", q[n])) return 1;
    if (!*q) break;
  }
  return 0;
}

/* The key of one instruction (see the top comment); *load: it is a single load, *regs the registers it
   writes (for the next instruction's pipelining test); prev: those of the single load just before, if
   after_load. */
static void text_key(const char *t, int after_load, const struct load_regs *prev, char *key, size_t cap, int *load,
                     struct load_regs *regs) {
  while (*t == ' ' || *t == '\t') t++;
  size_t m = strcspn(t, " \t");
  char mnem[32];
  snprintf(mnem, sizeof mnem, "%.*s", (int)(m < 31 ? m : 31), t);
  int mem = single_load_store(mnem);
  *load = mem && mnem[0] == 'l';
  const char *ops = t + m + strspn(t + m, " \t");
  int whole = starts_with(ops, "pc") || strchr(ops, '{') != NULL;
  /* after a single load (3.3.2): pipelined ("+") when its destination does not compute this address, not
     when it does; "~" when only its written-back base does (the TRM does not say) */
  const char *pre = !after_load || !mem || address_uses(ops, prev->dest) ? ""
                    : address_uses(ops, prev->base)                       ? "~"
                                                                          : "+";
  snprintf(key, cap, "%s%s%s", pre, whole ? t : mnem, mem && register_offset(ops) ? " [reg]" : "");
  regs->dest[0] = regs->base[0] = 0;
  if (*load) {
    reg_name(ops, regs->dest, sizeof regs->dest);
    const char *b = strchr(ops, '['), *e = b ? strchr(b, ']') : NULL;
    if (e && (e[1] == '!' || e[1 + strspn(e + 1, " \t")] == ',')) reg_name(b + 1, regs->base, sizeof regs->base);
  }
}

/* text_key of one translated instruction; *text its disassembly (the caller frees it). */
static void insn_key(struct qemu_plugin_insn *insn, int after_load, const struct load_regs *prev, char *key,
                     size_t cap, int *load, struct load_regs *regs, char **text) {
  *text = qemu_plugin_insn_disas(insn);
  text_key(*text ? *text : "?", after_load, prev, key, cap, load, regs);
}

/* 1 when the instruction a key names is a single load or store of a halfword or word (the only ones that may be
   unaligned). */
static int word_access(const char *key) {
  const char *m = key + (*key == '+' || *key == '~');
  return single_load_store(m) && !starts_with(m, "ldrb") && !starts_with(m, "strb") && !starts_with(m, "ldrsb");
}

/* The size of a Thumb instruction from its first halfword (32 bits when bits 15-11 are 0b11101, 0b11110 or
   0b11111). qemu_plugin_insn_size is not: QEMU 7.2's translator, deciding whether the instruction after the
   last one before a page's end crosses the page (insn_crosses_page), reads that instruction's first halfword
   into the last one's bytes, so its size is 2 too large, the block seems to end 2 bytes late and the next
   block (starting there) counts a phantom refill. */
static uint64_t thumb_size(const struct qemu_plugin_insn *insn) {
  const uint8_t *b = qemu_plugin_insn_data(insn);
  if (!b || qemu_plugin_insn_size(insn) < 2) return qemu_plugin_insn_size(insn);
  return (b[1] >> 3) < 0x1d ? 2 : 4;
}

/* A translated block for the refills, the flash fetches and the pipelined pairs across blocks: QEMU also ends a
   block where nothing branches (at a 1 KB page, after 512 instructions), and there a single load or store first
   in the block can pair with a single load last in the block before. Its key at translation is the one after no
   load (first_id); entered straight from a block ending in a single load (end_load, end_regs), the execution
   moves one count from first_id to the key text_key gives after that load (alt_id, cached for the last such
   block before, alt_prev). */
struct tb_span {
  uint64_t start, end;
  char *first_text;
  size_t first_id, alt_id;
  int end_load;
  struct load_regs end_regs;
  const struct tb_span *alt_prev;
  size_t n_reads;     /* mem=: the flash reads the block's instructions occupy, in order */
  uint64_t *reads, *read_insns; /* each read's address and the instructions starting in it */
  size_t n_words;     /* sbus=: the same in 32-bit words, for a block in the System-bus range */
  uint64_t *words, *word_insns;
};

static void on_tb(unsigned int vcpu, void *u) {
  (void)vcpu;
  struct tb_span *s = u;
  int refill = last_span && s->start != last_span->end;
  if (refill) key_counts[REFILL_KEY]++;
  if (!refill && last_span && last_span->end_load && s->first_text) {
    if (s->alt_prev != last_span) {
      char key[96];
      int load;
      struct load_regs regs;
      text_key(s->first_text, 1, &last_span->end_regs, key, sizeof key, &load, &regs);
      s->alt_id = key_id(key);
      s->alt_prev = last_span;
    }
    key_counts[s->first_id]--;
    key_counts[s->alt_id]++;
  }
  if (with_flash && in_flash(s->start)) {
    uint64_t words = ((s->end - 1) >> 2) - (s->start >> 2) + 1;
    if (!refill && last_span && (s->start & 3)) words--; /* its first word came with the block before */
    flash_counts[FETCH] += words;
    flash_counts[BRANCH_FETCH] += refill;
    for (size_t k = 0; with_mem && k < s->n_reads; k++) fetch_read(s->reads[k], k > 0 || !refill, s->read_insns[k]);
  } else if (with_mem) {
    cur_read = ~0ull; /* code from RAM: the fetch unit's flash read is gone */
  }
  on_sbus = in_sbus(s->start);
  for (size_t k = 0; on_sbus && k < s->n_words; k++) fetch_word(s->words[k], k > 0 || !refill, s->word_insns[k]);
  if (!on_sbus) cur_word = ~0ull;
  last_span = s;
}

static void mix_tb(struct qemu_plugin_tb *tb, size_t n) {
  size_t ids[n ? n : 1], uses[n ? n : 1], k = 0;
  int after_load = 0;
  struct load_regs prev = {"", ""}, cur;
  char key[96], *first_text = NULL;
  size_t first_id = 0;
  for (size_t i = 0; i < n; i++) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    char *text;
    insn_key(insn, after_load, &prev, key, sizeof key, &after_load, &cur, &text);
    prev = cur;
    if (!with_flash && word_access(key)) /* with flash=, tb_trans registers every instruction */
      qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
    size_t id = key_id(key), j = 0;
    if (i == 0) first_id = id, first_text = text && single_load_store(key) ? text : NULL; /* no prefix at i = 0 */
    if (text != first_text) free(text);
    while (j < k && ids[j] != id) j++;
    if (j == k) ids[k] = id, uses[k++] = 0;
    uses[j]++;
  }
  for (size_t j = 0; j < k; j++)
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &key_counts[ids[j]], uses[j]);
  struct tb_span *s = calloc(1, sizeof *s);
  if (!s) abort();
  struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
  s->start = qemu_plugin_tb_vaddr(tb);
  s->end = qemu_plugin_insn_vaddr(last) + thumb_size(last);
  s->first_text = first_text;
  s->first_id = first_id;
  s->end_load = after_load;
  s->end_regs = prev;
  if (with_mem) {
    s->reads = calloc(2 * n + 1, sizeof *s->reads), s->read_insns = calloc(2 * n + 1, sizeof *s->read_insns);
    if (!s->reads || !s->read_insns) abort();
    for (size_t i = 0; i < n; i++) {
      struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
      uint64_t a = qemu_plugin_insn_vaddr(insn), first = a >> read_shift << read_shift,
               last = (a + thumb_size(insn) - 1) >> read_shift << read_shift;
      if (!s->n_reads || s->reads[s->n_reads - 1] != first) s->reads[s->n_reads++] = first;
      s->read_insns[s->n_reads - 1]++;
      if (last != first) s->reads[s->n_reads++] = last; /* an instruction across two reads needs both */
    }
  }
  if (with_mem && in_sbus(s->start)) {
    s->words = calloc(2 * n + 1, sizeof *s->words), s->word_insns = calloc(2 * n + 1, sizeof *s->word_insns);
    if (!s->words || !s->word_insns) abort();
    for (size_t i = 0; i < n; i++) {
      struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
      uint64_t a = qemu_plugin_insn_vaddr(insn), first = a & ~3ull, last = (a + thumb_size(insn) - 1) & ~3ull;
      if (!s->n_words || s->words[s->n_words - 1] != first) s->words[s->n_words++] = first;
      s->word_insns[s->n_words - 1]++;
      if (last != first) s->words[s->n_words++] = last;
    }
  }
  qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb, QEMU_PLUGIN_CB_NO_REGS, s);
}

static void on_start(unsigned int vcpu, void *u) {
  (void)vcpu;
  (void)u;
  region_start = insn_count;
  in_region = 1;
  if (with_mix) memcpy(key_start, key_counts, sizeof key_counts);
  if (with_flash) memcpy(flash_start, flash_counts, sizeof flash_counts);
  if (with_mem) memcpy(mem_start, mem_counts, sizeof mem_counts);
}

static void on_end(unsigned int vcpu, void *u) {
  (void)vcpu;
  (void)u;
  if (!in_region) return;
  if (n_regions == cap_regions) {
    cap_regions = cap_regions ? 2 * cap_regions : 256;
    regions = realloc(regions, cap_regions * sizeof *regions);
    if (with_mix) mix = realloc(mix, cap_regions * sizeof key_counts);
    if (with_flash) flash_rows = realloc(flash_rows, cap_regions * sizeof flash_counts);
    if (with_mem) mem_rows = realloc(mem_rows, cap_regions * sizeof mem_counts);
    if (!regions || (with_mix && !mix) || (with_flash && !flash_rows) || (with_mem && !mem_rows)) abort();
  }
  if (with_mix)
    for (size_t i = 0; i < MAX_KEYS; i++) mix[n_regions * MAX_KEYS + i] = key_counts[i] - key_start[i];
  if (with_flash)
    for (size_t i = 0; i < N_FLASH; i++) flash_rows[n_regions * N_FLASH + i] = flash_counts[i] - flash_start[i];
  if (with_mem)
    for (size_t i = 0; i < N_MEM; i++) mem_rows[n_regions * N_MEM + i] = mem_counts[i] - mem_start[i];
  regions[n_regions++] = insn_count - region_start;
  in_region = 0;
}

/* pcs_region: a block's executions counted only while the chosen region is open. */
static void on_tb_pcs(unsigned int vcpu, void *u) {
  (void)vcpu;
  if (in_region && (long long)n_regions == pcs_region) ((struct tb_count *)u)->execs++;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  if (!per_insn) qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insn_count, n);
  for (size_t i = 0; i < n; i++) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    if (per_insn) qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &insn_count, 1);
    /* reads and writes (QEMU 7.2 calls a callback registered for reads only, QEMU_PLUGIN_MEM_R, on the stores
       instead), on_mem telling them apart; without flash= mix_tb registers the word and halfword accesses only */
    if (with_flash) qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
    uint64_t va = qemu_plugin_insn_vaddr(insn);
    if (va == start_addr) qemu_plugin_register_vcpu_insn_exec_cb(insn, on_start, QEMU_PLUGIN_CB_NO_REGS, NULL);
    if (va == end_addr) qemu_plugin_register_vcpu_insn_exec_cb(insn, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
  }
  if (with_mix && n) mix_tb(tb, n);
  if (pcs_file && n) {
    struct tb_count *c = calloc(1, sizeof *c + n * sizeof c->vaddr[0]);
    if (!c) abort();
    c->n = n;
    for (size_t i = 0; i < n; i++) c->vaddr[i] = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i));
    c->next = tb_counts;
    tb_counts = c;
    if (pcs_region >= 0) qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_pcs, QEMU_PLUGIN_CB_NO_REGS, c);
    else qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &c->execs, 1);
  }
}

static int by_vaddr(const void *a, const void *b) {
  uint64_t x = ((const struct pc_count *)a)->vaddr, y = ((const struct pc_count *)b)->vaddr;
  return x < y ? -1 : x > y;
}

/* pcs=FILE: "ADDR<TAB>N" by increasing address, the counts of one address summed. */
static void write_pcs(void) {
  size_t n = 0, i = 0;
  for (struct tb_count *c = tb_counts; c; c = c->next) n += c->execs ? c->n : 0;
  struct pc_count *all = malloc((n ? n : 1) * sizeof *all);
  FILE *f = fopen(pcs_file, "w");
  if (!all || !f) abort();
  for (struct tb_count *c = tb_counts; c; c = c->next)
    for (size_t k = 0; c->execs && k < c->n; k++) all[i].vaddr = c->vaddr[k], all[i++].execs = c->execs;
  qsort(all, n, sizeof *all, by_vaddr);
  for (i = 0; i < n;) {
    uint64_t va = all[i].vaddr, sum = 0;
    for (; i < n && all[i].vaddr == va; i++) sum += all[i].execs;
    fprintf(f, "%llx\t%llu\n", (unsigned long long)va, (unsigned long long)sum);
  }
  fclose(f);
  free(all);
}

static void write_mix(FILE *f) {
  for (size_t r = 0; r < n_regions; r++)
    for (size_t i = 0; i < n_keys; i++)
      if (mix[r * MAX_KEYS + i])
        fprintf(f, "mix\t%llu\t%llu\t%s\n", (unsigned long long)r, (unsigned long long)mix[r * MAX_KEYS + i], keys[i]);
  for (size_t r = 0; with_flash && r < n_regions; r++) {
    const uint64_t *c = flash_rows + r * N_FLASH;
    fprintf(f, "flash\t%llu\t%llu\t%llu\t%llu\n", (unsigned long long)r, (unsigned long long)c[FETCH],
            (unsigned long long)c[BRANCH_FETCH], (unsigned long long)c[LOAD]);
  }
  for (size_t r = 0; with_mem && r < n_regions; r++) {
    const uint64_t *c = mem_rows + r * N_MEM;
    fprintf(f, "mem\t%llu\t%llu\t%llu\t%llu\t%llu\n", (unsigned long long)r, (unsigned long long)c[FETCH_STALL],
            (unsigned long long)c[LOAD_STALL], (unsigned long long)c[FETCH_MISS], (unsigned long long)c[LOAD_MISS]);
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
    if (with_mix) write_mix(f);
    fclose(f);
  } else {
    snprintf(buf, sizeof buf, "insns_total=%llu\n", (unsigned long long)insn_count);
    qemu_plugin_outs(buf);
    snprintf(buf, sizeof buf, "insns_region=%llu regions=%llu\n", (unsigned long long)sum,
             (unsigned long long)n_regions);
    qemu_plugin_outs(buf);
  }
  if (pcs_file) write_pcs();
  free(regions);
  free(mix);
  free(flash_rows);
  free(mem_rows);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                               int argc, char **argv) {
  (void)info;
  for (int i = 0; i < argc; i++) {
    if (!strncmp(argv[i], "out=", 4)) outfile = argv[i] + 4;
    else if (!strncmp(argv[i], "start=", 6)) start_addr = strtoull(argv[i] + 6, NULL, 16);
    else if (!strncmp(argv[i], "end=", 4)) end_addr = strtoull(argv[i] + 4, NULL, 16);
    else if (!strcmp(argv[i], "mode=insn")) per_insn = 1;
    else if (!strcmp(argv[i], "mix=on")) with_mix = 1;
    else if (!strncmp(argv[i], "pcs=", 4)) pcs_file = argv[i] + 4;
    else if (!strncmp(argv[i], "pcs_region=", 11)) pcs_region = strtoll(argv[i] + 11, NULL, 10);
    else if (!strncmp(argv[i], "flash=", 6)) {
      char *colon;
      flash_lo = strtoull(argv[i] + 6, &colon, 16);
      if (*colon == ':') flash_size = strtoull(colon + 1, NULL, 16), with_flash = 1;
    } else if (!strncmp(argv[i], "sbus=", 5)) {
      char *colon;
      sbus_lo = strtoull(argv[i] + 5, &colon, 16);
      if (*colon == ':') sbus_size = strtoull(colon + 1, NULL, 16), with_sbus = 1;
    } else if (!strncmp(argv[i], "mem=", 4)) {
      unsigned v[9];
      if (sscanf(argv[i] + 4, "%u:%u:%u:%u:%u:%u:%u:%u:%u", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
                 &v[8]) == 9 && v[1] && (!v[2] || v[3] >= v[1]) && (!v[5] || v[6] >= v[1])) {
        with_mem = 1, mem_ws = v[0], read_shift = log2u(v[1]), mem_prefetch = v[8] & 1, mem_unified = (v[8] >> 1) & 1;
        cache_init(&icache, v[2], v[3], v[4]);
        cache_init(&dcache, v[5], v[6], v[7]);
      }
    }
  }
  with_flash = with_flash && with_mix;
  with_mem = with_mem && with_flash;
  with_sbus = with_sbus && with_mem;
  if (with_mix)
    key_id("(refill)"), key_id("(other)"), key_id("(unaligned load +1)"), key_id("(unaligned load +2)"),
        key_id("(unaligned store +1)"), key_id("(unaligned store +2)");
  qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
