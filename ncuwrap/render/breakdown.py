"""The timeline's breakdown as the renderers draw it: the text bar, in the glyphs of the timeline model."""

from __future__ import annotations

from ncuwrap.timeline.model import GLYPHS


def text_bar(timeline, width: int = 60) -> str:  # a Timeline or a RankTimeline (both have segments())
    """The breakdown as ``width`` characters, one glyph per category (largest remainders; any
    category present gets at least one character)."""
    parts = [s for s in timeline.segments() if s.ns > 0]
    total = sum(s.ns for s in parts)
    if not total:
        return GLYPHS["idle"] * width
    exact = [s.ns * width / total for s in parts]
    counts = [max(1, int(x)) for x in exact]
    while sum(counts) > width:
        i = max((k for k in range(len(counts)) if counts[k] > 1), key=lambda k: counts[k] - exact[k])
        counts[i] -= 1
    while sum(counts) < width:
        i = max(range(len(counts)), key=lambda k: exact[k] - counts[k])
        counts[i] += 1
    return "".join(GLYPHS[s.category] * n for s, n in zip(parts, counts))


def text_runs(timeline, width: int = 60) -> list[tuple[str, str]]:
    """:func:`text_bar` as runs of (category, its glyphs), for renderers that colour each run."""
    glyph_to_category = {GLYPHS[s.category]: s.category for s in timeline.segments()}
    runs: list[tuple[str, str]] = []
    for ch in text_bar(timeline, width):
        category = glyph_to_category[ch]
        if runs and runs[-1][0] == category:
            runs[-1] = (category, runs[-1][1] + ch)
        else:
            runs.append((category, ch))
    return runs


def legend(timeline) -> str:
    return "  ".join(f"{GLYPHS[s.category]} {s.label}" for s in timeline.segments())
