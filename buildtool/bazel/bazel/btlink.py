"""The link's report in Bazel: bt_model gives every binary that links it `-wrapper` with this file, so gcc
runs its link programs through it. After collect2 has written the executable, it checks the load
segments (as `buildtool_firmware_report` does in CMake) and prints one line of RAM and flash against
the board's; Bazel shows a successful action's output ("INFO: From Linking ..." and the line).

    python3.sh btlink.py BOARD MANIFEST PROGRAM ARGS...      (MANIFEST: the model's firmware.json)

buildtool is imported from the package this file is in (the real path behind @buildtool): the
report is text, not an output, so the link action does not declare buildtool's sources."""
import json
import os
import shlex
import subprocess
import sys


def _output(args: list) -> str | None:
    """The executable collect2 writes: its -o, looked up in @response files too (gcc passes
    collect2's arguments in one when it was given one, as Bazel does)."""
    flat = []
    for a in args:
        if a.startswith("@") and os.path.isfile(a[1:]):
            with open(a[1:]) as f:
                flat += shlex.split(f.read())
        else:
            flat.append(a)
    for i, a in enumerate(flat[:-1]):
        if a == "-o":
            return flat[i + 1]
    return None


def main(argv: list) -> int:
    board, manifest, program, args = argv[0], argv[1], argv[2], argv[3:]
    code = subprocess.run([program, *args]).returncode
    elf = _output(args) if os.path.basename(program) == "collect2" else None
    if code or elf is None:
        return code
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))))
    # gcc runs this file as a script: buildtool comes from the path just set, and only after a link
    from buildtool.errors import one_line_status  # (see above)
    from buildtool.firmware import runner, toolchain  # (see above)
    from buildtool.targets import get as board_of  # (see above)

    def report() -> None:
        t = board_of(board)
        if t.linker_template:
            toolchain.check_segments(t, elf)
        with open(manifest) as f:
            man = json.load(f)
        # on stderr, where Bazel puts the "INFO: From Linking ..." line it follows
        print(runner.memory_summary(t, elf, int(man["arena_bytes"]), man.get("staged")), file=sys.stderr, flush=True)

    return one_line_status(report)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
