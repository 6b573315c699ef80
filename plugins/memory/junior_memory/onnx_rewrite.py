"""Int8 kernels for a model that stores int8 weights: the offline all-MiniLM-L6-v2 computes with its int8 weights.

The pinned ``model.onnx`` stores each layer's weight matrix as int8 with one float scale per output column, turned
back into float by a ``Cast`` and a ``Mul`` in front of each ``MatMul``. ONNX Runtime folds those into fp32 weights
when it creates the session, so every call reads 42 MB of fp32 weights: at the few word pieces of a query that is
most of the model's time. ``int8_matmuls`` rewrites each such ``Cast`` → ``Mul`` → ``MatMul`` into one
``DynamicQuantizeMatMul`` (an ONNX Runtime operator) over the same int8 weights and scales: the weights stay int8 in
memory (10.6 MB) and each call quantizes its activations to 8 bits, so the model runs int8 kernels. Embeddings move
by a cosine of about 0.99 from the fp32 ones (the activations' rounding); nothing else changes.

The rewrite edits the protobuf without the ``onnx`` package: a private descriptor declares the few ONNX fields it
reads or writes (field numbers from ``onnx.proto``), and every other field (weights, attributes, metadata) passes
through as an unknown field, byte for byte.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["int8_matmuls"]

# ``onnx.proto`` (proto2) field numbers of what the rewrite touches.
_FIELDS: dict[str, list[tuple[str, int, str, bool]]] = {
    # name: [(field, number, type or message, repeated)]
    "OperatorSetIdProto": [("domain", 1, "string", False), ("version", 2, "int64", False)],
    "NodeProto": [("input", 1, "string", True), ("output", 2, "string", True), ("name", 3, "string", False),
                  ("op_type", 4, "string", False), ("domain", 7, "string", False)],
    "TensorProto": [("dims", 1, "int64", True), ("data_type", 2, "int32", False), ("name", 8, "string", False)],
    "GraphProto": [("node", 1, "NodeProto", True), ("initializer", 5, "TensorProto", True)],
    "ModelProto": [("graph", 7, "GraphProto", False), ("opset_import", 8, "OperatorSetIdProto", True)],
}
FLOAT, INT8 = 1, 3  # TensorProto.DataType
CONTRIB = "com.microsoft"


@functools.cache
def _messages() -> dict[str, Any]:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # type: ignore[import-untyped]

    types = {"string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
             "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
             "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32}
    proto = descriptor_pb2.FileDescriptorProto(name="junior_memory_onnx_subset.proto", package="junior_memory_onnx",
                                               syntax="proto2")
    for name, fields in _FIELDS.items():
        message = proto.message_type.add(name=name)
        for field, number, kind, repeated in fields:
            entry = message.field.add(name=field, number=number, label=(
                descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED if repeated
                else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL))
            if kind in types:
                entry.type = types[kind]
            else:
                entry.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
                entry.type_name = f".junior_memory_onnx.{kind}"
    pool = descriptor_pool.DescriptorPool()  # private: never clashes with the onnx package's own descriptors
    pool.Add(proto)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"junior_memory_onnx.{name}"))
            for name in _FIELDS}


def int8_matmuls(data: bytes) -> tuple[bytes, int]:
    """``data`` (a model file) with every int8-weight ``MatMul`` as a ``DynamicQuantizeMatMul``, and how many.

    A ``MatMul`` is rewritten only when its weight is exactly ``Mul(Cast(W), S)``: ``W`` an int8 initializer of
    shape [K, N], ``S`` a float initializer of shape [1, N] (one scale per output column, zero point 0), and
    neither the cast, the product nor the scale used by anything else. Anything else is left as it is (0 rewritten:
    the caller keeps the original file).
    """
    model = _messages()["ModelProto"]()
    model.ParseFromString(data)
    graph = model.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    rewritten: dict[int, Any] = {}  # id of a MatMul node -> its replacement
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type != "MatMul" or node.domain or len(node.input) != 2:
            continue
        mul = producer.get(node.input[1])
        if mul is None or mul.op_type != "Mul" or mul.domain or len(mul.input) != 2:
            continue
        cast = producer.get(mul.input[0])
        if cast is None or cast.op_type != "Cast" or cast.domain or len(cast.input) != 1:
            continue
        weight, scale = initializers.get(cast.input[0]), initializers.get(mul.input[1])
        if weight is None or scale is None or weight.data_type != INT8 or scale.data_type != FLOAT:
            continue
        if len(weight.dims) != 2 or list(scale.dims) != [1, weight.dims[1]]:
            continue
        if uses.get(node.input[1]) != 1 or uses.get(mul.input[0]) != 1 or uses.get(mul.input[1]) != 1:
            continue
        # DynamicQuantizeMatMul takes a per-column scale as a 1-D tensor of N values: same values, one shape less.
        del scale.dims[:]
        scale.dims.append(weight.dims[1])
        replacement = type(node)(input=[node.input[0], weight.name, scale.name], output=list(node.output),
                                 name=f"{node.name}_int8", op_type="DynamicQuantizeMatMul", domain=CONTRIB)
        rewritten[id(node)] = replacement
        dropped.update((id(mul), id(cast)))
    if not rewritten:
        return data, 0
    nodes = []
    for node in graph.node:
        if id(node) not in dropped:
            kept = type(node)()
            kept.CopyFrom(rewritten.get(id(node), node))  # a copy: the originals go with the list below
            nodes.append(kept)
    del graph.node[:]
    graph.node.extend(nodes)
    if not any(opset.domain == CONTRIB for opset in model.opset_import):
        model.opset_import.add(domain=CONTRIB, version=1)
    return model.SerializeToString(), len(rewritten)
