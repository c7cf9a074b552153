"""What a report meant for people shows of many launches (issue 23): every kernel its section before any
kernel's second launch, and of a kernel's many launches the longest and those that differ. Synthetic
launch counts and times (labelled in each test) over the real H200 transpose verdicts."""

from __future__ import annotations

import dataclasses

from ncuwrap.kernel.verdict import KERNEL_SECTIONS, LAUNCHES_LISTED, OUTLIER_FACTOR
from tests.multi import four_transposes


def _one_kernel(times_us: list[float], odd: frozenset[int] = frozenset()):
    """SYNTHETIC: launches of the real transposeNaive verdict with the given ncu times; those in ``odd``
    carry the real transposeShared verdict instead (renamed transposeNaive): another verdict, one kernel."""
    base = four_transposes()
    naive, shared = base.kernels[1], base.kernels[2]
    launches = tuple(dataclasses.replace(shared if i in odd else naive, id=i, name=naive.name, duration_ns=t * 1000.0)
                     for i, t in enumerate(times_us))
    return dataclasses.replace(base, kernels=launches)


def test_a_few_launches_are_all_listed():
    d = _one_kernel([10.0 + i for i in range(LAUNCHES_LISTED)])
    (group,) = d.groups()
    assert [k.id for k in group.listed()] == list(range(LAUNCHES_LISTED))


def test_many_alike_list_the_longest_only():
    d = _one_kernel([10.0] * 100 + [10.5] + [10.0] * 99)
    (group,) = d.groups()
    assert [k.id for k in group.listed()] == [100]


def test_the_launches_that_differ_are_listed_in_launch_order():
    # 200 launches near 10 us; launch 7 takes 25 us (2.5x the median), launch 150 4 us (2.5x under it),
    # launches 30 and 31 reach another verdict; launch 60 is the longest of the alike ones (10.9 us).
    times = [10.0 + (i % 10) / 100 for i in range(200)]
    times[7], times[150], times[60] = 25.0, 4.0, 10.9
    d = _one_kernel(times, odd=frozenset({30, 31}))
    (group,) = d.groups()
    assert group.verdicts[0][1] == 198
    assert [k.id for k in group.listed()] == [7, 30, 31, 150]  # 7 is also the longest
    assert 25.0 / group.median_ns * 1000 > OUTLIER_FACTOR


def test_the_listed_are_capped_farthest_first():
    # 100 launches at 10 us and 40 at 1-4 us (all past 2x under the median): the longest, then the 19 farthest.
    times = [10.0] * 100 + [1.0 + 3.0 * i / 39 for i in range(40)]
    d = _one_kernel(times)
    (group,) = d.groups()
    listed = group.listed()
    assert len(listed) == LAUNCHES_LISTED
    assert [k.id for k in listed] == [0] + list(range(100, 119))


def test_every_kernel_gets_a_section_before_a_second_launch():
    # SYNTHETIC: the four real verdicts, 1,000 launches of the longest kernel and one of each other.
    base = four_transposes()
    kernels = [dataclasses.replace(base.kernels[1], id=i) for i in range(1000)]
    kernels += [dataclasses.replace(k, id=1000 + i) for i, k in enumerate(base.kernels) if i != 1]
    d = dataclasses.replace(base, kernels=tuple(kernels))
    sections = d.sections(10)
    assert len(sections) == 10 and {1000, 1002, 1003} <= sections  # the three others, then the longest launches
    assert len(d.sections(2)) == 4  # every kernel has one, whatever the detail asked
    assert KERNEL_SECTIONS >= 4


def test_what_a_report_shows_is_the_layout_s_choice_not_the_renderer_s():
    # Issue 21: the HTML page and the Markdown comment draw what ncuwrap.kernel.shown decides; handed another
    # Shown, they show that much. SYNTHETIC: the four real verdicts, 40 launches of each.
    import re

    from ncuwrap.render import Format, render
    from ncuwrap.kernel.shown import COMMENT, PAGE, Shown, layout

    base = four_transposes()
    d = dataclasses.replace(base, kernels=tuple(dataclasses.replace(base.kernels[i % 4], id=i) for i in range(160)))
    small = Shown(detail=4, summary=6, open=1)
    parts = layout(d, small)
    assert (parts.summary, len(parts.sections), parts.below) == (6, 4, 154)
    assert parts.rest_left_out == parts.below - len(parts.rest) and parts.rest_share_pct == d.share_pct(d.by_time()[6:])
    page = render(d, Format.html, shown=small)
    assert len(re.findall(r'<details class="kernel" id="k\d+"', page)) == 4
    assert len(re.findall(r'<details class="kernel" id="k\d+" open', page)) == 1
    assert len(re.findall(r'<details class="kernel" id="k\d+"', render(d, Format.html))) == PAGE.detail
    comment = render(d, Format.markdown, shown=small)
    sections = re.compile(r"<details><summary>\d+\. ")
    assert len(sections.findall(comment)) == 3 and comment.count("\n### ") == 1  # four kernels, one unfolded
    default = render(d, Format.markdown)
    assert default.count("\n### ") == min(COMMENT.open, 4)
