"""`python -m buildtool.cmake configure|ram-check|units|check ...`: what BuildtoolConfig.cmake runs (see __init__)."""

from __future__ import annotations

import argparse
import sys

from ..errors import one_line_status
from . import check_elf, configure, ram_check, write_units


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m buildtool.cmake")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("configure", help="check a buildtool_add_model call and write its board files")
    c.add_argument("--board", required=True)
    c.add_argument("--model", default="")
    c.add_argument("--zoo", default="")
    c.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE")
    c.add_argument("--ram-limit", default="")
    c.add_argument("--library", action="store_true", help="LIBRARY: weights in .rodata.bt_weights")
    c.add_argument("-o", "--output", required=True)
    r = sub.add_parser("ram-check", help="the plan's arena against RAM_LIMIT")
    r.add_argument("manifest")
    r.add_argument("limit", type=int)
    u = sub.add_parser("units", help="a split kernel's units from model.c (the files its calls need)")
    u.add_argument("units_json")
    u.add_argument("model_c")
    u.add_argument("model_h")
    u.add_argument("--depfile", default="", help="write a Makefile-style depfile (the inputs and this code)")
    u.add_argument("--depfile-target", default="", metavar="STAMP", help="its target: the step's stamp")
    u.add_argument("--depfile-outputs", action="store_true", help="the units among its prerequisites (Make)")
    k = sub.add_parser("check", help="after a link: load segments and the RAM/flash summary")
    k.add_argument("elf")
    k.add_argument("--board", required=True)
    k.add_argument("--manifest", required=True, help="the model's firmware.json")
    return p


def main(argv=None) -> int:
    """Run one command; a user's error or a bug is one line on stderr and a non-zero exit."""

    a = _parser().parse_args(argv)
    return one_line_status(_run, a)


def _run(a) -> None:
    if a.cmd == "configure":
        configure(a.board, a.model, a.zoo, a.opt, a.ram_limit, a.output, a.library)
    elif a.cmd == "units":
        write_units(a.units_json, a.model_c, a.model_h, a.depfile, a.depfile_target, a.depfile_outputs)
    elif a.cmd == "check":
        print(check_elf(a.elf, a.board, a.manifest))
    else:
        ram_check(a.manifest, a.limit)

if __name__ == "__main__":
    sys.exit(main())
