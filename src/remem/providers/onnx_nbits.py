"""Runs the bundled model's int8 weights as int8: a load-time rewrite of its ONNX graph.

The bundled ``model.onnx`` stores each weight matrix as int8 values with one float scale per
output column, dequantised inside the graph as ``Cast(int8 -> float) -> Mul(scale) -> MatMul``.
onnxruntime folds those constants into float32 matrices, so every query reads ~42 MB of float32
weights (measured: 7.2 of 11.2 ms of a 14-token query in the 42 MatMuls). This module rewrites
each such MatMul into onnxruntime's ``com.microsoft.MatMulNBits`` (bits 8) over the *same* int8
values and scales (zero point 128, one block scale per column repeated over the blocks), so
the weights stay int8 in memory; with ``accuracy_level`` 4 the activations are quantised to int8
per block of :data:`BLOCK_SIZE` input values. Measured against today's vectors (one thread,
loaded 2-core machine, ratios from one run): block 32 keeps cosine >= 0.9985 on 213 short
queries (2-3 words and "", the worst case) and min 0.9994 / mean 0.9998 on 1,300 LoCoMo turns and
questions, 0.976 of each question's top 10 turns unchanged, at ~0.75-0.8x the query CPU time of
the float32 graph; block 64 is ~10% faster but falls to cosine 0.9973 on short queries, block 128
to 0.9942. accuracy_level 0 (float32 compute) is exact but ~4x slower. Batches of longer texts
gain nothing (measured 57 vs 66 texts per CPU-second on 400 LoCoMo turns in batches of 16: the
float32 GEMM is efficient once many rows share each weight). onnxruntime's own transformer
optimizer adds nothing here: it fuses SkipLayerNorm and BiasGelu, which the session already
does, and finds no Attention pattern in this export (float32 or int8 weights alike).

No ``onnx`` package is needed: ONNX files are protocol buffers, and this module reads and writes
just the fields it changes (ModelProto.graph and opset_import; GraphProto.node and initializer;
NodeProto; TensorProto dims, data_type, name and raw_data) with a small wire-format codec; every
other field is copied byte for byte. Pure functions over bytes: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

BLOCK_SIZE = 32
"""Input values per int8 activation block of MatMulNBits (see the module docstring)."""
ACCURACY_LEVEL = 4
"""MatMulNBits compute type: 4 = int8 activations (0 = float32, exact but ~6x slower here)."""

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_FLOAT, _UINT8, _INT8 = 1, 2, 3  # TensorProto.DataType
_ATTR_INT = 2  # AttributeProto.AttributeType.INT
MS_DOMAIN = "com.microsoft"


# --- protobuf wire format ------------------------------------------------------------------------
def _read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _fields(buf: bytes | memoryview) -> Iterator[tuple[int, int, int | memoryview, memoryview]]:
    """Yields (field number, wire type, value, the field's raw bytes) of one message."""
    view = memoryview(buf)
    pos = 0
    while pos < len(view):
        start = pos
        key, pos = _read_varint(view, pos)
        number, wire = key >> 3, key & 7
        value: int | memoryview
        if wire == _VARINT:
            value, pos = _read_varint(view, pos)
        elif wire == _I64:
            value, pos = view[pos:pos + 8], pos + 8
        elif wire == _I32:
            value, pos = view[pos:pos + 4], pos + 4
        elif wire == _LEN:
            size, pos = _read_varint(view, pos)
            value, pos = view[pos:pos + size], pos + size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value, view[start:pos]


def _len_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | _LEN) + _varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3 | _VARINT) + _varint(value)


# --- the few ONNX messages this rewrite reads ---------------------------------------------------
@dataclass
class _Node:
    raw: bytes
    op_type: str = ""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    cast_to: int | None = None


def _node(raw: memoryview) -> _Node:
    node = _Node(raw=bytes(raw))
    for number, _, value, _ in _fields(raw):
        if number == 1:
            node.inputs.append(bytes(value).decode())
        elif number == 2:
            node.outputs.append(bytes(value).decode())
        elif number == 4:
            node.op_type = bytes(value).decode()
        elif number == 5:  # AttributeProto: name = 1, i = 3
            attr = {n: v for n, _, v, _ in _fields(value)}
            if bytes(attr.get(1, b"")) == b"to":
                node.cast_to = int(attr.get(3, 0))
    return node


def _tensor(raw: memoryview) -> tuple[str, np.ndarray | None]:
    """(name, array) of a TensorProto; the array is None unless it is float32/int8 raw_data."""
    name, dims, dtype, data = "", [], 0, None
    for number, wire, value, _ in _fields(raw):
        if number == 1 and wire == _VARINT:
            dims.append(value)
        elif number == 1:  # packed dims
            pos = 0
            while pos < len(value):
                dim, pos = _read_varint(value, pos)
                dims.append(dim)
        elif number == 2:
            dtype = value
        elif number == 8:
            name = bytes(value).decode()
        elif number == 9:
            data = value
    kinds = {_FLOAT: np.dtype("<f4"), _INT8: np.dtype("i1")}
    if data is None or dtype not in kinds:
        return name, None
    return name, np.frombuffer(data, dtype=kinds[dtype]).reshape(dims)


def _tensor_bytes(name: str, array: np.ndarray, dtype: int) -> bytes:
    dims = b"".join(_int_field(1, d) for d in array.shape)
    return dims + _int_field(2, dtype) + _len_field(8, name.encode()) + _len_field(
        9, np.ascontiguousarray(array).tobytes())


def _int_attr(name: str, value: int) -> bytes:
    return _len_field(5, _len_field(1, name.encode()) + _int_field(3, value) + _int_field(
        20, _ATTR_INT))


def _nbits_node(matmul: _Node, weight: str, k: int, n: int, block_size: int,
                accuracy_level: int) -> bytes:
    inputs = [matmul.inputs[0], f"{weight}_nbits_q", f"{weight}_nbits_scale",
              f"{weight}_nbits_zp"]
    body = b"".join(_len_field(1, i.encode()) for i in inputs)
    body += b"".join(_len_field(2, o.encode()) for o in matmul.outputs)
    body += _len_field(3, f"{weight}_nbits".encode()) + _len_field(4, b"MatMulNBits")
    for attr, value in (("K", k), ("N", n), ("bits", 8), ("block_size", block_size),
                        ("accuracy_level", accuracy_level)):
        body += _int_attr(attr, value)
    return body + _len_field(7, MS_DOMAIN.encode())


def nbits_tensors(weight: str, q_int8: np.ndarray, column_scales: np.ndarray,
                  block_size: int) -> list[bytes]:
    """The three MatMulNBits initializers for an int8 ``[K, N]`` matrix with per-column scales.

    Returns:
        Serialised TensorProtos: uint8 ``[N, K / block_size, block_size]`` (value + 128, i.e.
        column-major blocks), float32 scales ``[N * blocks]`` and uint8 zero points (128).
    """
    k, n = q_int8.shape
    blocks = k // block_size
    packed = (q_int8.astype(np.int16) + 128).astype(np.uint8).T.reshape(n, blocks, block_size)
    scales = np.repeat(column_scales.reshape(-1).astype(np.float32), blocks)
    zero = np.full(n * blocks, 128, dtype=np.uint8)
    return [_tensor_bytes(f"{weight}_nbits_q", packed, _UINT8),
            _tensor_bytes(f"{weight}_nbits_scale", scales, _FLOAT),
            _tensor_bytes(f"{weight}_nbits_zp", zero, _UINT8)]


def _dequantised_weight(matmul: _Node, producer: dict[str, _Node], uses: dict[str, int],
                        arrays: dict[str, np.ndarray | None], block_size: int
                        ) -> tuple[_Node, _Node, str, str] | None:
    """(Mul, Cast, int8 initializer, scale initializer) when ``matmul``'s weight is exactly
    ``Cast(int8 [K, N] initializer) * float32 [N] scale`` used by this MatMul alone; else None."""
    if matmul.op_type != "MatMul" or len(matmul.inputs) != 2 or uses[matmul.inputs[1]] != 1:
        return None
    mul = producer.get(matmul.inputs[1])
    if mul is None or mul.op_type != "Mul" or len(mul.inputs) != 2:
        return None
    casts = [(i, producer.get(name)) for i, name in enumerate(mul.inputs)]
    found = [(i, c) for i, c in casts if c is not None and c.op_type == "Cast"]
    if len(found) != 1:
        return None
    at, cast = found[0]
    scale_name = mul.inputs[1 - at]
    if cast.cast_to != _FLOAT or len(cast.inputs) != 1 or uses[mul.inputs[at]] != 1:
        return None
    q, scale = arrays.get(cast.inputs[0]), arrays.get(scale_name)
    if q is None or scale is None or q.dtype != np.int8 or q.ndim != 2 \
            or scale.dtype != np.float32 or scale.size != q.shape[1] or q.shape[0] % block_size:
        return None
    return mul, cast, cast.inputs[0], scale_name


def rewrite_int8_matmuls(model: bytes, *, block_size: int = BLOCK_SIZE,
                         accuracy_level: int = ACCURACY_LEVEL) -> tuple[bytes, int]:
    """Rewrites every ``Cast(int8) -> Mul(column scales) -> MatMul`` into ``MatMulNBits``.

    Args:
        model: a serialised ONNX ModelProto (weights inline as raw_data).
        block_size: MatMulNBits block size (a power of two >= 16 dividing each K).
        accuracy_level: MatMulNBits accuracy level (4: int8 activations).

    Returns:
        (the rewritten model's bytes, how many MatMuls were rewritten); ``(model, 0)`` when
        nothing matched. The int8 weights and scales that only fed rewritten MatMuls, and the
        Cast and Mul nodes between them, are dropped.
    """
    top = list(_fields(model))
    graphs = [value for number, _, value, _ in top if number == 7]
    if len(graphs) != 1:
        return model, 0
    graph = list(_fields(graphs[0]))
    nodes = [_node(value) for number, _, value, _ in graph if number == 1]
    inits = [(raw, *_tensor(value)) for number, _, value, raw in graph if number == 5]
    arrays = {name: array for _, name, array in inits}
    producer = {out: node for node in nodes for out in node.outputs}
    uses: dict[str, int] = {}
    for node in nodes:
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1
    replaced: dict[int, bytes] = {}
    dropped_nodes: set[int] = set()
    dropped_inits: set[str] = set()
    added: list[bytes] = []
    for node in nodes:
        match = _dequantised_weight(node, producer, uses, arrays, block_size)
        if match is None:
            continue
        mul, cast, q_name, scale_name = match
        q, scale = arrays[q_name], arrays[scale_name]
        k, n = q.shape  # type: ignore[union-attr]
        weight = node.inputs[1]
        replaced[id(node)] = _nbits_node(node, weight, k, n, block_size, accuracy_level)
        added += nbits_tensors(weight, q, scale, block_size)  # type: ignore[arg-type]
        dropped_nodes |= {id(mul), id(cast)}
        dropped_inits |= {q_name, scale_name}
    if not replaced:
        return model, 0
    kept = [n for n in nodes if id(n) not in dropped_nodes]
    still_used = {name for n in kept if id(n) not in replaced for name in n.inputs}
    body = b"".join(_len_field(1, replaced.get(id(n), n.raw)) for n in kept)
    body += b"".join(bytes(raw) for number, _, _, raw in graph if number not in (1, 5))
    body += b"".join(bytes(raw) for raw, name, _ in inits
                     if name not in dropped_inits or name in still_used)
    body += b"".join(_len_field(5, t) for t in added)
    out = b"".join(bytes(raw) for number, _, _, raw in top if number != 7)
    if not any(number == 8 and MS_DOMAIN.encode() in bytes(value)
               for number, _, value, _ in top):
        out += _len_field(8, _len_field(1, MS_DOMAIN.encode()) + _int_field(2, 1))
    return out + _len_field(7, body), len(replaced)
