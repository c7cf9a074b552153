"""Markdown output of a multi-rank diagnosis (``ncuwrap timeline --ranks DIR``), escaped like every
Markdown renderer (ncuwrap.render.escape): names and paths in code spans, prose escaped."""

from __future__ import annotations

from ncuwrap.render import breakdown
from ncuwrap.timeline.model import GLYPHS
from ncuwrap.render.phrasing import ranks as ranks_text
from ncuwrap.render.escape import code, escape, table
from ncuwrap.render.markdown.timeline import findings


def render(diagnosis, **_options) -> str:
    s = diagnosis.set
    out = ["## ncuwrap timeline --ranks", "",
           f"{code(diagnosis.folder)}: {len(s.ranks)} ranks ({escape(diagnosis.naming)}); analysed on {escape(diagnosis.workers)}; "
           f"rules {code(diagnosis.rules_name)} version {escape(diagnosis.rules_version)}.", ""]
    out += [f"**Bound: {escape(ranks_text.ranks_verdict(diagnosis))}.** {escape(diagnosis.why)}", ""]

    out += ["### Ranks", ""]
    rows = [[code(c["rank"]) if key == "rank" else escape(c[key]) for key, _ in ranks_text.RANK_COLUMNS] for c in ranks_text.rank_cells(diagnosis)]
    out += table([label for _, label in ranks_text.RANK_COLUMNS], rows, "ll" + "r" * (len(ranks_text.RANK_COLUMNS) - 2)).split("\n")
    out += ["",
            "\\* the straggler (the most compute). Compute: time a non-NCCL kernel ran. NCCL: time any NCCL kernel ran; exposed: time only NCCL kernels ran; "
            "hidden: NCCL time under "
                "a compute kernel. Wait: a rank's NCCL time beyond the least of any rank.", ""]

    collectives = ranks_text.collective_cells(diagnosis)
    if collectives:
        out += ["### Communication by collective", ""]
        rows = [[code(c[key]) if key == "collective" else escape(c[key]) for key, _ in ranks_text.COLLECTIVE_COLUMNS] for c in collectives]
        out += table([label for _, label in ranks_text.COLLECTIVE_COLUMNS], rows, "l" + "r" * (len(ranks_text.COLLECTIVE_COLUMNS) - 1)).split("\n")
        out += ["", escape(ranks_text.COLLECTIVE_NOTE[0].upper() + ranks_text.COLLECTIVE_NOTE[1:]) + ".", ""]

    out += ["### Where each rank's window went", "", "```text"]
    out += [f"rank {r.rank:<4} [{breakdown.text_bar(r)}]" for r in s.ranks]
    legend = {}
    for r in s.ranks:
        for seg in r.segments():
            legend.setdefault(seg.category, seg.label)
    out += ["  ".join(f"{GLYPHS[c]} {label}" for c, label in legend.items()), "```", ""]

    out += findings(diagnosis)

    out += ["### Files", ""]
    out += table(["rank", "file", "command", "device"],
                 [[str(r.rank), code(r.path), code(r.command or "?"), escape(r.device or "?")] for r in s.ranks], "rlll").split("\n")
    out.append("")
    if diagnosis.notes:
        out += ["Notes:", ""] + [f"- {escape(n)}" for n in diagnosis.notes] + [""]
    return "\n".join(out).rstrip() + "\n"
