"""A real part's flash memory system for the cycle estimate: wait states at the part's clock, the flash read
width, the flash accelerator's (or the core's) caches and prefetch; SRAM and TCM at zero wait states.

The QEMU plugin (`tools/qemu-insncount`, `mem=`) simulates the model on every instruction fetch and data load
in the part's flash and counts, per profiled region, the cycles the core waits: the "memory stalls". The
modelled cycles of a region are its zero-wait estimate's high (cycles.estimate: the Cortex-M4 TRM's table, or
the Cortex-M7 model's single-issue side) plus those stalls. The model, read by the plugin:

- Flash is read `read_bytes` at a time; a read the caches and prefetch do not hold costs `wait_states`
  cycles of stall (the access takes WS + 1 cycles where the zero-wait table counts 1).
- Instruction fetch: the fetch unit holds one flash read; moving to another one looks it up in the instruction
  cache (a hit: no stall). A miss costs WS, or, with sequential prefetch and the read straight after the one
  executing (no taken branch between), WS + 1 less the instructions executed from the read before (each at
  least one cycle: the prefetch started when that read arrived), never below 0.
- Data loads from flash (weights, literal pools, tables): the data cache (or the instruction cache where the
  part has one cache on the code bus, `unified`); a miss costs WS. No data prefetch.
- Caches: `lines` lines of `line_bytes`, `ways` ways (ways == lines: fully associative), LRU replacement, a line
  filled one flash read at a time (each read of a line valid on its own). Where a manual does not give the
  associativity or the replacement, the model takes fully associative LRU: a loop pass over more lines than
  the cache holds then misses on every line (random replacement would keep some); that is the slower reading.
- SRAM, TCM: data at zero wait states (their cost is the TRM's table). Code executed from SRAM on a Cortex-M4 part
  whose SRAM sits on the core's System bus (`sbus`: the L4R5's SRAM1-3 at 0x20000000; RM0432 §2.1 System
  architecture, S-bus: "instructions may also be fetched on this bus (less efficient than ICode)") costs what the
  Cortex-M4 TRM (DDI 0439 §2.3.1 Bus interfaces, System interface) gives it: instruction fetches there are
  registered, each takes two cycles and no two go back to back, and data accesses win the bus over fetches. The
  model reads that as its slower reading: the fetch unit takes a 32-bit word every other cycle at best, a word
  reached by falling through waits 2 less the instructions starting in the word before (each taken as one cycle,
  none overlapping more), never below 0, one reached by a taken branch 1 (the extra cycle of latency), and every
  data access to that SRAM made while executing from it 1 (the fetch it held off). The plugin counts these with
  the fetch stalls (its `sbus=` option). Not modelled: bus contention between the
  fetch and data sides on the same flash, the prefetch buffer's depth beyond one read, flash reads that
  cross the AHB at the core's own fetch width, write buffers, the clock set-up itself (this project's
  start-up code leaves each part on its reset clock with the accelerator off; the model is the part set up as
  the records were run: full clock, the wait states that clock needs, caches and prefetch on).

Each part's figures and where they come from are in its `source`; docs/memory-model.md lists which were
checked and how.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import cycles


@dataclass(frozen=True)
class Cache:
    lines: int
    line_bytes: int
    ways: int  # == lines: fully associative

    def describe(self) -> str:
        size = self.lines * self.line_bytes
        how = "fully associative" if self.ways >= self.lines else f"{self.ways}-way"
        return f"{size // 1024 if size >= 1024 else size} {'KiB' if size >= 1024 else 'B'} ({self.lines} x " \
               f"{self.line_bytes} B, {how}, LRU)"


@dataclass(frozen=True)
class MemoryModel:
    part: str
    clock_hz: int
    wait_states: int
    read_bytes: int
    icache: Cache | None
    dcache: Cache | None
    prefetch: bool
    unified: bool  # data loads from flash go through the instruction cache (one cache on the code bus)
    accelerator: str  # what holds the caches ("ART accelerator", "Cortex-M7 L1", "ICACHE")
    source: str  # the manual's sections every figure comes from
    choices: str  # where the manual leaves a choice open and which reading the model takes
    other_read_bytes: int = 0  # the faster read width the manual leaves open (reported beside, not modelled)
    # code generation builds for this model (the record board's part: weights staged in SRAM, firmware/staging.py;
    # its kernels' BT_ICACHE_BYTES, boards/cortex_m/parts.py); every other part keeps its CPU's common code
    tuned: bool = False
    # (origin, bytes) of the SRAM on the core's System bus, whose code fetches cost two cycles a word (above); None:
    # the part's code runs from flash only in this build
    sbus: tuple | None = None

    def other_reading(self) -> "MemoryModel | None":
        """The same part with the faster flash read width the manual also allows, None when it allows one."""
        return replace(self, read_bytes=self.other_read_bytes, other_read_bytes=0) if self.other_read_bytes else None

    def plugin_option(self) -> str:
        """The plugin's mem= argument (tools/qemu-insncount)."""
        ic, dc = self.icache or Cache(0, 0, 0), self.dcache or Cache(0, 0, 0)
        flags = int(self.prefetch) | (int(self.unified) << 1)
        return (f"mem={self.wait_states}:{self.read_bytes}:{ic.lines}:{ic.line_bytes}:{ic.ways}:"
                f"{dc.lines}:{dc.line_bytes}:{dc.ways}:{flags}"
                + (f",sbus={self.sbus[0]:x}:{self.sbus[1]:x}" if self.sbus else ""))

    def summary(self) -> str:
        """One line naming the model (the run report's "modelled cycles (BOARD, summary)")."""
        caches = [f"I-cache {self.icache.describe()}" if self.icache else "no I-cache"]
        if self.unified:
            caches.append("data loads through it")
        elif self.dcache:
            caches.append(f"D-cache {self.dcache.describe()}")
        return (f"{self.clock_hz / 1e6:g} MHz, {self.wait_states} flash wait states, {8 * self.read_bytes}-bit "
                f"flash reads, {self.accelerator} {', '.join(caches)}"
                + (", sequential prefetch" if self.prefetch else ", no prefetch") + "; SRAM 0 WS"
                + (" (code from it: System bus, 2 cycles a word)" if self.sbus else ""))

    def stream_floor(self, nbytes: int) -> int:
        """Cycles the flash needs to deliver nbytes read once in order, each read WS + 1 cycles: no kernel
        that reads those bytes from flash runs in fewer (a floor on a layer that streams its weights)."""
        return -(-nbytes // self.read_bytes) * (self.wait_states + 1)

    def copy_cycles(self, nbytes: int) -> int:
        """Cycles copying nbytes of weights from flash into SRAM takes (codegen/emitter.py STAGE_COPY): the flash
        reads (stream_floor) and COPY_CYCLES_PER_WORD a 32-bit word for the loop."""
        return self.stream_floor(nbytes) + -(-nbytes // 4) * COPY_CYCLES_PER_WORD

    def data_cache_bytes(self) -> int:
        """Bytes of flash data the caches hold: the data cache, or the one cache data loads go through."""
        c = self.icache if self.unified else self.dcache
        return c.lines * c.line_bytes if c else 0

    def staging_gain(self, nbytes: int, passes: int) -> int:
        """Cycles saved by copying nbytes of weights from flash into SRAM once (COPY_CYCLES_PER_WORD a word
        besides the flash reads, stream_floor) where a layer reads them `passes` times in order: with the
        bytes above what the caches hold, every read of every pass after the first misses (LRU over a stream
        longer than the cache) and costs the wait states; within the cache, none. Negative: it does not pay."""
        copy = self.copy_cycles(nbytes)
        misses = (passes - 1) * -(-nbytes // self.read_bytes) if nbytes > self.data_cache_bytes() else 0
        return misses * self.wait_states - copy


# the staging copy's loop (codegen/emitter.py STAGE_COPY), per 32-bit word: four words a pass by an LDM and an STM
# of four registers (1 + 4 cycles each, Cortex-M4 TRM DDI 0439 §3.3.1) and the loop's count and branch (1 + 3),
# 14 cycles a pass, rounded up
COPY_CYCLES_PER_WORD = 4


K = 1024
MODELS = {m.part: m for m in (
    MemoryModel(
        "nucleo-l4r5zi", 120_000_000, 5, 8, Cache(32, 32, 32), Cache(8, 32, 8), True, False, "ART accelerator",
        "ST RM0432 rev 9 §3.3.3 Read access latency (Table 'Number of wait states according to CPU clock (HCLK) "
        "frequency': 5 WS for 100 < HCLK <= 120 MHz in range 1 boost mode), §3.3.4 Adaptive real-time memory "
        "accelerator (ART Accelerator): instruction prefetch, instruction cache of 32 lines of 4 x 64 bits (1 KB), "
        "data cache of 8 lines of 4 x 64 bits (256 B); §3.2 flash organisation (dual bank, DBANK = 1: 64-bit "
        "data; single bank: 128-bit); §2.1 System architecture (SRAM1, SRAM2, SRAM3 at 0x20000000, 640 KB, on "
        "the S-bus; code fetched there over the core's System bus) and Arm Cortex-M4 TRM (DDI 0439) §2.3.1 Bus "
        "interfaces (System interface: instruction fetches registered, two cycles each, not back to back, data "
        "accesses first)",
        "flash read width 64 bits (dual-bank organisation) rather than 128 (single bank); cache associativity and "
        "replacement not stated: fully associative LRU; code from SRAM (System bus): a fetch of two cycles, "
        "executing one cycle an instruction, every data access there holding off a fetch",
        other_read_bytes=16, tuned=True, sbus=(0x20000000, 640 * K)),
    MemoryModel(
        "netduinoplus2", 168_000_000, 5, 16, Cache(64, 16, 64), Cache(8, 16, 8), True, False, "ART accelerator",
        "ST RM0090 rev 19 §3.5.1 Relation between CPU clock frequency and flash memory read time (Table 'Number "
        "of wait states according to CPU clock (HCLK) frequency': 5 WS for 150 < HCLK <= 168 MHz at 2.7-3.6 V), "
        "§3.2 Main features and §3.5.2 Adaptive real-time memory accelerator: 128-bit flash memory bus, prefetch "
        "on I-Code, 64 cache lines of 128 bits on I-Code, 8 cache lines of 128 bits on D-Code",
        "cache associativity and replacement not stated: fully associative LRU; supply 2.7-3.6 V"),
    MemoryModel(
        "stm32f746g-disco", 216_000_000, 7, 32, Cache(128, 32, 2), Cache(128, 32, 4), False, False,
        "Cortex-M7 L1",
        "ST RM0385 rev 8 §3.3.2 Read access latency (Table 'Number of wait states according to CPU clock (HCLK) "
        "frequency': 7 WS for 210 < HCLK <= 216 MHz at 2.7-3.6 V), §3.3.1 flash read width 256 bits, §2.1 "
        "System architecture (flash on AXIM through the core's L1 caches: 4 KB I-cache, 4 KB D-cache; DTCM 64 KB "
        "and ITCM 16 KB at zero wait states); Arm Cortex-M7 TRM (DDI 0489) §5 Level 1 caches: 32-byte lines, "
        "I-cache 2-way, D-cache 4-way",
        "the ART accelerator and prefetch serve the ITCM path only (code at 0x00200000), which this build does "
        "not use: no prefetch on AXIM; L1 replacement taken as LRU (the TRM's pseudo-random option not)"),
    MemoryModel(
        "nucleo-u575zi", 160_000_000, 4, 16, Cache(512, 16, 2), None, False, True, "ICACHE",
        "ST RM0456 rev 4 §7.3.3 Read access latency (Table 'Number of wait states according to CPU clock (HCLK) "
        "frequency': 4 WS for 128 < HCLK <= 160 MHz in range 1), §7.3.1 128-bit flash reads, §8 Instruction "
        "cache (ICACHE): 8 Kbytes, 2-way set associative (default), 16-byte lines, on the C-AHB code bus "
        "(instruction fetches and data reads from flash); DCACHE1 serves external memories only",
        "ICACHE replacement pLRU-t taken as LRU; flash prefetch (PRFTEN) not modelled"),
)}


def get(board: str) -> MemoryModel | None:
    """The memory model of a board that has one (a real part whose CPU has a cycle model), else None."""
    return MODELS.get(board)


def modelled_cycles(mix: dict, stalls: dict, cpu: str) -> int:
    """A region's modelled cycles: its zero-wait estimate's high plus the memory stalls the plugin counted."""
    return cycles.estimate(mix, cpu=cpu)[1] + stalls["fetch_stalls"] + stalls["load_stalls"]


def read_stalls(text: str, n: int) -> list:
    """The n regions' memory stalls [{"fetch_stalls", "load_stalls", "fetch_misses", "load_misses"}] from the
    plugin's "mem" lines."""
    keys = ("fetch_stalls", "load_stalls", "fetch_misses", "load_misses")
    out = [dict.fromkeys(keys, 0) for _ in range(n)]
    for line in text.splitlines():
        if line.startswith("mem\t"):
            f = line.split("\t")
            out[int(f[1])] = dict(zip(keys, map(int, f[2:6])))
    return out


__all__ = ["Cache", "MemoryModel", "MODELS", "get", "modelled_cycles", "read_stalls"]
