"""Terminal output of a multi-rank diagnosis (``ncuwrap timeline --ranks DIR``): verdict, one row and
one breakdown bar per rank, findings."""

from __future__ import annotations

from rich.text import Text

from ncuwrap.render import breakdown
from ncuwrap.render.phrasing import ranks as ranks_text
from ncuwrap.render.table import Page, TextTable
from ncuwrap.render.table.timeline import findings
from ncuwrap.timeline.model import GLYPHS, TERMINAL_STYLES



def render(diagnosis, width: int | None = None, color: bool = False, **_options) -> str:
    page = Page(width, color)
    console = page.console
    s = diagnosis.set
    page.line(f"{diagnosis.folder}  ({len(s.ranks)} ranks; {diagnosis.naming}; analysed on {diagnosis.workers})")
    page.line(diagnosis.why, label=f"Bound: {ranks_text.ranks_verdict(diagnosis)} -", label_style="bold")

    console.print(Text("\nRanks", style="bold"))
    names = [label for _, label in ranks_text.RANK_COLUMNS]
    # Cells wrap at their spaces ('274.59 ms' over '(51.2%)') where the row is wider than the terminal:
    # real rows (H200 x2 captures) need 115 columns on one line, and a cut cell ('274.5…') is unreadable.
    table = TextTable(header_style="bold", box=None, pad_edge=False)
    for i, name in enumerate(names):
        table.add_column(name, justify="right" if i >= 2 else "left", overflow="fold")
    for cells in ranks_text.rank_cells(diagnosis):
        table.add_row(*(cells[key] for key, _ in ranks_text.RANK_COLUMNS))
    console.print(table)
    page.line("* the straggler; compute: a non-NCCL kernel ran; exposed: only NCCL kernels ran; hidden: NCCL time under compute; "
              "wait: NCCL time beyond the least of any rank", "dim", indent=2)

    collectives = ranks_text.collective_cells(diagnosis)
    if collectives:
        console.print(Text("\nCommunication by collective", style="bold"))
        table = TextTable(header_style="bold", box=None, pad_edge=False)
        for i, (_, name) in enumerate(ranks_text.COLLECTIVE_COLUMNS):
            table.add_column(name, justify="right" if i else "left", overflow="fold")
        for cells in collectives:
            table.add_row(*(cells[key] for key, _ in ranks_text.COLLECTIVE_COLUMNS))
        console.print(table)
        page.line(ranks_text.COLLECTIVE_NOTE, "dim", indent=2)

    console.print(Text("\nWhere each rank's window went", style="bold"))
    for r in s.ranks:
        bar = Text(f"  rank {r.rank:<4} [")
        for category, glyphs in breakdown.text_runs(r):
            bar.append(glyphs, style=TERMINAL_STYLES[category])
        bar.append("]")
        console.print(bar)
    console.print(Text("   " + "  ".join(f"{GLYPHS[c]} {label}" for c, label in _legend(s)), style="dim"))

    findings(page, diagnosis)
    return page.text()


def _legend(rank_set) -> list[tuple[str, str]]:
    seen = {}
    for r in rank_set.ranks:
        for seg in r.segments():
            seen.setdefault(seg.category, seg.label)
    return list(seen.items())

