"""buildtool_dependencies(): what a WORKSPACE using @buildtool needs with Bazel 4.2 offline.

- @buildtool_src: the installed buildtool package (its Python, kernels and start-up code, by symlink),
  boards.bzl (every board's flags and files, written by buildtool itself) and the cross C toolchains;
- stubs for @rules_cc, @rules_java, @rules_proto and @remote_coverage_tools, which Bazel 4.2 would
  otherwise download (unless the WORKSPACE defined them first);
- the toolchains of the cross boards, chosen by --platforms=@buildtool//platforms:<board>.
"""

_TOOLS = ["gcc", "ar", "ld", "nm", "objcopy", "objdump", "strip", "cpp"]

def _src_impl(rctx):
    here = rctx.path(Label("@buildtool//:WORKSPACE")).realpath.dirname  # <package>/bazel
    pkg = here.dirname
    for child in pkg.readdir():
        if child.basename not in ["bazel", "__pycache__"]:
            rctx.symlink(child, "buildtool/" + child.basename)
    python = _python(rctx)
    btgen = str(here.get_child("bazel").get_child("btgen.py"))
    r = rctx.execute([python, btgen, str(pkg.dirname), "boards", "."], quiet = True)
    if r.return_code != 0:
        why = (r.stderr.strip().splitlines() or ["exit %d" % r.return_code])[-1]
        fail("buildtool: cannot describe the boards with %s (%s)" % (python, why))

    # the actions' interpreter, as a file Bazel can key its workers on
    rctx.file("python3.sh", "#!/bin/sh\nexec %s \"$@\"\n" % python, executable = True)
    rctx.symlink(Label("@buildtool//bazel:src.BUILD"), "BUILD")
    rctx.symlink(Label("@buildtool//bazel:toolchain.BUILD"), "toolchain/BUILD")
    for prefix in rctx.read("cross_prefixes.txt").splitlines():  # arm-none-eabi-, riscv64-unknown-elf-
        for t in _TOOLS:
            tool = prefix + t
            rctx.file("toolchain/bin/" + tool, "#!/bin/sh\nexec %s \"$@\"\n" % tool, executable = True)

def _python(rctx):
    """The python3 with buildtool's dependencies: $BUILDTOOL_PYTHON, else python3 on PATH, resolved to
    the interpreter itself (a version manager's shim costs 0.2 s per action)."""
    python = rctx.os.environ.get("BUILDTOOL_PYTHON") or "python3"
    r = rctx.execute([python, "-c", "import sys; print(sys.executable)"], quiet = True)
    if r.return_code != 0 or not r.stdout.strip():
        fail("buildtool: cannot run %s (set BUILDTOOL_PYTHON to a python3 with buildtool's dependencies)" % python)
    return r.stdout.strip()

_buildtool_src = repository_rule(
    implementation = _src_impl,
    local = True,
    environ = ["PATH", "BUILDTOOL_PYTHON"],
)

def _stub_impl(rctx):
    for path, text in rctx.attr.files.items():
        rctx.file(path, text, executable = path.endswith(".sh"))
        if "/" in path:
            rctx.file(path.rsplit("/", 1)[0] + "/BUILD", "")  # the .bzl's package

_stub = repository_rule(implementation = _stub_impl, attrs = {"files": attr.string_dict()})

def _forward(names):
    return "".join(["def %s(**kw):\n    native.%s(**kw)\n" % (n, n) for n in names])

# Offline stand-ins: the rules forward to Bazel 4.2's native ones; coverage is not supported.
_STUBS = {
    "rules_cc": {"cc/defs.bzl": _forward(["cc_binary", "cc_library", "cc_test", "cc_import", "cc_toolchain",
                                          "cc_toolchain_suite", "objc_library"])},
    "rules_java": {"java/defs.bzl": _forward(["java_binary", "java_import", "java_library", "java_runtime",
                                              "java_toolchain", "java_test", "java_plugin", "java_proto_library"])},
    "rules_proto": {"proto/defs.bzl": _forward(["proto_library", "proto_lang_toolchain"])},
    "remote_coverage_tools": {
        "noop.sh": "#!/bin/sh\nexit 0\n",
        "BUILD": "\n".join(['sh_binary(name = "%s", srcs = ["noop.sh"], visibility = ["//visibility:public"])' % n
                            for n in ["lcov_merger", "coverage_report_generator"]]) + "\n",
    },
}

def buildtool_dependencies():
    """Defines @buildtool_src, the offline stubs (unless already defined) and registers the cross toolchains."""
    existing = native.existing_rules()
    if "buildtool_src" not in existing:
        _buildtool_src(name = "buildtool_src")
    for name, files in _STUBS.items():
        if name not in existing:
            _stub(name = name, files = dict(files, **{"WORKSPACE": "", "BUILD": files.get("BUILD", "")}))
    native.register_toolchains("@buildtool_src//toolchain:all")
