"""bt_model / bt_firmware: buildtool's pipeline as Bazel actions.

    load("@buildtool//bazel:defs.bzl", "bt_model", "bt_firmware")
    bt_model(name = "model", model = "tiny.tflite")        # or zoo = "tiny"; board: from --platforms
    cc_binary(name = "app", srcs = ["main.c"], deps = [":model"])   # main.c includes model.h

bt_model runs the steps of `buildtool gen` as actions (mnemonics BtModel, BtSkeleton, BtPlan,
BtCode, BtFlash; BtKernels: the kernel files the model calls), every output declared, every input
(the model, buildtool's sources) declared, so results are cached locally and by --remote_cache across checkouts. The steps run in persistent
workers (Bazel's proto protocol: no flag needed). model.c and the weights image are compiled apart: a
weight-only edit changes weights.bin, not skeleton.json, so the plan and the model.c compile are not rerun.
It returns CcInfo: model.h, model.c, the weights, the kernels the model calls, the board's start-up code
and link flags (nothing is compiled before the plan step has accepted the model for the board);
the link of a binary holding it prints one line of RAM and flash against the board's (btlink.py).
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("@buildtool_src//:boards.bzl", "BOARDS")

def _out(ctx, n):
    return ctx.actions.declare_file(ctx.label.name + "/" + n)

def _refuse(ctx, message, output):
    """A user's mistake as one line when the target builds (Bazel 4.2's fail() prints a Starlark
    traceback): the action that would make output prints it and fails, so every step after it stops."""
    ctx.actions.run_shell(outputs = [output], arguments = ["buildtool: error: " + message],
                          command = 'echo "$1" >&2; exit 2', mnemonic = "BtRefuse")

def _gen(ctx, mnemonic, args, inputs, outputs, shown):
    """One `buildtool gen` step: in a persistent worker (proto protocol; imports stay warm), or one
    process outside the sandbox (so Python's byte-code cache is reused) with worker = False. shown:
    the model as its messages name it (Bazel's progress line and its ERROR line when the step fails)."""
    # the sources the step never imported: their edits do not rerun it (a planner edit reruns the plan only)
    unused = ctx.actions.declare_file("%s/%s.unused" % (ctx.label.name, mnemonic))
    tail = ctx.actions.args()
    tail.add_all(["--unused", unused.path] + args)
    if ctx.attr.worker:
        tail.use_param_file("@%s", use_always = True)
        tail.set_param_file_format("multiline")
        # proto: Bazel 4.2 accepts the JSON protocol only with --experimental_worker_allow_json_protocol
        reqs = {"supports-workers": "1", "requires-worker-protocol": "proto"}
    else:
        reqs = {"no-sandbox": "1"}
    ctx.actions.run(
        executable = ctx.executable._python,
        arguments = [ctx.file._btgen.path, _src_root(ctx), "gen", tail],
        inputs = inputs,
        # buildtool's sources as tools: in the action's key, so an edit reruns the step (an unchanged
        # output stops the build there); the worker then re-imports them (buildtool.integrations.bazel.serve)
        tools = depset([ctx.file._btgen], transitive = [ctx.attr._gen_inputs.files]),
        outputs = outputs + [unused],
        unused_inputs_list = unused,
        mnemonic = mnemonic,
        progress_message = "%s %s for %s (%s)" % (mnemonic, shown, ctx.attr.board, ctx.label),
        use_default_shell_env = True,  # PATH (and --action_env)
        execution_requirements = reqs,
    )

def _src_root(ctx):
    """external/buildtool_src: the directory holding the buildtool package in the execution root."""
    p = ctx.file._weights_s.path
    return p[:p.index("/buildtool/")]

def _compile(ctx, cc, part, srcs, hdrs, flags, extra, contexts):
    """CcInfo of srcs compiled with the configuration's C toolchain (cc: toolchain + features)."""
    name = ctx.label.name + "_" + part
    comp_ctx, comp_out = cc_common.compile(
        name = name,
        actions = ctx.actions,
        feature_configuration = cc.features,
        cc_toolchain = cc.toolchain,
        srcs = srcs,
        public_hdrs = hdrs,
        includes = [hdrs[0].dirname] if hdrs else [],
        additional_inputs = extra,
        user_compile_flags = flags,
        compilation_contexts = contexts,
    )
    link_ctx, _ = cc_common.create_linking_context_from_compilation_outputs(
        name = name,
        actions = ctx.actions,
        feature_configuration = cc.features,
        cc_toolchain = cc.toolchain,
        compilation_outputs = comp_out,
        alwayslink = True,
    )
    return CcInfo(compilation_context = comp_ctx, linking_context = link_ctx)

# buildtool.options.CODE_ONLY: the options `buildtool gen code` takes
CODE_OPTIONS = ["optimize_code", "code_budget", "staging_ram"]

def _fused(options):
    """As buildtool.options.PlanOptions.fused: optimize or splits given (and not none)."""
    return any([options.get(k, "none").strip().lower() not in ["", "none"] for k in ["optimize", "splits"]])

def _legacy_cc_toolchain(ctx):
    """True when Bazel picks C toolchains by --crosstool_top, not by --platforms (Bazel 4.2's default)."""
    check = getattr(cc_common, "is_cc_toolchain_resolution_enabled_do_not_use", None)
    return check != None and not check(ctx = ctx)

def _bt_model_impl(ctx):
    board = BOARDS[ctx.attr.board]
    if board["cross"] and _legacy_cc_toolchain(ctx):
        # else the host's compiler meets the board's start-up code: pages of assembler errors
        fail("buildtool: %s: board %s needs `build --incompatible_enable_cc_toolchain_resolution` in .bazelrc " %
             (ctx.label, ctx.attr.board) + "(Bazel 4.2 picks C toolchains by --platforms only with it)")
    # the model as its refusal and every step's messages name it: the zoo name or the .tflite file's (as
    # SCons and CMake name it), not the skeleton's (plan.json's bytes do not depend on it)
    base = ctx.file.model.basename if ctx.file.model else ctx.label.name
    shown = ctx.attr.model_name or ctx.attr.zoo or (base[:-len(".tflite")] if base.endswith(".tflite") else base)
    model = ctx.file.model
    if (ctx.file.model == None) == (ctx.attr.zoo == ""):
        model = _out(ctx, "model.tflite")
        _refuse(ctx, "%s: give bt_model exactly one of model = <.tflite label> and zoo = <name>" % ctx.label, model)
    elif model == None:
        model = _out(ctx, "model.tflite")
        _gen(ctx, "BtModel", ["model", ctx.attr.zoo, "-o", model.path], [], [model], shown)
    skel, plan, model_c, model_h, man, weights = [_out(ctx, n) for n in [
        "skeleton.json", "plan.json", "model.c", "model.h", "firmware.json", "weights.bin"]]
    _gen(ctx, "BtSkeleton", ["skeleton", model.path, "-o", skel.path], [model], [skel], shown)
    opts = []
    code_opts = []  # the code step's options (optimize_code, code_budget): a change reruns the code action only
    for k, v in sorted(ctx.attr.plan_options.items()):
        if k in CODE_OPTIONS:
            code_opts += ["--opt", "%s=%s" % (k, v)]
        else:
            opts += ["--opt", "%s=%s" % (k, v)]
    name_args = ["--name", ctx.attr.model_name] if ctx.attr.model_name else []
    # the board: a model it cannot hold is refused here in one line, not by the linker after compiling
    _gen(ctx, "BtPlan", ["plan", skel.path, "-o", plan.path, "--board", ctx.attr.board, "--name", shown] + opts,
         [skel], [plan], shown)
    # a fused plan's code holds weight copies: its code step reads the model (as buildtool's SCons tool);
    # a board that picks its own plan may pick a fused one (buildtool.firmware.fits.may_fuse)
    fused = _fused(ctx.attr.plan_options) or board.get("auto_fit", False)
    code_in = model if fused else skel
    _gen(ctx, "BtCode", ["code", code_in.path, plan.path, "--board", ctx.attr.board, "-o", model_c.dirname] +
                        name_args + code_opts, [code_in, plan], [model_c, model_h, man], shown)
    split = _out(ctx, "weights_split.h")  # the image's part in external memory (defines; empty when none)
    # a fused plan re-reads weights per tile: the flash step places them (memory regions) by its counts
    flash_plan = [plan] if fused else []
    # on a board whose weights may go external, around the code's flash bytes the code step measured
    flash_code = [man] if board.get("measures_code", False) else []
    _gen(ctx, "BtFlash", ["flash", model.path] + [p.path for p in flash_plan] + ["--board", ctx.attr.board, "-o",
                          weights.path, "--split-header", split.path] +
                         (["--code-size", flash_code[0].path] if flash_code else []),
         [model] + flash_plan + flash_code, [weights, split], shown)

    cc = find_cpp_toolchain(ctx)
    cc = struct(toolchain = cc, features = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    ))
    deps = [d[CcInfo] for d in ctx.attr.board_lib]
    contexts = [d.compilation_context for d in deps]
    code = _compile(ctx, cc, "code", [model_c], [model_h], board["copts"], [], contexts)

    # The kernels the model calls (as SCons and CMake compile them), not the board's whole set: the action
    # reads the skeleton and the plan and writes one file per kernel source into a folder (a tree artifact)
    # that Bazel compiles file by file. After the plan: a model the board cannot hold compiles nothing.
    kernel_dir = ctx.actions.declare_directory(ctx.label.name + "/kernels")
    # (a kernel split into files by path: one unit of those model.c calls)
    _gen(ctx, "BtKernels", ["kernels", skel.path, plan.path, "--board", ctx.attr.board, "-o", kernel_dir.path,
                            "--model-c", model_c.path, "--model-h", model_h.path],
         [skel, plan, model_c, model_h], [kernel_dir], shown)
    kernels = _compile(ctx, cc, "kernels", [kernel_dir], [], board["copts"], [], contexts)

    # The weights: buildtool's weights.S (.incbin), weights.bin and its split the extra inputs of this compile.
    wflags = ['-DBT_WEIGHTS_FILE="%s"' % weights.path, "-DBT_WEIGHTS_ALIGN=%d" % board["weights_align"],
              "-include", split.path]
    if ctx.attr.library:  # where any GNU ld script that places .rodata* takes it
        wflags.append("-DBT_WEIGHTS_SECTION=.rodata.bt_weights")
    # plan.json an input too (not read): the weights are assembled only for a model the board holds
    blob = _compile(ctx, cc, "weights", [ctx.file._weights_s], [], board["copts"] + wflags, [weights, split, plan], [])

    infos = [code, kernels, blob] + deps
    if not ctx.attr.library:  # library: the project brings its own start-up code and linker script
        # the board's start-up code includes model.h
        infos.append(_compile(ctx, cc, "platform", ctx.files.board_platform, [], board["copts"], [],
                              contexts + [code.compilation_context]))
    flags, files = [], []
    if ctx.file.board_ld and not ctx.attr.library:
        flags, files = ["-T" + ctx.file.board_ld.path], [ctx.file.board_ld]
    # gcc: our cross toolchains, and Bazel's host toolchain when it found gcc (it names clang "clang")
    if ctx.attr.report and not ctx.attr.library and cc.toolchain.compiler in ["gcc", "compiler"]:
        # the link of every binary holding this model runs through btlink.py (gcc -wrapper): after it, the
        # load segments are checked and one line of RAM and flash against the board's is printed
        py, link = ctx.executable._python, ctx.file._btlink
        flags += ["-wrapper", ",".join([py.path, link.path, ctx.attr.board, man.path])]
        files += [py, link, man]
    if flags:
        link = cc_common.create_linker_input(owner = ctx.label, user_link_flags = depset(flags),
                                             additional_inputs = depset(files))
        infos.append(CcInfo(linking_context = cc_common.create_linking_context(linker_inputs = depset([link]))))
    return [
        DefaultInfo(files = depset([plan, model_c, model_h, man, weights])),
        cc_common.merge_cc_infos(cc_infos = infos),
        OutputGroupInfo(plan = depset([plan]), weights = depset([weights]), manifest = depset([man]),
                        generated_srcs = depset([model_c, model_h])),
    ]

_bt_model = rule(
    implementation = _bt_model_impl,
    attrs = {
        "model": attr.label(allow_single_file = [".tflite"]),
        "zoo": attr.string(),
        "board": attr.string(mandatory = True, values = BOARDS.keys()),
        "plan_options": attr.string_dict(),
        "model_name": attr.string(),
        "worker": attr.bool(default = True),
        "report": attr.bool(default = True),
        "library": attr.bool(default = False),
        "board_lib": attr.label_list(providers = [CcInfo]),
        "board_ld": attr.label(allow_single_file = True),
        "board_platform": attr.label_list(allow_files = True),
        "_python": attr.label(
            default = "@buildtool_src//:python3.sh",
            executable = True,
            cfg = "host",
            allow_single_file = True,
        ),
        "_btgen": attr.label(default = "@buildtool//bazel:btgen.py", allow_single_file = True),
        "_btlink": attr.label(default = "@buildtool//bazel:btlink.py", allow_single_file = True),
        "_gen_inputs": attr.label(default = "@buildtool_src//:gen_inputs"),
        "_weights_s": attr.label(
            default = "@buildtool_src//:buildtool/firmware_src/common/weights.S",
            allow_single_file = True,
        ),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)

def _same(b):
    return b

def _lib(b):
    return ["@buildtool_src//:board_" + b]

def _platform(b):
    return ["@buildtool_src//:platform_" + b]

def _ld(b):
    return ("@buildtool_src//:" + BOARDS[b]["ld"]) if BOARDS[b]["ld"] else None

def _per_board(board, fn):
    """fn(board), or a select over --platforms (host when the platform names no board)."""
    if board:
        return fn(board)
    cases = {"@buildtool//platforms:is_" + b: fn(b) for b in BOARDS if BOARDS[b]["cross"]}
    cases["//conditions:default"] = fn("host")
    return select(cases)

def bt_model(name, model = None, zoo = None, board = None, plan_options = {}, worker = True, report = True,
             library = False, **kwargs):
    """A model as a C library (CcInfo): model.h, model.c, weights, the kernels it calls, the start-up code.

    model: a .tflite label, or zoo: a zoo name. board: a buildtool board; default: the one named by
    --platforms=@buildtool//platforms:<board>, host without. plan_options: {key: value} as
    `buildtool gen plan --opt` (e.g. {"optimize": "ram"}). report: after the link of a binary holding the
    model, check its load segments and print one line of RAM and flash against the board's (gcc links).
    library: the model alone (model.c, the kernels, the weights in .rodata.bt_weights) for a binary with
    its own start-up code and linker script: no start-up code, linker script or report of buildtool's.
    Output groups: plan, weights, manifest, generated_srcs.
    """
    known = board if board in BOARDS else None  # an unknown board: the board attribute's one-line error
    if known and BOARDS[known]["cross"] and "target_compatible_with" not in kwargs:
        # a fixed cross board builds only with its platform (elsewhere: skipped, or one line when asked for)
        kwargs["target_compatible_with"] = ["@buildtool//platforms:board_" + known]
    _bt_model(
        name = name,
        model = model,
        zoo = zoo or "",
        board = board or _per_board(None, _same),
        plan_options = plan_options,
        worker = worker,
        report = report,
        library = library,
        board_lib = _per_board(known or (board and "host"), _lib),
        board_ld = _per_board(known or (board and "host"), _ld),
        board_platform = _per_board(known or (board and "host"), _platform),
        **kwargs
    )

def bt_firmware(name, model = None, zoo = None, board = None, plan_options = {}, **kwargs):
    """The built-in harness (reads an input, runs the model, writes the output) as a cc_binary `name`."""
    bt_model(name = name + "_model", model = model, zoo = zoo, board = board, plan_options = plan_options,
             visibility = ["//visibility:private"])
    native.cc_binary(
        name = name,
        srcs = ["@buildtool_src//:buildtool/firmware_src/common/main.c"],
        deps = [":" + name + "_model"],
        **kwargs
    )
