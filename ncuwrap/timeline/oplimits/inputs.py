"""An op's inputs as a capture records them, typed: each a tensor (sizes, dtype, strides), a list of tensors,
a value, or unknown.

The text is the ops table's ``shapes`` (:mod:`ncuwrap.timeline.readers.kineto_json`, :mod:`ncuwrap.timeline.readers.pytorch_nvtx`):
a JSON array ``[dims, types, strides, concrete]``, one entry per input in each. A PyTorch profiler trace
(``record_shapes=True``) records all four; nsys (``--pytorch=autograd-shapes-nvtx``) the sizes alone, so
there an input with no sizes may be a value or a 0-d tensor (unknown), dtypes are unknown and values are
unknown.

Hostile text never raises: a text that is not that layout reads as no inputs (:func:`parse` returns
None), a size that is not a non-negative integer below 2**62 or a tensor of more than :data:`MAX_DIMS`
dimensions makes that input unknown, and element counts are Python integers (no overflow); a count past
:data:`MAX_ELEMENTS` makes its input unknown rather than a number no GPU holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import orjson

MAX_DIMS = 16
MAX_INPUTS = 4096
MAX_SIZE = 1 << 62
MAX_ELEMENTS = 1 << 50  # a petabyte of bytes: no capture's tensor holds more

# Kineto's "Input type" (c10's type names) -> (dtype, bytes per element).
DTYPES = {
    "float": ("fp32", 4), "double": ("fp64", 8), "c10::Half": ("fp16", 2), "c10::BFloat16": ("bf16", 2),
    "c10::Float8_e4m3fn": ("fp8_e4m3", 1), "c10::Float8_e5m2": ("fp8_e5m2", 1), "c10::Float8_e4m3fnuz": ("fp8_e4m3", 1),
    "c10::Float8_e5m2fnuz": ("fp8_e5m2", 1), "c10::Float8_e8m0fnu": ("fp8_e8m0", 1),
    "long int": ("int64", 8), "int": ("int32", 4), "short int": ("int16", 2), "signed char": ("int8", 1), "unsigned char": ("uint8", 1),
    "bool": ("bool", 1), "c10::complex<float>": ("complex64", 8), "c10::complex<double>": ("complex128", 16),
    "c10::complex<c10::Half>": ("complex32", 4),
}
BYTES = {name: size for name, size in DTYPES.values()}
# Elements of a size but no type: what a kernel's name says of a copy's elements (PyTorch's OpaqueType<N>).
BYTES.update({f"{n}-byte": n for n in (1, 2, 4, 8, 16)})
# c10::ScalarType's numbers (a dtype argument's value in "Concrete Inputs": aten::to(x, 15) is bf16).
SCALAR_TYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "fp16", 6: "fp32", 7: "fp64", 8: "complex32", 9: "complex64",
                10: "complex128", 11: "bool", 15: "bf16", 23: "fp8_e5m2", 24: "fp8_e4m3", 25: "fp8_e5m2", 26: "fp8_e4m3"}
FLOATING = ("fp64", "fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp8_e8m0")
# "Input type" of inputs that are not tensors.
NOT_TENSORS = frozenset({"", "Scalar", "ScalarList", "GenericList", "None", "Device", "Layout", "MemoryFormat", "ScalarType", "Generator", "int[]",
                         "Storage", "QScheme"})
TENSOR_LIST = "TensorList"


@dataclass(frozen=True)
class Tensor:
    """A tensor input: its sizes, dtype (None: unknown, or not one :data:`DTYPES` names) and strides (None: not recorded)."""

    dims: tuple[int, ...]
    dtype: str | None = None
    strides: tuple[int, ...] | None = None
    type_name: str | None = None  # as recorded, for a dtype :data:`DTYPES` does not know

    @property
    def numel(self) -> int:
        return math.prod(self.dims)

    @property
    def stored(self) -> int:
        """The distinct elements a read touches: dimensions of stride 0 (an ``expand``ed input) count once."""
        if self.strides is None or len(self.strides) != len(self.dims):
            return self.numel
        return math.prod(d for d, s in zip(self.dims, self.strides) if s != 0)

    @property
    def itemsize(self) -> int | None:
        return BYTES.get(self.dtype) if self.dtype else None

    def nbytes(self, *, stored: bool = True) -> int | None:
        """Bytes of its elements (the distinct ones where ``stored``); None where the dtype is unknown."""
        size = self.itemsize
        return None if size is None else size * (self.stored if stored else self.numel)


@dataclass(frozen=True)
class TensorList:
    """A list of tensors (TensorList); ``tensors`` None where its sizes were not recorded (PyTorch leaves out a
    list longer than 30)."""

    tensors: tuple[Tensor, ...] | None


@dataclass(frozen=True)
class Value:
    """An input that is not a tensor, with its value as recorded ("1", "True", "[1, 1]"; None: not recorded)."""

    text: str | None

    def integer(self) -> int | None:
        try:
            return int(self.text) if self.text is not None else None
        except ValueError:
            return None

    def number(self) -> float | None:
        try:
            value = float(self.text) if self.text is not None else None
        except ValueError:
            return None
        return value if value is not None and math.isfinite(value) else None

    def boolean(self) -> bool | None:
        return {"True": True, "False": False, "1": True, "0": False}.get(self.text or "")

    def integers(self) -> tuple[int, ...] | None:
        """A list value ("[1, 1]") as integers; None where it is not one."""
        text = (self.text or "").strip()
        if not (text.startswith("[") and text.endswith("]")):
            return None
        try:
            values = tuple(int(v) for v in text[1:-1].split(",") if v.strip())
        except ValueError:
            return None
        return values if len(values) <= MAX_DIMS else None


UNKNOWN = None  # an input whose kind is not recorded (nsys: no sizes) or could not be read


@dataclass(frozen=True)
class OpInputs:
    """An op's inputs, in its schema's order; ``full``: dtypes and values were recorded (a PyTorch profiler
    trace), else sizes only (nsys)."""

    args: tuple
    full: bool

    def tensor(self, i: int) -> Tensor | None:
        arg = self.args[i] if 0 <= i < len(self.args) else None
        return arg if isinstance(arg, Tensor) else None

    def value(self, i: int) -> Value | None:
        arg = self.args[i] if 0 <= i < len(self.args) else None
        return arg if isinstance(arg, Value) else None

    def tensors(self) -> list[Tensor]:
        """Every tensor input, those of lists included."""
        out = []
        for arg in self.args:
            if isinstance(arg, Tensor):
                out.append(arg)
            elif isinstance(arg, TensorList) and arg.tensors:
                out.extend(arg.tensors)
        return out

    def dtype(self) -> str | None:
        """The dtype of the first floating tensor input (None: none known)."""
        return next((t.dtype for t in self.tensors() if t.dtype in FLOATING), None)


def _sizes(value) -> tuple[int, ...] | None:
    if not isinstance(value, list) or len(value) > MAX_DIMS:
        return None
    if not all(type(v) is int and 0 <= v < MAX_SIZE for v in value):
        return None
    return tuple(value) if math.prod(value) <= MAX_ELEMENTS else None


def _strides(value, n: int) -> tuple[int, ...] | None:
    if not isinstance(value, list) or len(value) != n or not all(type(v) is int and -MAX_SIZE < v < MAX_SIZE for v in value):
        return None
    return tuple(value)


def _tensor(dims, type_name, strides) -> Tensor | None:
    sizes = _sizes(dims)
    if sizes is None:
        return None
    dtype = DTYPES.get(type_name, (None, None))[0] if isinstance(type_name, str) else None
    return Tensor(sizes, dtype, _strides(strides, len(sizes)), type_name if isinstance(type_name, str) else None)


def _at(values, i):
    return values[i] if isinstance(values, list) and i < len(values) else None


def _full_arg(dims, type_name, strides, concrete):
    if type_name == TENSOR_LIST:
        if not isinstance(dims, list) or not dims:
            return TensorList(None)
        tensors = [_tensor(d, None, _at(strides, j)) for j, d in enumerate(dims)]
        return TensorList(tuple(tensors)) if all(t is not None for t in tensors) else TensorList(None)
    if not isinstance(type_name, str):
        return UNKNOWN
    if type_name in NOT_TENSORS or type_name.endswith("List"):
        return Value(concrete if isinstance(concrete, str) and concrete else None)
    return _tensor(dims, type_name, strides)


def _sizes_arg(dims):
    if not isinstance(dims, list) or not dims:
        return UNKNOWN  # a value, a 0-d tensor or None: sizes alone do not say
    return _tensor(dims, None, None)


def parse(text: str | None) -> OpInputs | None:
    """The inputs of an op's ``shapes`` text; None for none recorded, or a text not of that layout."""
    if not text:
        return None
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, list) or len(doc) != 4 or not isinstance(doc[0], list) or len(doc[0]) > MAX_INPUTS:
        return None
    dims, types, strides, concrete = doc
    if types is None:
        return OpInputs(tuple(_sizes_arg(d) for d in dims), full=False)
    return OpInputs(tuple(_full_arg(d, _at(types, i), _at(strides, i), _at(concrete, i)) for i, d in enumerate(dims)), full=True)
