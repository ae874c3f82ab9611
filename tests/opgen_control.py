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


CONTROL_GENERATORS = {"IF": gen_if}
