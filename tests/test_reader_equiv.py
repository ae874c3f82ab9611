"""The reader's direct flatbuffer reads (issue 16) give the same Graph as the generated `tflite`
accessors did: every zoo model, every shared and published model, and one-operator models of every
option table, compared field by field (types, dtypes, array flags and bytes included)."""

from __future__ import annotations

import numpy as np
import pytest
import tflite
from conftest import SHARED_MODELS
from opgen_extra import EXTRA_GENERATORS
from test_int16 import GEN16, INT64_BIAS_ONLY, model16
from test_reader_fuzz import mixed_model

from buildtool.model import reader as tflite_reader
from buildtool import zoo
from buildtool.zoo.builder import GraphBuilder
from buildtool.model.ir import NUMPY_DTYPE, Graph, Operator, Tensor
from buildtool.model.ops import SUPPORTED
from buildtool.model.variables import RESOURCE, bind
from buildtool.model.writer import serialize


def reference_graph(data: bytes) -> Graph:
    """The reader before issue 16, for valid models: every field through the generated accessors
    (per-element calls, vectors as numpy views); options through the reader's own option tables."""
    r = tflite_reader._Reader(data, "<reference>")
    m = tflite.Model.GetRootAs(data, 0)
    sg = m.Subgraphs(0)
    ops, handles, calls = [], {}, {}
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        oc = m.OperatorCodes(op.OpcodeIndex())
        code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
        if code == tflite.BuiltinOperator.CUSTOM:
            opcode = "CUSTOM:" + tflite_reader.short(tflite_reader._text(oc.CustomCode()))
        else:
            opcode = tflite_reader.OPCODE_NAMES[code]
        ins = tuple(int(x) for x in op.InputsAsNumpy().tolist()) if op.InputsLength() else ()
        outs = tuple(int(x) for x in op.OutputsAsNumpy().tolist()) if op.OutputsLength() else ()
        table = op.BuiltinOptions()
        opts = r._options(table.Pos if table else None, opcode, i, op.OutputsLength()) if opcode in SUPPORTED else {}
        ops.append(Operator(i, opcode, ins, outs, opts))
        if opcode == "VAR_HANDLE":
            handles[i] = _var_name(op)
        elif opcode == "CALL_ONCE":
            calls[i] = _options(op, tflite.CallOnceOptions).InitSubgraphIndex()
    tensors = _tensors(m, sg, data)
    if handles or calls or any(t.dtype == RESOURCE for t in tensors):
        inits = {}
        for i in sorted(calls):  # an init subgraph of VAR_HANDLE + ASSIGN_VARIABLE of constants
            init = m.Subgraphs(calls[i])
            consts, names = _tensors(m, init, data), {}
            for j in range(init.OperatorsLength()):
                op = init.Operators(j)
                ins = [int(x) for x in op.InputsAsNumpy().tolist()] if op.InputsLength() else []
                if op.OutputsLength():
                    names[int(op.Outputs(0))] = _var_name(op)
                else:
                    inits[names[ins[0]]] = consts[ins[1]]
        tensors, ops = bind(tensors, ops, handles, calls, inits)
    desc = m.Description()
    inputs = [int(x) for x in sg.InputsAsNumpy().tolist()] if sg.InputsLength() else []
    outputs = [int(x) for x in sg.OutputsAsNumpy().tolist()] if sg.OutputsLength() else []
    return Graph(tensors, ops, inputs, outputs, name="model",
                 description=desc.decode("utf-8", "replace") if desc else "")


def _options(op, cls):
    o, table = cls(), op.BuiltinOptions()
    o.Init(table.Bytes, table.Pos)
    return o


def _var_name(op) -> str:
    raw = _options(op, tflite.VarHandleOptions).SharedName()
    return tflite_reader._text(raw) if raw else ""


def _tensors(m, sg, data: bytes) -> list:
    tensors = []
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        name = tflite_reader._text(t.Name()) if t.Name() else f"t{i}"
        if t.Type() == tflite.TensorType.RESOURCE:
            tensors.append(Tensor(i, name, (), RESOURCE))
            continue
        dtype = tflite_reader.TYPE_NAMES[t.Type()]
        shape = tuple(int(d) for d in t.ShapeAsNumpy().tolist()) if t.ShapeLength() else ()
        quant = None
        q = t.Quantization()
        if q is not None and q.ScaleLength():
            scale = np.asarray(q.ScaleAsNumpy(), dtype=np.float32).reshape(-1)
            zp = (np.asarray(q.ZeroPointAsNumpy(), dtype=np.int64).reshape(-1) if q.ZeroPointLength()
                  else np.zeros(1, np.int64))
            quant = tflite_reader._quant_params(scale, zp, int(q.QuantizedDimension()), shape, dtype)
        data = None
        if t.Buffer() > 0:
            buf = m.Buffers(t.Buffer())
            raw = bytes(data[buf.Offset():buf.Offset() + buf.Size()]) if buf.Offset() > 1 else (
                buf.DataAsNumpy().tobytes() if buf.DataLength() else b"")
            if raw:
                data = np.frombuffer(raw, dtype=NUMPY_DTYPE[dtype]).copy().reshape(shape)
        if t.IsVariable():
            tensors.append(Tensor(i, name, shape, dtype, quant, None, variable=True))
        else:
            tensors.append(Tensor(i, name, shape, dtype, quant, data))
    return tensors


def same_value(a, b, where):
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, np.ndarray):
        assert (a.dtype, a.shape, a.flags.writeable) == (b.dtype, b.shape, b.flags.writeable), where
        assert a.tobytes() == b.tobytes(), where
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            same_value(x, y, f"{where}[{k}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            same_value(a[k], b[k], f"{where}.{k}")
    elif hasattr(a, "__dataclass_fields__"):
        for f in a.__dataclass_fields__:
            same_value(getattr(a, f), getattr(b, f), f"{where}.{f}")
    else:
        assert a == b, (where, a, b)


def assert_same_graph(data: bytes, what: str):
    g, _ = tflite_reader.read(data)
    same_value(g, reference_graph(data), what)


def _option_models() -> dict:
    """One-operator models of every option table the reader knows (int8 and 16x8), and the mixed
    builder model of the fuzz tests (SPLIT, pools, STRIDED_SLICE, RESHAPE, FULLY_CONNECTED, SOFTMAX)."""
    out = {}
    for op, gen in sorted(EXTRA_GENERATORS.items()):
        g = gen(np.random.default_rng(3))
        out[f"int8-{op}"] = serialize(g.finish() if isinstance(g, GraphBuilder) else g)
    for op in sorted(GEN16):
        out[f"int16-{op}"] = serialize(model16(op, np.random.default_rng(5), op in INT64_BIAS_ONLY))
    out["builder-mixed"] = mixed_model()
    return out


FILES = sorted(SHARED_MODELS.glob("*.tflite")) + sorted((SHARED_MODELS / "real").glob("*.tflite"))


@pytest.mark.parametrize("path", FILES or [None], ids=[p.stem for p in FILES] or ["none"])
def test_shared_and_published_models_read_as_before(path):
    if path is None:
        pytest.skip(f"{SHARED_MODELS} not present")
    assert_same_graph(path.read_bytes(), path.name)


@pytest.mark.parametrize("name", zoo.names())
def test_zoo_models_read_as_before(name):
    assert_same_graph(serialize(zoo.build(name)), name)


def test_option_tables_read_as_before():
    models = _option_models()
    for what, data in models.items():
        assert_same_graph(data, what)
    seen = {op.opcode for data in models.values() for op in tflite_reader.parse(data).operators}
    assert {"SQUEEZE", "RESIZE_BILINEAR", "DEPTH_TO_SPACE", "STRIDED_SLICE", "SPLIT", "TRANSPOSE_CONV",
            "LEAKY_RELU", "SOFTMAX", "MEAN", "CONCATENATION"} <= seen


def test_a_vtable_before_the_file_start_is_refused():
    """struct reads a negative position from the end of the file, where this tensor finds the bytes of
    its real vtable: the direct reads check the position themselves (the accessors refused it only as
    'inconsistent data'), and the line names the table."""
    data = bytearray(serialize(zoo.build("tiny")))
    pos = tflite.Model.GetRootAs(bytes(data), 0).Subgraphs(0).Tensors(0)._tab.Pos
    soff = int.from_bytes(data[pos:pos + 4], "little", signed=True)
    data[pos:pos + 4] = (soff + len(data)).to_bytes(4, "little", signed=True)
    with pytest.raises(tflite_reader.ModelError, match="tensor 0 vtable lies outside the file"):
        tflite_reader.parse(bytes(data))


@pytest.mark.parametrize("name", ["var_accumulator_int8", "var_ring_int8", "var_accumulator_int16"])
def test_variable_models_read_as_before(name):
    """TensorFlow's resource variables: VAR_HANDLE and CALL_ONCE options and the init subgraph's constants read
    directly give the graph the accessors give (model/variables.py binds both)."""
    from pathlib import Path

    assert_same_graph((Path(__file__).parent / "data" / f"{name}.tflite").read_bytes(), name)
