"""Random models of the control-flow operators (IF; model/control.py) for the TFLite Micro comparisons of
test_executor.py: each subgraph with tensors of its own, as TFLite writes them."""

from __future__ import annotations

from opgen_extra import _builder, _in, _shape4, quant_of, rquant


def _to_subgraph(g, ops: list, inputs: list, outputs: list):
    """A subgraph of g running `ops` (g's operators, renumbered from 0) on fresh copies of the tensors `inputs`
    (TFLite subgraphs have tensors of their own); (subgraph, the copies)."""
    import dataclasses

    from buildtool.model.ir import Graph

    fresh = {}
    for i in inputs:
        fresh[i] = len(g.tensors)
        g.tensors.append(dataclasses.replace(g.tensors[i], index=fresh[i], name=g.tensors[i].name + "/arg"))

    def m(ts):
        return tuple(fresh.get(t, t) for t in ts)

    sops = [dataclasses.replace(op, index=k, inputs=m(op.inputs)) for k, op in enumerate(ops)]
    return Graph(g.tensors, sops, [fresh[i] for i in inputs], list(outputs), name="branch")


def gen_if(rng):
    """y = IF(s <cmp> c, x, z): a comparison of a one-element input s with a constant picks a then or an else
    branch, each a random int8 ADD / MUL / SUB of x and z (broadcast), then ABS now and then, with tensors of its
    own; the branch outputs have one type and shape, their own quantisations (IF copies bytes)."""
    import dataclasses

    from buildtool.model.ir import Operator, validate_graph
    from buildtool.model.ops import check_graph
    from buildtool.refops.compare import COMPARISONS

    b = _builder(rng, "if")
    shape = (1,) + _shape4(rng)[1:int(rng.integers(1, 5))]
    x = _in(b, rng, shape)
    s = _in(b, rng, (1,))
    c = b.compare(str(rng.choice(COMPARISONS)), s, b.const("c", rng.integers(-128, 128, size=(1,)), "int8",
                                                            quant_of(b.quant_of(s))))
    z = _in(b, rng, tuple(d if rng.random() < 0.6 else 1 for d in shape))
    n_main = len(b.operators)
    ends = []
    for _ in range(2):
        y = getattr(b, str(rng.choice(["add", "mul", "sub"])))(x, z, out_quant=rquant(rng))
        if rng.random() < 0.4:
            y = b.abs(y)
        ends.append((len(b.operators), y))
    g = b.finish([ends[0][1], ends[1][1]])
    main = g.operators[:n_main]
    then = _to_subgraph(g, g.operators[n_main:ends[0][0]], [x, z], [ends[0][1]])
    else_ = _to_subgraph(g, g.operators[ends[0][0]:ends[1][0]], [x, z], [ends[1][1]])
    out = len(g.tensors)
    g.tensors.append(dataclasses.replace(g.tensors[ends[0][1]], index=out, name="if_out"))
    first = int(rng.integers(1, 3))  # which of subgraphs 1 and 2 is the then branch
    op = Operator(len(main), "IF", (c, x, z), (out,), {"then_subgraph": first, "else_subgraph": 3 - first})
    g = dataclasses.replace(g, operators=main + [op], outputs=[out], subgraphs={first: then, 3 - first: else_})
    validate_graph(g)
    check_graph(g)
    return g


def gen_while(rng):
    """(y, n) = WHILE(i0, x) as TensorFlow's converter writes a counted loop: cond LESS(i, limit) on an int32
    counter, body (i + 1, f(x)) with f a random int8 ADD(x, x), MUL(x, x) or ABS(x) on its own output
    quantisation; start and limit random (no iteration at all now and then). Subgraph 1 is cond, 2 the body."""
    import numpy as np

    from buildtool.model.ir import Graph, Operator, Quant, Tensor, validate_graph
    from buildtool.model.ops import check_graph

    tensors = []

    def tensor(name, shape, dtype="int8", q=None, data=None):
        quant = None if q is None else Quant(np.array([q[0]], np.float32), np.array([q[1]], np.int64))
        tensors.append(Tensor(len(tensors), name, tuple(shape), dtype, quant,
                              None if data is None else np.array(data, dtype=dtype).reshape(shape)))
        return len(tensors) - 1

    shape = (1,) + _shape4(rng)[1:int(rng.integers(1, 5))]
    qx = rquant(rng)
    x = tensor("x", shape, q=qx)
    i0 = tensor("start", (), "int32", data=int(rng.integers(0, 3)))
    yi, yx = tensor("n", (), "int32"), tensor("y", shape, q=qx)
    ci, cx = tensor("cond_i", (), "int32"), tensor("cond_x", shape, q=qx)
    lim, cb = tensor("limit", (), "int32", data=int(rng.integers(0, 5))), tensor("less", (), "bool")
    cond = Graph(tensors, [Operator(0, "LESS", (ci, lim), (cb,), {})], [ci, cx], [cb], name="cond")
    bi, bx = tensor("body_i", (), "int32"), tensor("body_x", shape, q=qx)
    one, bi2 = tensor("one", (), "int32", data=1), tensor("next_i", (), "int32")
    bx2 = tensor("next_x", shape, q=rquant(rng))
    kind = str(rng.choice(["ADD", "MUL", "ABS"]))
    f = Operator(1, kind, (bx,) if kind == "ABS" else (bx, bx), (bx2,), {} if kind == "ABS" else {"activation": "NONE"})
    body = Graph(tensors, [Operator(0, "ADD", (bi, one), (bi2,), {"activation": "NONE"}), f], [bi, bx], [bi2, bx2],
                 name="body")
    op = Operator(0, "WHILE", (i0, x), (yi, yx), {"cond_subgraph": 1, "body_subgraph": 2})
    g = Graph(tensors, [op], [x], [yx, yi], name="while", subgraphs={1: cond, 2: body})
    validate_graph(g)
    check_graph(g)
    return g


CONTROL_GENERATORS = {"IF": gen_if, "WHILE": gen_while}
