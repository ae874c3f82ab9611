"""Read a firmware's SEGGER RTT console out of an emulator's memory, the way a debug probe reads a real part.

    python3 rtt.py -- qemu-system-arm -M netduinoplus2 ... -kernel firmware.elf

starts the emulator command paused, with a GDB stub on a private socket (a folder of its own, no TCP
port), and then, every POLL_S, stops the core, reads the RTT control block and its up-buffer 0
through the GDB remote protocol ('m' reads, 'M' to move the read offset as a probe does), prints the
new text on stdout and lets the core run on. The firmware ends (common/rtt_io.c: bt_exit) by writing
"bt_exit=N" and waiting in a loop: the reader then ends the emulator (its plugins still write their
files) and exits with N. If the emulator exits first (a semihosting exit), the reader exits with its
status. The block is found by the _SEGGER_RTT symbol of the ELF (--elf, else the one after -kernel), or
by scanning the --scan ranges for its id, as J-Link and probe-rs do when they have no symbol.

Stdlib only, and no import of the package: it runs as a script (targets/platform.py: RttPlatform).
The control block layout is in common/rtt_io.c.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

POLL_S = 0.02
CONNECT_S = 10.0
RTT_ID = b"SEGGER RTT\0"
EXIT_LINE = re.compile(rb"(?:^|\n)bt_exit=(\d+)\n")


class GdbError(Exception):
    pass


class Gdb:
    """A minimal GDB remote-protocol client (acknowledged mode): packets, memory reads and writes,
    continue and interrupt."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = b""

    def _recv(self, timeout: float | None) -> bytes:
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return b""
        if not data:
            raise GdbError("the emulator closed the GDB connection")
        return data

    def _packet(self, timeout: float | None = 5.0) -> bytes | None:
        """The next packet's payload (acknowledged), None when none came within timeout."""
        end = time.monotonic() + timeout if timeout is not None else None
        while True:
            start = self.buf.find(b"$")
            if start >= 0:
                hash_at = self.buf.find(b"#", start)
                if hash_at >= 0 and len(self.buf) >= hash_at + 3:
                    payload = self.buf[start + 1:hash_at]
                    self.buf = self.buf[hash_at + 3:]
                    self.sock.sendall(b"+")
                    return _unescape(payload)
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return None
            self.buf += self._recv(left)

    def command(self, payload: bytes, reply: bool = True) -> bytes | None:
        frame = b"$" + payload + b"#" + b"%02x" % (sum(payload) & 0xFF)
        for _ in range(3):
            self.sock.sendall(frame)
            if self._ack():
                break
        else:
            raise GdbError(f"no acknowledgement for {payload[:20]!r}")
        return self._packet() if reply else None

    def _ack(self) -> bool:
        while True:
            while self.buf[:1] not in (b"+", b"-", b""):
                if self.buf[:1] == b"$":  # an unsolicited packet (a stop reply): keep it for _packet
                    return True
                self.buf = self.buf[1:]
            if self.buf[:1] == b"+":
                self.buf = self.buf[1:]
                return True
            if self.buf[:1] == b"-":
                self.buf = self.buf[1:]
                return False
            self.buf += self._recv(5.0)

    def read(self, addr: int, n: int) -> bytes:
        out = b""
        while len(out) < n:
            k = min(1024, n - len(out))
            r = self.command(b"m%x,%x" % (addr + len(out), k))
            if r is None or r.startswith(b"E") or len(r) != 2 * k:
                raise GdbError(f"cannot read {k} bytes at 0x{addr + len(out):x}: {r!r}")
            out += bytes.fromhex(r.decode())
        return out

    def write(self, addr: int, data: bytes) -> None:
        r = self.command(b"M%x,%x:" % (addr, len(data)) + data.hex().encode())
        if r != b"OK":
            raise GdbError(f"cannot write at 0x{addr:x}: {r!r}")

    def run_for(self, seconds: float) -> bytes | None:
        """Let the core run; a stop reply if it stopped by itself within seconds, else interrupt it."""
        self.command(b"c", reply=False)
        stop = self._packet(seconds)
        if stop is not None:
            return stop
        self.sock.sendall(b"\x03")
        stop = self._packet(5.0)
        if stop is None:
            raise GdbError("the core did not stop when interrupted")
        return None


def _unescape(payload: bytes) -> bytes:
    out, i = bytearray(), 0
    while i < len(payload):
        c = payload[i]
        if c == 0x7D and i + 1 < len(payload):
            out.append(payload[i + 1] ^ 0x20)
            i += 2
        else:
            out.append(c)
            i += 1
    return bytes(out)


def elf_symbol(path: str, name: str) -> int | None:
    """The value of symbol name in a 32-bit little-endian ELF (its .symtab), or None."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
    sections = [struct.unpack_from("<IIIIIIIIII", data, shoff + k * shentsize) for k in range(shnum)]
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 16):
            st_name, st_value = struct.unpack_from("<II", data, off)
            start = strtab[4] + st_name
            if data[start:data.index(b"\0", start)] == name.encode():
                return st_value
    return None


class Rtt:
    """Up-buffer 0 of the control block at addr (found by symbol or by scanning), read as a probe reads it."""

    def __init__(self, gdb: Gdb, addr: int | None, scan: list):
        self.gdb, self.addr, self.scan = gdb, addr, scan

    def _find(self) -> int | None:
        if self.addr is not None:
            return self.addr if self.gdb.read(self.addr, 16)[:len(RTT_ID)] == RTT_ID else None
        for lo, n in self.scan:  # 256-byte pieces: a piece the emulator refuses (an MPU guard) is skipped
            prev = b""
            for off in range(0, n, 256):
                try:
                    piece = self.gdb.read(lo + off, min(256, n - off))
                except GdbError:
                    prev = b""
                    continue
                both = prev + piece
                k = both.find(RTT_ID)
                if k >= 0 and (lo + off - len(prev) + k) % 4 == 0:
                    return lo + off - len(prev) + k
                prev = piece[-16:]
        return None

    def drain(self) -> bytes:
        """The bytes written since the last call (the read offset moved past them)."""
        cb = self._find()
        if cb is None:
            return b""
        self.addr = cb
        up_count, _down = struct.unpack("<ii", self.gdb.read(cb + 16, 8))
        if up_count < 1:
            return b""
        desc = cb + 24  # the first up-buffer descriptor: name, buffer, size, write, read, flags
        _name, buf, size, wr, rd, _flags = struct.unpack("<6I", self.gdb.read(desc, 24))
        if not size or wr >= size or rd >= size or wr == rd:
            return b""
        if wr > rd:
            data = self.gdb.read(buf + rd, wr - rd)
        else:
            data = self.gdb.read(buf + rd, size - rd) + (self.gdb.read(buf, wr) if wr else b"")
        self.gdb.write(desc + 16, struct.pack("<I", wr))
        return data


def _die_with_parent() -> None:
    """Runs in the emulator's child process: end it when the reader dies (e.g. killed on a timeout)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _connect(path: str, proc: subprocess.Popen) -> socket.socket:
    end = time.monotonic() + CONNECT_S
    while True:
        if proc.poll() is not None:
            raise GdbError(f"the emulator exited with {proc.returncode} before its GDB stub was up")
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > end:
                raise GdbError("cannot reach the emulator's GDB stub") from None
            time.sleep(0.02)


def run(cmd: list, elf: str | None, scan: list, out=None) -> int:
    """Run cmd (an emulator command) with a GDB stub, print its RTT console, return the firmware's exit code."""
    out = out or sys.stdout.buffer
    addr = elf_symbol(elf, "_SEGGER_RTT") if elf else None
    with tempfile.TemporaryDirectory(prefix="bt-rtt-") as tmp:
        sock_path = os.path.join(tmp, "gdb.sock")
        full = list(cmd) + ["-S", "-chardev", f"socket,path={sock_path},server=on,wait=off,id=btgdb",
                            "-gdb", "chardev:btgdb"]
        proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        code = None
        try:
            gdb = Gdb(_connect(sock_path, proc))
            gdb.command(b"?")
            rtt = Rtt(gdb, addr, scan)
            seen = b""
            while code is None:
                try:
                    stop = gdb.run_for(POLL_S)
                    if stop is not None and stop[:1] in (b"W", b"X"):  # the target exited (semihosting)
                        break
                    data = rtt.drain()
                except (GdbError, OSError):
                    try:  # the emulator ended by itself (a semihosting exit) and closed the stub
                        proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        raise GdbError("the GDB connection failed while the emulator still runs") from None
                    break
                if data:
                    out.write(data)
                    out.flush()
                    seen = (seen + data)[-256:]
                    m = EXIT_LINE.search(seen)
                    if m:
                        code = int(m.group(1))
            if code is not None:
                try:
                    gdb.command(b"k", reply=False)  # QEMU exits cleanly: its plugins write their files
                except (GdbError, OSError):
                    pass
            try:
                rc = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
            return code if code is not None else rc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _range(text: str) -> tuple:
    lo, _, n = text.partition(":")
    return int(lo, 0), int(n, 0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--elf", help="the firmware ELF (its _SEGGER_RTT symbol locates the control block)")
    ap.add_argument("--scan", action="append", type=_range, default=[],
                    help="ADDR:BYTES of RAM to scan for the control block's id (when no ELF symbol)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the emulator command")
    a = ap.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no emulator command given")
    elf = a.elf
    if elf is None and not a.scan and "-kernel" in cmd[:-1]:  # the image the emulator loads
        elf = cmd[cmd.index("-kernel") + 1]
    try:
        return run(cmd, elf, a.scan)
    except GdbError as e:
        print(f"rtt: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
