"""Each finding names the source line (or SASS instruction) that causes it (issue 20), on reports taken on
the H200 (tests/data/h200_ncuwrap/source, README there): the bundled cases profiled by `ncuwrap profile`
with SourceCounters and --import-source yes, read from the .ncu-rep and from the raw page with the source
page beside it; a Triton kernel (its lines in the Python file) and a cuBLAS SGEMM (no line information).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from ncuwrap.kernel.document import expand

DATA = Path(__file__).resolve().parent / "data" / "h200_ncuwrap" / "source"
OLD = Path(__file__).resolve().parent / "data" / "h200"

# case -> (finding, file:line of the cause, text on that line, where the warps' stall samples lie)
EXPECTED = {
    "transpose-naive": ("uncoalesced_global_stores", "transpose.cu:31", "out[static_cast<size_t>(c) * rows + r]", "transpose.cu:31"),
    "transpose-shared_tile": ("shared_bank_conflicts", "transpose.cu:49", "tile[threadIdx.x][threadIdx.y + j]", "transpose.cu:49"),
    "vecadd-strided": ("uncoalesced_global_stores", "vecadd.cu:84", "c[j] = a[j] + b[j]", "vecadd.cu:84"),
    "smem_banks-strided": ("shared_bank_conflicts", "smem_banks.cu:25", "acc += row[", "smem_banks.cu:25"),
    "spill-spill": ("local_memory_spill", "spill.cu:14", "st[k] = fmaf(", "spill.cu:14"),
    "divergence-per_lane": ("warp_divergence", "divergence.cu:13", "switch (sel)", "divergence.cu:18"),
    "gather-random": ("uncoalesced_global_loads", "gather.cu:12", "in[idx[i]]", "gather.cu:12"),
}


def unpacked(name: str, tmp_path: Path) -> Path:
    """A committed .gz fixture, unpacked (the reports are stored gzipped to keep the tree small)."""
    out = tmp_path / name.removesuffix(".gz")
    with gzip.open(DATA / name, "rb") as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def diagnosis(capsys, *args) -> dict:
    code, out, err = run_cli(capsys, "diagnose", *args, "-f", "json")
    assert code == 0, err
    return expand(json.loads(out))


def location(line: dict) -> str:
    return f"{Path(line['file']).name}:{line['line']}"


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_ncu_rep_names_the_line(case, tmp_path, capsys):
    finding_id, where, text, stalls = EXPECTED[case]
    kernel = diagnosis(capsys, unpacked(f"{case}.ncu-rep.gz", tmp_path))["kernels"][0]
    assert kernel["source_counters"]["origin"] == "ncu-rep" and kernel["source_counters"]["by"] == "line"
    finding = next(f for f in kernel["findings"] if f["id"] == finding_id)
    top = finding["where"]["lines"][0]
    assert location(top) == where and text in top["text"]
    assert Path(top["file"]).parent.name == "kernels"  # the bundled source, not a header
    assert top["share"] >= 0.5 and top["sass"] and all(s["pc"].startswith("0x") for s in top["sass"])
    assert location(kernel["where"]["lines"][0]) == stalls and kernel["where"]["waste"] == "stall_samples"


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_source_page_beside_the_raw_page_gives_the_same_lines(case, capsys):
    finding_id, where, text, _ = EXPECTED[case]
    kernel = diagnosis(capsys, DATA / f"{case}.raw.csv.gz", "--source-page", DATA / f"{case}.source_cuda_sass.csv.gz")["kernels"][0]
    assert kernel["source_counters"] == {"origin": "source-page", "by": "line", "instructions": kernel["source_counters"]["instructions"]}
    top = next(f for f in kernel["findings"] if f["id"] == finding_id)["where"]["lines"][0]
    assert location(top) == where and text in top["text"]


def test_exact_figures_of_the_naive_transpose(tmp_path, capsys):
    """The stores of line 31: four STG.E (the unrolled loop), each 4,194,304 sectors against 524,288 ideal
    (a warp's 32 floats land in 32 sectors instead of 4): 3,670,016 excess each, 14,680,064 in all."""
    kernel = diagnosis(capsys, unpacked("transpose-naive.ncu-rep.gz", tmp_path))["kernels"][0]
    where = next(f for f in kernel["findings"] if f["id"] == "uncoalesced_global_stores")["where"]
    assert where["total"] == 14_680_064 and where["covered"] == 1 and len(where["lines"]) == 1
    line = where["lines"][0]
    assert line["counters"] == {"global_sectors": 16_777_216, "global_sectors_ideal": 2_097_152, "inst_executed": 524_288}
    assert line["instructions"] == 4 and [s["value"] for s in line["sass"]] == [3_670_016] * 3
    assert all("STG.E" in s["sass"] for s in line["sass"])


def test_sass_page_alone_points_at_instructions(capsys):
    kernel = diagnosis(capsys, DATA / "transpose-naive.raw.csv.gz", "--source-page", DATA / "transpose-naive.source_sass.csv.gz")["kernels"][0]
    where = next(f for f in kernel["findings"] if f["id"] == "uncoalesced_global_stores")["where"]
    assert where["by"] == "instruction" and where["lines"][0]["file"] is None
    assert all("STG.E" in line["sass"][0]["sass"] for line in where["lines"])
    code, out, err = run_cli(capsys, "diagnose", DATA / "transpose-naive.raw.csv.gz", "--source-page", DATA / "transpose-naive.source_sass.csv.gz")
    assert "SASS only (no line information for transpose_naive: built without -lineinfo)" in " ".join(out.split())


def store_line() -> int:
    """The line of the Triton kernel's store, as the program printed it on the H200 (@@LINE store N)."""
    return int(re.search(r"@@LINE store (\d+)", (DATA / "torch.plain.log").read_text()).group(1))


def test_triton_kernel_points_into_the_python_file(capsys):
    doc = diagnosis(capsys, DATA / "torch.raw.csv.gz", "--source-page", DATA / "torch.source_cuda_sass.csv.gz")
    triton = next(k for k in doc["kernels"] if k["name"] == "transpose_rows_to_cols")
    top = next(f for f in triton["findings"] if f["id"] == "uncoalesced_global_stores")["where"]["lines"][0]
    assert location(top) == f"torch_kernels.py:{store_line()}" and "tl.store(dst + cols * n + row" in top["text"]
    assert top["share"] == 1
    # The cuda,sass page leaves out the cuBLAS kernel (no line information): said, not guessed.
    gemm = next(k for k in doc["kernels"] if k["name"].startswith("sm80_xmma_gemm"))
    assert gemm["source_counters"] is None
    assert gemm["where"]["why"] == (f"{DATA / 'torch.source_cuda_sass.csv.gz'} leaves {gemm['name']} out: it has no line information "
                                    "(built without -lineinfo); its SASS is in the page of --print-source sass")


def test_library_kernel_without_line_info_is_sass_only(capsys):
    doc = diagnosis(capsys, DATA / "torch.raw.csv.gz", "--source-page", DATA / "torch.source_sass.csv.gz")
    gemm = next(k for k in doc["kernels"] if k["name"].startswith("sm80_xmma_gemm"))
    assert gemm["source_counters"]["by"] == "instruction" and gemm["source_counters"]["instructions"] == 7688
    assert [f["id"] for f in gemm["findings"]] == ["at_roofline"]
    stalls = gemm["where"]
    assert stalls["by"] == "instruction" and all(line["file"] is None and line["sass"][0]["sass"] for line in stalls["lines"])
    assert stalls["lines"][0]["sass"][0]["sass"] == "LDS.128 R132, [R3+UR16]"


def test_a_report_without_source_counters_says_so_once(capsys):
    doc = diagnosis(capsys, OLD / "vecadd" / "bench_add.raw.csv")
    assert doc["lines_hint"].startswith("no per-instruction counters in the report: profile with 'ncuwrap profile'")
    assert all(f["where"] is None for k in doc["kernels"] for f in k["findings"])
    code, out, _ = run_cli(capsys, "diagnose", OLD / "vecadd" / "bench_add.raw.csv")
    assert out.count("not attributed: no per-instruction counters") == 1


def test_an_old_full_set_report_without_lineinfo_is_sass_only(capsys):
    """--set full has SourceCounters; the fixture's program was built without -lineinfo."""
    kernel = diagnosis(capsys, OLD / "transpose" / "transposeShared.ncu-rep.gz")["kernels"][0]
    where = next(f for f in kernel["findings"] if f["id"] == "shared_bank_conflicts")["where"]
    assert where["by"] == "instruction" and "LDS" in where["lines"][0]["sass"][0]["sass"]


def test_compare_says_which_lines_waste_went_away(tmp_path, capsys):
    before, after = unpacked("transpose-shared_tile.ncu-rep.gz", tmp_path), unpacked("transpose-padded_tile.ncu-rep.gz", tmp_path)
    code, out, err = run_cli(capsys, "compare", before, after, "--pair", "transpose_shared=transpose_padded", "-f", "json")
    assert code == 0, err
    pair = json.loads(out)["pairs"][0]
    assert pair["resolved"] == ["shared_bank_conflicts"]
    [change] = pair["lines"]["shared_bank_conflicts"]
    assert change["location"] == "transpose.cu:49" and change["before"] == 16_252_928 and change["after"] == 0 and change["gone"]
    code, out, _ = run_cli(capsys, "compare", before, after, "--pair", "transpose_shared=transpose_padded")
    assert "transpose.cu:49: 16,252,928 excess shared-memory wavefronts" in out and "-> gone" in out


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_every_format_shows_the_line_and_its_text(fmt, tmp_path, capsys):
    code, out, err = run_cli(capsys, "diagnose", unpacked("transpose-naive.ncu-rep.gz", tmp_path), "-f", fmt)
    assert code == 0, err
    assert "transpose.cu:31" in out
    if fmt == "markdown":
        assert ">> 31 |     if (r &lt;" not in out and ">> 31 |     if (r < rows && c < cols)" in out  # code block: verbatim
    else:
        assert "if (r &lt; rows &amp;&amp; c &lt; cols)" in out and "<script" not in out


TOP = Path(__file__).resolve().parent / "data" / "h200_ncuwrap" / "top_source"


def test_names_ncu_spells_apart_on_its_pages_still_meet(capsys):
    """cuBLAS's 'sgemm_largek_lds64<(bool)1, ...>' and PyTorch's 'at::native::reduce_kernel<...>' on the source
    page are 'sgemm_largek_lds64<1, ...>' and 'at::reduce_kernel<...>' on the raw page (H200, profile --top):
    the bool casts are read as the numbers they are, and a block no launch's name matches goes to the next
    launch when it executed as many instructions. The whole output, and each kernel's stalls at its SASS."""
    from conftest import golden

    # Relative paths (the tests run from the repository root): the terminal wraps the header by its length,
    # so an absolute path would make the output depend on where the checkout lies.
    top = TOP.relative_to(Path.cwd())
    raw, page = top / "report.raw.csv.gz", top / "report.source_sass.csv.gz"
    code, out, err = run_cli(capsys, "diagnose", raw, "--source-page", page, "--names", "function")
    assert code == 0 and err == "", err
    golden("source_top_names_apart.txt", out)
    d = diagnosis(capsys, raw, "--source-page", page)
    read = {k["name"].split("<")[0]: (k["source_counters"], k["where"]) for k in d["kernels"]}
    assert set(read) == {"sgemm_largek_lds64", "at::reduce_kernel"}
    assert read["sgemm_largek_lds64"][0] == {"origin": "source-page", "by": "instruction", "instructions": 528}
    assert read["at::reduce_kernel"][0] == {"origin": "source-page", "by": "instruction", "instructions": 6008}
    sgemm = read["sgemm_largek_lds64"][1]
    assert (sgemm["waste"], sgemm["total"], sgemm["covered"]) == ("stall_samples", 41, 0.561)
    assert sgemm["lines"][0]["sass"] == [{"pc": "0x7ff1397a4a50", "sass": "ULDC.64 UR4, c[0x0][0x210]", "value": 17}]


def test_bool_template_arguments_are_numbers():
    from ncuwrap.core.kernel_names import function_name

    assert function_name("void sgemm_largek_lds64<(bool)1, (bool)0, (int)5, (unsigned long long)8>(float *, int)") == \
        "sgemm_largek_lds64<1, 0, 5, 8>"


def test_source_page_of_another_report_is_refused(capsys):
    code, out, err = run_cli(capsys, "diagnose", DATA / "spill-spill.raw.csv.gz", "--source-page", DATA / "transpose-naive.source_cuda_sass.csv.gz")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "transpose-naive.source_cuda_sass.csv.gz: its kernel 'transpose_naive' is not among the launches of" in err


def test_a_raw_page_is_not_a_source_page(capsys):
    code, out, err = run_cli(capsys, "diagnose", DATA / "spill-spill.raw.csv.gz", "--source-page", DATA / "spill-spill.raw.csv.gz")
    assert code == 2 and "not a source page export; write one with 'ncu --import REPORT --csv --page source" in err


REL = Path("tests/data/h200_ncuwrap/source")  # the tests run from the repository root (conftest)


@pytest.mark.parametrize("fmt, name", [("table", "source_transpose_naive.txt"), ("markdown", "source_transpose_naive.md"),
                                       ("html", "source_transpose_naive.html"), ("json", "source_transpose_naive.json")])
def test_full_outputs_of_the_naive_transpose(fmt, name, capsys):
    """Every format, whole, on the real raw page with its source page beside it."""
    from conftest import golden

    code, out, err = run_cli(capsys, "diagnose", REL / "transpose-naive.raw.csv.gz", "--source-page",
                             REL / "transpose-naive.source_cuda_sass.csv.gz", "-f", fmt)
    assert code == 0, err
    golden(name, out)


def test_full_output_of_triton_and_cublas(capsys):
    from conftest import golden

    code, out, err = run_cli(capsys, "diagnose", REL / "torch.raw.csv.gz", "--source-page", REL / "torch.source_sass.csv.gz")
    assert code == 0, err
    golden("source_torch_sass.txt", out)


def test_full_output_of_compare_with_lines(tmp_path, capsys):
    from conftest import golden

    before, after = unpacked("transpose-shared_tile.ncu-rep.gz", tmp_path), unpacked("transpose-padded_tile.ncu-rep.gz", tmp_path)
    code, out, err = run_cli(capsys, "compare", before, after, "--pair", "transpose_shared=transpose_padded", "-f", "markdown")
    assert code == 0, err
    golden("source_compare_shared_padded.md", out.replace(str(tmp_path), "TMP"))


FAKE_NCU = Path(__file__).resolve().parent / "data" / "profile" / "fake_ncu" / "ncu"


@pytest.fixture
def fake_ncu(monkeypatch, tmp_path):
    """The stand-in ncu (tests/data/profile/fake_ncu) handing out the real H200 files given to it."""
    log = tmp_path / "argv.jsonl"
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(log))
    for name in ("FAKE_NCU_MODE", "FAKE_NCU_STREAM", "FAKE_NCU_VERSION", "FAKE_NCU_SOURCE_CSV", "FAKE_NCU_SOURCE_SASS_CSV"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("ncuwrap.profile.rundir.nvidia_smi", lambda: {"error": "no GPU in tests"})

    def serve(case: str, kernels: str, **pages: str):
        monkeypatch.setenv("FAKE_NCU_CSV", str(unpacked(f"{case}.raw.csv.gz", tmp_path)))
        monkeypatch.setenv("FAKE_NCU_KERNELS", kernels)
        for env, name in pages.items():
            monkeypatch.setenv(env, str(DATA / name))
        return lambda: [json.loads(line) for line in log.read_text().splitlines()]

    return serve


def program(tmp_path: Path) -> Path:
    prog = tmp_path / "prog.sh"
    prog.write_text("#!/bin/sh\nexit 0\n")
    prog.chmod(0o755)
    return prog


def test_profile_reads_the_source_page_back(fake_ncu, tmp_path, capsys):
    calls = fake_ncu("transpose-naive", "transpose_naive:19", FAKE_NCU_SOURCE_CSV="transpose-naive.source_cuda_sass.csv.gz")
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "-f", "json", "--", program(tmp_path))
    assert code == 0, err
    kernel = json.loads(out)["kernels"][0]
    top = next(f for f in kernel["findings"] if f["id"] == "uncoalesced_global_stores")["where"]["lines"][0]
    assert location(top) == "transpose.cu:31"
    imports = [c for c in calls() if c[0] == "--import"]
    # Every launch has its lines from the cuda,sass page: the SASS page is not exported.
    assert imports == [["--import", str(run / "report.ncu-rep"), "--csv", "--page", "raw"],
                       ["--import", str(run / "report.ncu-rep"), "--csv", "--page", "source", "--print-source", "cuda,sass"]]
    assert (run / "report.source.csv").is_file() and not (run / "report.source_sass.csv").exists()
    commands = (run / "commands.txt").read_text()
    assert (f"# source page export (cuda,sass)\n{FAKE_NCU} --import {run}/report.ncu-rep --csv --page source --print-source cuda,sass "
            f"> {run}/report.source.csv\n") in commands
    assert "report.source.csv, verdict.json" in err and "with SourceCounters and the sources on disk" in err


def test_profile_takes_the_sass_page_for_kernels_without_lines(fake_ncu, tmp_path, capsys):
    fake_ncu("torch", "transpose_rows_to_cols:19,sm80_xmma_gemm:19", FAKE_NCU_SOURCE_CSV="torch.source_cuda_sass.csv.gz",
             FAKE_NCU_SOURCE_SASS_CSV="torch.source_sass.csv.gz")
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "-f", "json", "--", program(tmp_path))
    assert code == 0, err
    kernels = {k["name"][:22]: k for k in json.loads(out)["kernels"]}  # names cut to 22 characters
    assert kernels["transpose_rows_to_cols"]["source_counters"]["by"] == "line"  # the cuda,sass page's
    assert kernels["sm80_xmma_gemm_f32f32_"]["source_counters"]["by"] == "instruction"  # the SASS page's
    assert (run / "report.source_sass.csv").is_file()


def test_profile_without_source_pages_says_so(fake_ncu, tmp_path, capsys):
    fake_ncu("transpose-naive", "transpose_naive:17")  # the stand-in prints an empty page
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "-f", "json", "--", program(tmp_path))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["lines_hint"].startswith("no per-instruction counters in the report")
    assert "warning" not in err


def test_only_minor_findings_is_not_no_issue(tmp_path, capsys):
    """'no issue found' followed by a MINOR finding was a false statement (issue 24's review)."""
    report = unpacked("transpose-padded_tile.ncu-rep.gz", tmp_path)
    outputs = {}
    for fmt in ("table", "markdown", "html"):
        code, outputs[fmt], err = run_cli(capsys, "diagnose", report, "-f", fmt)
        assert code == 0, err
    assert "\n  no costly issue found (1 minor)\n  MINOR  Shared-memory bank conflicts" in outputs["table"]
    assert "no costly issue found (1 minor)" in outputs["markdown"] and "no costly issue found (1 minor)" in outputs["html"]
    assert "no issue found" not in outputs["table"]


def test_report_sources_kept_once_for_every_launch():
    """The launches of one module each carry its source text: the .ncu-rep reader keeps one tuple of its lines
    for all of them (the forked reader then sends it once), and a file whose text differs gets its own."""
    from ncuwrap.kernel.reading import source_counters

    def files(text: str) -> dict:
        return {"k.cu": "".join(text)}  # a new str for every launch, as the reader's

    cache: dict = {}
    first, second = (source_counters._files(files("int x;\nx++;\n"), cache) for _ in range(2))
    other = source_counters._files(files("int y;\n"), cache)
    assert first == second == {"k.cu": ("int x;", "x++;")} and first["k.cu"] is second["k.cu"]
    assert other == {"k.cu": ("int y;",)}
