"""Reading real H200 reports: .ncu-rep, raw CSV (scaled and base units), details CSV."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from ncuwrap.kernel import reading as ingest
from ncuwrap import ruleset
from ncuwrap.core.errors import InputError
from ncuwrap.kernel.reading import load
from ncuwrap.core.kernel_names import dims, function_name
from ncuwrap.kernel.reading.units import base_unit, scale_to_base
from ncuwrap.kernel.metrics import KERNEL
from tests.conftest import H200

TRANSPOSE = ["copyKernel", "transposeNaive", "transposeShared", "transposePadded"]


@pytest.mark.parametrize("kernel", TRANSPOSE)
def test_rep_raw_and_base_csv_agree_on_every_metric_the_rules_read(kernel):
    rep = load(H200 / "transpose" / f"{kernel}.ncu-rep.gz").frame
    raw = load(H200 / "transpose" / f"{kernel}.raw.csv").frame
    base = load(H200 / "transpose" / f"{kernel}.raw_base.csv").frame
    needed = ruleset.load(None, KERNEL).raw_metrics()
    compared = 0
    for metric in needed:
        if metric not in rep:
            continue
        a, b, c = rep[metric].iloc[0], raw[metric].iloc[0], base[metric].iloc[0]
        if isinstance(a, str):
            assert a == b == c, metric
            continue
        # The CSV pages round to 2-6 digits: compare with a relative tolerance.
        assert b == pytest.approx(a, rel=5e-3, abs=1e-2), (metric, a, b)
        assert c == pytest.approx(a, rel=5e-3, abs=1e-2), (metric, a, c)
        compared += 1
    assert compared >= 40


def test_scaled_units_are_converted_to_base_units():
    raw = load(H200 / "transpose" / "transposeNaive.raw.csv")
    base = load(H200 / "transpose" / "transposeNaive.raw_base.csv")
    assert raw.units["gpu__time_duration.sum"] == "us" and base.units["gpu__time_duration.sum"] == "ns"
    assert raw.units["dram__bytes_read.sum"] == "Mbyte"
    assert raw.frame["gpu__time_duration.sum"].iloc[0] == pytest.approx(282720.0)
    assert raw.frame["dram__bytes_read.sum"].iloc[0] == pytest.approx(79030016.0)
    assert raw.frame["dram__bytes.sum.per_second"].iloc[0] == pytest.approx(base.frame["dram__bytes.sum.per_second"].iloc[0], rel=1e-6)


def test_every_numeric_column_of_scaled_and_base_exports_agree():
    """All 2,200 metrics, not only the ones the rules read (one metric is ncu's own inconsistency)."""
    raw = load(H200 / "transpose" / "transposeShared.raw.csv").frame
    base = load(H200 / "transpose" / "transposeShared.raw_base.csv").frame
    # ncu prints 0.002614 %/Kbyte in one export and 2614 %/byte in the other: its own error.
    known_ncu_inconsistency = {"derived__pct_occupancy_per_shared_mem_size"}
    mismatched = []
    for column in raw.columns:
        if "__" not in column or column in known_ncu_inconsistency:
            continue
        a, b = raw[column].iloc[0], base[column].iloc[0]
        if isinstance(a, float) and isinstance(b, float):
            if math.isnan(a) and math.isnan(b):
                continue
            if not np.isclose(a, b, rtol=5e-3, atol=1e-2):
                mismatched.append((column, a, b))
        elif a != b:
            mismatched.append((column, a, b))
    assert mismatched == []


def test_launch_columns_quoted_names_with_commas_and_thousands_separators():
    profile = load(H200 / "transpose" / "transposeNaive.raw_base.csv")
    row = profile.frame.iloc[0]
    assert row["display_name"] == "transposeNaive(float *, const float *)"
    assert row["name"] == "transposeNaive"
    assert row["grid"] == "(128, 128, 1)" and row["block"] == "(32, 8, 1)"
    assert row["launch__grid_size"] == 16384  # "16,384" in the file
    assert row["gpu__time_duration.sum"] == 282720  # "282,720"


def test_several_launches_in_one_csv_keep_their_ids_and_values():
    profile = load(H200 / "vecadd" / "bench_add.raw.csv")
    assert list(profile.frame["launch_id"]) == [0, 1]
    assert list(profile.frame["name"]) == ["coalesced_add", "coalesced_add"]
    assert list(profile.frame["gpu__time_duration.sum"]) == [62880.0, 63936.0]


def test_ncu_rep_source_facts():
    profile = load(H200 / "transpose" / "transposeShared.ncu-rep.gz")
    s = profile.source
    assert (s.kind, s.device, s.compute_capability, s.ncu_version) == ("ncu-rep", "NVIDIA H200", "9.0", "2025.3.1.0")
    assert s.command_line.split()[1:8] == ["--set", "full", "-k", "transposeShared", "-s", "5", "-c"]
    assert len(s.sha256) == 64


@pytest.mark.parametrize("name", ["transpose/transposeShared.ncu-rep.gz", "transpose/transposeShared.raw.csv"])
def test_the_digest_taken_beside_the_read_is_the_files(name):
    path = H200 / name
    assert load(path).source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_read_that_fails_stops_the_digest(tmp_path, monkeypatch):
    # Past the header, a row with more fields than the header: refused while the digest thread still runs.
    bad = tmp_path / "bad.raw.csv"
    bad.write_text('"ID","Kernel Name"\n"",""\n"0","k","extra"\n' + "x" * (8 << 20))
    seen = []
    original = ingest.sha256

    def watched(path, stop=None):
        seen.append(stop)
        return original(path, stop)

    monkeypatch.setattr(ingest, "sha256", watched)
    with pytest.raises(InputError, match="bad.raw.csv"):
        load(bad)
    assert len(seen) == 1 and seen[0].is_set()
    assert ingest.sha256(bad, seen[0]) is None  # a stopped digest gives nothing, not a wrong value


def test_details_page_maps_labels_to_metrics():
    profile = load(H200 / "vecadd" / "bench_add.details.csv")
    frame = profile.frame
    assert profile.source.kind == "ncu-csv-details"
    assert list(frame["launch_id"]) == [0, 1]
    assert frame["gpu__time_duration.sum"].tolist() == [62880.0, 63940.0]  # "62.88 us", "63.94 us"
    assert frame["lts__throughput.avg.pct_of_peak_sustained_elapsed"].iloc[0] == pytest.approx(77.49)
    assert frame["launch__occupancy_limit_warps"].iloc[0] == 8
    # Labels ncuwrap has no metric name for are kept, not dropped.
    assert frame["details::Launch Statistics::Cluster Scheduling Policy"].iloc[0] == "PolicySpread"
    # Metrics asked for with --metrics keep their names.
    assert frame["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"].tolist() == [2097152, 2097152]


@pytest.mark.parametrize(
    "unit, factor, base",
    [("us", 1e3, "ns"), ("msecond", 1e6, "ns"), ("Mbyte", 1e6, "byte"), ("Gbyte/s", 1e9, "byte/s"), ("Tbyte/s", 1e12, "byte/s"),
     ("sector/ns", 1e9, "sector/s"), ("sector/us", 1e6, "sector/s"), ("Ghz", 1e9, "hz"), ("Kbyte/block", 1e3, "byte/block"),
     ("KiB", 1024, "byte"), ("inst/cycle", 1.0, "inst/cycle"), ("%", 1.0, "%"), ("", 1.0, "")],
)
def test_units(unit, factor, base):
    assert scale_to_base(unit) == pytest.approx(factor)
    assert base_unit(unit) == base


@pytest.mark.parametrize(
    "signature, name",
    [
        ("transposeNaive(float *, const float *)", "transposeNaive"),
        ("void gemm_tc<128, 128, 32>(const __half *, const __half *, float *, int, int, int)", "gemm_tc<128, 128, 32>"),
        ("void ns::k<float, (int)4>(const float *, int)", "ns::k<float, 4>"),
        ("scale_add<float, (int)4>(T1 *, const T1 *, T1, int)", "scale_add<float, 4>"),
        # ncu's raw page writes bool template arguments as numbers (cuBLAS's sgemm_largek_lds64<1, 0, ...> on the
        # H200, tests/data/h200_ncuwrap/top_source), its source page and ncu_report as casts: read as the numbers.
        ("void cub::DeviceReduceKernel<cub::Policy<(bool)1>, float *, int>(T2, T3)", "cub::DeviceReduceKernel<cub::Policy<1>, float *, int>"),
        ("plain", "plain"),
    ],
)
def test_function_name(signature, name):
    assert function_name(signature) == name


def test_dims():
    assert dims("(32, 8, 1)") == [32, 8, 1]
    assert dims("(65,536, 1, 1)") is None or dims("(65536, 1, 1)") == [65536, 1, 1]
    assert dims(None) is None


def test_csv_with_profiler_lines_before_the_header(tmp_path):
    text = (H200 / "vecadd" / "bench_add.raw.csv").read_text()
    path = tmp_path / "with_log.csv"
    path.write_text("==PROF== Connected to process 915 (/tmp/w/bench)\n==PROF== Disconnected from process 915\n" + text)
    assert list(load(path).frame["name"]) == ["coalesced_add", "coalesced_add"]


def test_usecols_reads_only_what_is_asked():
    profile = load(H200 / "transpose" / "transposeNaive.raw.csv", metrics=["gpu__time_duration.sum"])
    assert [c for c in profile.frame.columns if "__" in c] == ["gpu__time_duration.sum"]


def test_nsys_csv_is_not_taken_for_an_ncu_export():
    with pytest.raises(InputError, match=r"bench_st_cuda_api_sum.csv: not an Nsight Compute CSV export"):
        load(H200 / "nsys" / "bench_st_cuda_api_sum.csv")


@pytest.mark.parametrize("report", ["h200/transpose/transposeNaive.ncu-rep.gz", "h200_ncuwrap/diag/reduce_atomic_per_element.ncu-rep.gz"])
def test_a_report_read_for_the_rules_diagnoses_as_read_whole(report):
    # Issue 23: a .ncu-rep is read for the rules' metrics only (~150 of a full set's ~2,200, each a native
    # call), and the diagnosis document is the same as from every metric read.
    from ncuwrap.kernel import diagnosis as kernel_diagnosis
    from ncuwrap.render import jsonfmt

    rules = ruleset.load(None, KERNEL)
    path = f"tests/data/{report}"
    some, whole = load(path, metrics=kernel_diagnosis.needed_metrics(rules)), load(path)
    assert len(some.frame.columns) < len(whole.frame.columns) / 4
    assert jsonfmt.render(kernel_diagnosis.diagnose_profile(some, rules)) == jsonfmt.render(kernel_diagnosis.diagnose_profile(whole, rules))


# Texts a raw page's text column may hold, and texts near numbers: the raw reader decides that a text holds
# no number without pandas (ncu_csv._no_number); pandas' to_numeric is what the details page and every
# other text are read with, so the two must agree wherever the reader decides alone.
_NEAR_NUMBERS = ["NVIDIA H200", "H100", "n/a", "N/A", "no data", "CachePreferShared", "1d5", "0x10", "1_000", "\u0661\u0662", "inf", "-Infinity",
                 "+inf", "INF ", " inf", "nan", "NaN", "-nan", " 5", "5 ", "+5", "-5", "1e5", "1E-5", ".5", "5.", "e", "-", " ", "\t7\n", "1.2.3",
                 "--5", "infinite", "Inf1", "1e", "e5", "5e+", "1 2", "\u00a05", "5\u2003", "\u2212" "5", "1.#IND", "-1.#QNAN", "#N/A", "None", "NULL",
                 "True", "1j", "(5)", "5%", "$5", "5,0", "\u0665"]


def test_raw_reader_decides_no_number_only_where_pandas_reads_none():
    import random

    import pandas as pd

    from ncuwrap.kernel.reading import ncu_csv

    rng = random.Random(41)
    alphabet = "0123456789+-.eEinfatyINFAT xd_,\t\u00a0#/"
    texts = _NEAR_NUMBERS + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(20_000)]
    texts = [t.replace(",", "") for t in texts]  # as the reader gives them: thousands separators taken out
    read = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
    decided = [t for t, value in zip(texts, read) if ncu_csv._no_number(t) and not math.isnan(value)]
    assert decided == []
    # and it decides for the texts of real exports (a device name), so that they are read without pandas
    assert ncu_csv._no_number("NVIDIA H200") and ncu_csv._no_number("n/a")


def test_a_raw_page_is_diagnosed_without_pandas():
    """pandas' import is 0.3 s of a 10,000-launch raw page's whole diagnosis (docs/scale.md, issue 41): the raw
    page is read and diagnosed, and its JSON written, without it; the frame is built only when asked."""
    import subprocess
    import sys

    script = ("import sys; from ncuwrap.api import diagnose; from ncuwrap.render import Format, render; "
              f"render(diagnose({str(H200 / 'transpose' / 'copyKernel.raw.csv')!r}), Format.json); print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
    profile = load(H200 / "transpose" / "copyKernel.raw.csv")
    assert profile.frame["launch_id"].dtype == "Int64" and profile.frame is profile.frame  # built once, when asked


@pytest.mark.parametrize("export", ["h200/transpose/transposeNaive.raw.csv", "h200_ncuwrap/multi/two_processes.raw.csv",
                                    "h200_ncuwrap/advice/gather_nostall.raw.csv.gz"])
def test_raw_page_columns_read_as_its_frame(export):
    """Every metric the rules can name, and every launch column, reads the same from the raw page's columns
    (ColumnTable, no pandas) as from the frame built of them (FrameTable, the reading of a frame)."""
    from ncuwrap.kernel.metrics import CANONICAL, DERIVED, LAUNCH_TEXT, MetricTable
    from ncuwrap.kernel.reading.model import ColumnTable, FrameTable, META_COLUMNS

    from tests.conftest import DATA

    profile = load(DATA / export)
    assert isinstance(profile.table, ColumnTable)
    frame = FrameTable(profile.frame)
    assert profile.table.columns == frame.columns and len(profile.table) == len(frame)
    columns, framed = MetricTable(profile.table), MetricTable(frame)
    for name in [*CANONICAL, *DERIVED, *LAUNCH_TEXT]:
        a, b = columns.get(name), framed.get(name)
        assert a.dtype == b.dtype and columns.missing(name) == framed.missing(name), name
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
    for name in [*META_COLUMNS, "device__attribute_display_name"]:
        assert profile.table.values(name) == frame.values(name), name
        assert profile.table.first(name) == frame.first(name), name


def test_a_raw_page_profile_pickles_as_its_frame():
    import pickle

    profile = load(H200 / "transpose" / "copyKernel.raw.csv")
    again = pickle.loads(pickle.dumps(profile))
    assert again.frame.equals(profile.frame) and again.metric_names() == profile.metric_names() and again.source == profile.source
