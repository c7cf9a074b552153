"""Kernel names: the function name without its parameter list, from a demangled signature; the short
name nsys gives a kernel."""

from __future__ import annotations

import functools
import re

# ncu_report and ncu's source page demangle integer and bool template arguments as casts ("k<(int)4>",
# cuBLAS's "sgemm_largek_lds64<(bool)1, (bool)0, ...>"), ncu's raw and details pages as plain numbers
# ("k<4>", "<1, 0, ...>"): normalise to the plain form so one kernel has one name in every input.
_INT_CAST = re.compile(r"\((?:unsigned |signed )?(?:int|long|long long|short|char|bool)\)(-?\d+)")


@functools.lru_cache(maxsize=4096)
def function_name(signature: str) -> str:
    """``"void ns::k<float, 4>(const float *, int)"`` -> ``"ns::k<float, 4>"``.

    The parameter list is the last parenthesised group at template depth 0; a leading return type
    (present on demangled template functions) is dropped.
    """
    text = signature.strip()
    angle = paren = 0
    cut = None
    for i, ch in enumerate(text):
        if ch == "<":
            angle += 1
        elif ch == ">" and angle:
            angle -= 1
        elif ch == "(":
            if angle == 0 and paren == 0:
                cut = i
            paren += 1
        elif ch == ")" and paren:
            paren -= 1
    # "operator()" style names: keep the group if nothing precedes it.
    name = text[:cut].rstrip() if cut else text
    # Drop a return type: the last space at depth 0 separates it from the name.
    angle = paren = 0
    last_space = -1
    for i, ch in enumerate(name):
        if ch in "<(":
            angle += 1
        elif ch in ">)" and angle:
            angle -= 1
        elif ch == " " and angle == 0:
            last_space = i
    return _INT_CAST.sub(r"\1", name[last_space + 1 :] if last_space >= 0 else name)


def short_name(name: str) -> str:
    """``void at::<unnamed>::cunn_SoftMaxForwardReg<float, ...>(T3 *, ...)`` -> ``cunn_SoftMaxForwardReg``:
    what nsys calls the kernel's short name, whichever demangler spelled the rest. The function's own
    name: after its return type (``std::enable_if<...>::type`` among them), without template arguments,
    namespaces or classes."""
    depth, kept = 0, []
    for ch in function_name(name):
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            kept.append(ch)
    return "".join(kept).rsplit("::", 1)[-1].strip() or name


# Launch wrappers whose own name says nothing of the kernel: CUTLASS launches its kernels as cutlass::Kernel<Op>,
# Kernel2<Op> or device_kernel<Op>, the operator in the template argument (two different GEMMs are both "Kernel2").
WRAPPERS = frozenset({"Kernel", "Kernel2", "device_kernel"})


def wrapped(name: str) -> str | None:
    """The operator a CUTLASS launch wrapper (:data:`WRAPPERS`) launches: its first template argument, as written
    (``void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(...Params)`` ->
    ``cutlass_80_simt_sgemm_128x256_8x4_nt_align1``); None for any other kernel."""
    function = function_name(name)
    if short_name(name) not in WRAPPERS or not function.startswith("cutlass::") or "<" not in function:
        return None
    depth, arg = 0, []
    for ch in function[function.index("<"):]:
        if ch == "<":
            depth += 1
            if depth == 1:
                continue
        elif ch == ">":
            depth -= 1
            if depth == 0:
                break
        elif ch == "," and depth == 1:
            break
        arg.append(ch)
    return "".join(arg).strip() or None


@functools.lru_cache(maxsize=4096)
def telling_name(name: str) -> str:
    """:func:`short_name`, except for a CUTLASS launch wrapper: the short name of the operator it launches
    (:func:`wrapped`), where nsys's short name is ``Kernel2``."""
    inner = wrapped(name)
    return (short_name(inner) or short_name(name)) if inner else short_name(name)


def dims(text: str | None) -> list[int] | None:
    """``"(32, 8, 1)"`` -> ``[32, 8, 1]``; None when absent or unreadable."""
    if not text:
        return None
    try:
        return [int(part.strip().replace(",", "")) for part in text.strip("() ").split(",") if part.strip()]
    except ValueError:
        return None
