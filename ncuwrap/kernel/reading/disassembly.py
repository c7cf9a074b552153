"""The SASS of single instructions, by NVIDIA's ``nvdisasm`` (the ``nvidia-cuda-nvdisasm`` wheel ncuwrap
depends on, or a CUDA toolkit's), written as ``ncu_report``'s ``sass_by_pc`` writes it.

NVIDIA's report reader disassembles too, but only after loading the report and starting its disassembler,
in each process that asks: for the few instructions a diagnosis shows, that was most of the memory and the
critical path of reading a large report (docs/scale.md, figures behind the code). nvdisasm decodes a raw instruction stream
(``--binary SMxy``): from Volta on every instruction is 16 bytes that decode alone, so the instructions
asked, from any functions, go in one file and one run per architecture (nvdisasm's start is most of a run,
whatever it is given).

In that file an instruction does not sit at its own PC, so the addresses nvdisasm prints in it (branch and
return targets) are moved back by the same distance. They are told from other numbers by where the file is
placed (:data:`BASE`: no immediate of a real kernel lies within 4 GiB of it). What ncu_report writes
differently is written its way: no operand reuse flags, a comma before a return's target, and a branch to
itself shown with the label ncu_report gives it. Checked against ncu_report's text for every instruction
of every report in tests/data (tests/test_disassembly.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

BASE = 0x500000000000
_NEAR = 1 << 32
_LINE = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s*(.*?)\s*;\s*$")
_NUMBER = re.compile(r"0x[0-9a-f]+")
_REUSE = re.compile(r"\.reuse\b")
_RETURN = re.compile(r"^((?:@!?U?P\w+\s+)?RET\S*\s+\S+)\s+(0x[0-9a-f]+)$")
# Bounds: instructions a run is given (a diagnosis asks 16 per counter of a launch), and its time.
MAX_INSTRUCTIONS = 1 << 16
TIMEOUT_S = 60


def nvdisasm() -> str | None:
    """The nvdisasm to run: the wheel's (a version known to write what ncu_report writes), else one on PATH
    or in a CUDA toolkit; None where there is none."""
    name = "nvdisasm.exe" if sys.platform == "win32" else "nvdisasm"
    try:
        import nvidia  # the wheel installs nvidia/cu<N>/bin/nvdisasm (a namespace package)
    except ImportError:
        roots: list = []
    else:
        roots = list(getattr(nvidia, "__path__", []))
    for root in roots:
        for found in sorted(Path(root).glob(f"cu*/bin/{name}"), reverse=True):
            if os.access(found, os.X_OK):
                return str(found)
    found = shutil.which("nvdisasm")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and os.access(Path(home) / "bin" / name, os.X_OK):
            return str(Path(home) / "bin" / name)
    return None


class Unavailable(Exception):
    """nvdisasm is missing or could not decode what it was given (the caller asks ncu_report instead)."""


def sass(arch: str, instructions: Iterable[tuple[int, bytes]], tool: str | None = None) -> dict[int, str]:
    """PC -> SASS text (as ncu_report's ``sass_by_pc``, whitespace collapsed) of each (pc, 16 bytes) of
    architecture ``arch`` (``SM90``). Raises :class:`Unavailable` where nvdisasm is missing, fails, or
    does not give each instruction one line."""
    pcs, code = [], bytearray()
    for pc, encoded in instructions:
        if len(encoded) != 16:
            raise Unavailable(f"an instruction of {len(encoded)} bytes")
        pcs.append(pc)
        code += encoded
    if not pcs:
        return {}
    if len(pcs) > MAX_INSTRUCTIONS:
        raise Unavailable(f"{len(pcs)} instructions")
    tool = tool or nvdisasm()
    if tool is None:
        raise Unavailable("nvdisasm not found")
    with tempfile.TemporaryDirectory(prefix="ncuwrap-sass-") as folder:
        stream = Path(folder) / "code.bin"
        stream.write_bytes(code)
        try:
            done = subprocess.run([tool, "--binary", arch, "--base-address", hex(BASE), str(stream)], capture_output=True,
                                  text=True, timeout=TIMEOUT_S, errors="replace")
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"nvdisasm did not run ({exc})") from None
    if done.returncode:
        raise Unavailable(f"nvdisasm: {done.stderr.strip()[:200]}")
    return _read(done.stdout, pcs)


def _read(listing: str, pcs: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for line in listing.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        placed = int(match.group(1), 16)
        slot, rest = divmod(placed - BASE, 16)
        if rest or not 0 <= slot < len(pcs) or pcs[slot] in out:
            raise Unavailable(f"an instruction listed at {placed:#x}")
        out[pcs[slot]] = _as_ncu_writes(match.group(2), placed, pcs[slot])
    if len(out) != len(pcs):
        raise Unavailable(f"{len(pcs) - len(out)} instructions not listed")
    return out


def _as_ncu_writes(text: str, placed: int, pc: int) -> str:
    def moved(number: re.Match) -> str:
        value = int(number.group(0), 16)
        if abs(value - BASE) >= _NEAR:
            return number.group(0)
        target = value - placed + pc
        # ncu_report disassembles an instruction alone, so a branch to itself is to the one label it made.
        return f"`(.L_x_0) {target:#x}" if target == pc else f"{target:#x}"

    text = " ".join(_REUSE.sub("", _NUMBER.sub(moved, text)).split())
    return _RETURN.sub(r"\1, \2", text)
