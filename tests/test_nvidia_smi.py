"""nvidia-smi asked one way, for its three users: the run folder's environment.json, the clocks of a
bench report, and the architecture a benchmark is built for. The answers parsed are real H200 output
(tests/data/nvidia_smi/h200, README there), replayed by a FAKE subprocess.run; the failure paths
(no nvidia-smi, a failing query, a timeout, one that cannot run) use FAKE run/which as well."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ncuwrap.core import nvidia_smi as S
from ncuwrap.bundled.bench import query_clocks
from ncuwrap.bundled.build import ArchChoice, detect_arch
from ncuwrap.profile.rundir import NVIDIA_SMI_FIELDS, nvidia_smi

H200 = Path(__file__).resolve().parent / "data" / "nvidia_smi" / "h200"
SMI = "/usr/local/nvidia/bin/nvidia-smi"
ENVIRONMENT_ARGV = [SMI, "--query-gpu=index,name,uuid,driver_version,pci.bus_id,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,"
                         "persistence_mode,compute_mode", "--format=csv,noheader"]
CLOCKS_ARGV = [SMI, "--query-gpu=clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,persistence_mode,power.limit,temperature.gpu",
               "--format=csv,noheader,nounits"]
COMPUTE_CAP_ARGV = [SMI, "--query-gpu=compute_cap", "--format=csv,noheader"]


class Replay:
    """FAKE subprocess.run: records each call and answers with a recorded output (or raises ``error``)."""

    def __init__(self, name: str | None = None, returncode: int = 0, error: Exception | None = None):
        self.stdout = (H200 / name).read_text() if name else ""
        self.returncode, self.error = returncode, error
        self.calls: list[tuple[list[str], dict]] = []

    def __call__(self, argv, **kwargs):
        self.calls.append((list(argv), kwargs))
        if self.error is not None:
            raise self.error
        return subprocess.CompletedProcess(argv, self.returncode, self.stdout, "")


def found(name):  # FAKE shutil.which: nvidia-smi where the driver's mount puts it
    return SMI if name == "nvidia-smi" else None


def missing(name):  # FAKE shutil.which: no nvidia-smi
    return None


# ------------------------------------------------------------------------------- the real answers


def test_environment_json_gets_every_gpu_field():
    replay = Replay("environment.csv")
    assert nvidia_smi(run=replay, which=found) == {"argv": ENVIRONMENT_ARGV, "gpus": [{
        "index": "0", "name": "NVIDIA H200", "uuid": "GPU-7a5bc5f3-d041-8c1a-6ace-9adb9869e4e5", "driver_version": "580.159.04",
        "pci.bus_id": "00000000:00:06.0", "clocks.sm": "345 MHz", "clocks.max.sm": "1980 MHz", "clocks.mem": "3201 MHz",
        "clocks.max.mem": "3201 MHz", "persistence_mode": "Enabled", "compute_mode": "Default"}]}
    assert replay.calls == [(ENVIRONMENT_ARGV, {"capture_output": True, "timeout": 30, **S.TOOL_TEXT})]


def test_bench_clocks_without_units():
    replay = Replay("clocks.csv")
    assert query_clocks(run=replay, which=found) == {"clocks.sm": "345", "clocks.mem": "3201", "clocks.max.sm": "1980",
                                                     "clocks.max.mem": "3201", "persistence_mode": "Enabled",
                                                     "power.limit": "700.00", "temperature.gpu": "35"}
    assert [argv for argv, _ in replay.calls] == [CLOCKS_ARGV]


def test_build_arch_from_the_compute_capability():
    replay = Replay("compute_cap.csv")
    assert detect_arch(run=replay, which=found) == ArchChoice("sm_90", None)
    assert [argv for argv, _ in replay.calls] == [COMPUTE_CAP_ARGV]


def test_parse_rows_of_real_output():
    assert S.parse_rows((H200 / "environment.csv").read_text(), NVIDIA_SMI_FIELDS)[0]["uuid"] == "GPU-7a5bc5f3-d041-8c1a-6ace-9adb9869e4e5"
    # tests/data/realworld/nvidia-smi.txt: another query on the same kind of machine, with its header line.
    header, row = (Path(__file__).resolve().parent / "data" / "realworld" / "nvidia-smi.txt").read_text().splitlines()
    fields = ("name", "driver_version", "clocks.current.sm", "clocks.max.sm", "clocks.current.memory")
    assert S.parse_rows(row + "\n\n", fields) == [{"name": "NVIDIA H200", "driver_version": "580.159.04", "clocks.current.sm": "345 MHz",
                                                   "clocks.max.sm": "1980 MHz", "clocks.current.memory": "3201 MHz"}]
    # One row per GPU, in nvidia-smi's order (two GPUs: the H200's row twice, the second with index 1).
    text = (H200 / "environment.csv").read_text()
    two = S.parse_rows(text + text.replace("0, NVIDIA H200", "1, NVIDIA H200"), NVIDIA_SMI_FIELDS)
    assert [gpu["index"] for gpu in two] == ["0", "1"]


# ---------------------------------------------------------------------------------- why there is none


def test_without_nvidia_smi():
    assert S.query(("compute_cap",), which=missing) == S.GpuQuery(argv=None, error="nvidia-smi not found on PATH")
    assert nvidia_smi(which=missing) == {"error": "nvidia-smi not found on PATH"}
    assert query_clocks(which=missing) is None
    assert detect_arch(which=missing) == ArchChoice("sm_90", "no GPU found (nvidia-smi is not installed): building for sm_90; "
                                                             "pass --arch to choose")


def test_a_failing_query_says_what_nvidia_smi_said():
    """The real answer of nvidia-smi to a field it does not know (exit code 2)."""
    replay = Replay("bad_field.txt", returncode=2)
    answer = S.query(("no_such_field",), run=replay, which=found)
    assert answer == S.GpuQuery(argv=[SMI, "--query-gpu=no_such_field", "--format=csv,noheader"],
                                error='Field "no_such_field" is not a valid field to query.')
    assert nvidia_smi(run=replay, which=found) == {"argv": ENVIRONMENT_ARGV, "error": 'Field "no_such_field" is not a valid field to query.'}
    assert query_clocks(run=replay, which=found) is None
    assert detect_arch(run=replay, which=found) == ArchChoice("sm_90", "no GPU found (nvidia-smi failed): building for sm_90; "
                                                                       "pass --arch to choose")


@pytest.mark.parametrize("error, text", [
    (subprocess.TimeoutExpired(COMPUTE_CAP_ARGV, 30), f"Command '{COMPUTE_CAP_ARGV}' timed out after 30 seconds"),
    (PermissionError(13, "Permission denied"), "[Errno 13] Permission denied"),
])
def test_a_query_that_hangs_or_cannot_run(error, text):
    replay = Replay(error=error)
    assert S.query(("compute_cap",), run=replay, which=found) == S.GpuQuery(argv=COMPUTE_CAP_ARGV, error=text)
    assert nvidia_smi(run=replay, which=found) == {"argv": ENVIRONMENT_ARGV, "error": text}
    assert query_clocks(run=replay, which=found) is None
    assert detect_arch(run=replay, which=found).note == "no GPU found (nvidia-smi failed): building for sm_90; pass --arch to choose"


def test_a_gpu_that_answers_nothing():
    """Exit code 0 and no row (no GPU visible): environment.json lists none, the others fall back."""
    replay = Replay()
    assert nvidia_smi(run=replay, which=found) == {"argv": ENVIRONMENT_ARGV, "gpus": []}
    assert query_clocks(run=replay, which=found) is None
    assert detect_arch(run=replay, which=found).note == "no GPU found (nvidia-smi failed): building for sm_90; pass --arch to choose"
