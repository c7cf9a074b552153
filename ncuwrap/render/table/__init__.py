"""Terminal output (rich): laid out for the terminal's width, wrapped at words with continuation lines
indented under their first line, report text shown with control characters escaped."""

from __future__ import annotations

import copy
import dataclasses
import io
import re

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.measure import Measurement
from rich.table import Row, Table
from rich.text import Text

from ncuwrap.render.escape import terminal

# The narrowest terminal laid out for; anything narrower gets 80 columns.
MIN_WIDTH = 40
# The widest page a table is tried on when saying from which width it shows all its columns.
MAX_WIDTH = 400
# A paragraph shows at most this many lines' worth of characters (of the page's width); continuation lines of
# prose start PROSE_INDENT columns in.
MAX_TEXT_LINES = 50
PROSE_INDENT = 2
STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "green", "minor": "dim"}


class TextTable(Table):
    """A rich table whose text cells are report text: escaped (control characters visible) and
    never read as rich markup, whoever adds the row. The one path every table row takes."""

    def add_row(self, *renderables, **kwargs) -> None:
        cells = [cell(r) if isinstance(r, str) else r for r in renderables]
        # A value kept on one line is never narrowed (rich would cut it to '3.29x fa…'): a table too wide
        # for them all is wider than the page, and Page.fit takes columns out instead.
        for column, value in zip(self.columns, cells):
            if column.no_wrap and isinstance(value, Text):
                column.min_width = max(column.min_width or 0, value.cell_len)
        super().add_row(*cells, **kwargs)


class Page:
    """A console writing into a buffer: ``width`` None takes the terminal's (rich: $COLUMNS, the
    terminal's size, else 80 columns)."""

    def __init__(self, width: int | None = None, color: bool = False):
        self.buffer = io.StringIO()
        width = width or Console().width
        # COLUMNS=0 (or a terminal a few characters wide) printed nothing at all: below MIN_WIDTH the
        # page is laid out for 80 columns instead.
        width = width if width >= MIN_WIDTH else 80
        self.console = Console(file=self.buffer, width=width, force_terminal=color,
                               color_system="standard" if color else None, highlight=False)

    def line(self, text: str = "", style: str = "", *, indent: int = 0, label: str = "", label_style: str | None = None) -> None:
        """``text`` wrapped at words. After a short ``label`` (a severity, 'evidence:') continuation lines
        start under the text, so a wrapped paragraph keeps its shape; after a label past two fifths
        of the line (a headline's 'Bound: ...') they would make a narrow column, so the paragraph wraps as
        prose, continuation lines two columns in from its first. At most MAX_TEXT_LINES lines' worth of it."""
        label_style = label_style if label_style is not None else style
        label = terminal(label)
        text = shown_text(text, MAX_TEXT_LINES * self.width)
        margin = indent + (len(label) + 1 if label else 0)
        if margin > self.width * 2 // 5 and margin + len(text) > self.width:
            self._prose(text, style, indent, label, label_style)
            return
        grid = Table.grid()
        cells: list = []
        if indent:
            grid.add_column(width=indent, no_wrap=True)
            cells.append("")
        if label:
            grid.add_column(no_wrap=True)
            cells.append(Text(label + " ", style=label_style))
        # fold: a word longer than the whole line (a kernel signature) goes on over the next lines.
        grid.add_column(overflow="fold")
        cells.append(Text(text, style=style))
        grid.add_row(*cells)
        self.console.print(grid)

    def _prose(self, text: str, style: str, indent: int, label: str, label_style: str) -> None:
        paragraph = Text()
        if label:
            paragraph.append(label + " ", style=label_style)
        paragraph.append(text, style=style)
        first = max(1, self.width - indent)
        rest = max(1, first - PROSE_INDENT)
        for number, (start, end) in enumerate(wrap(paragraph.plain, first, rest)):
            lead = " " * (indent + (PROSE_INDENT if number else 0))
            self.console.print(Text(lead) + paragraph[start:end], no_wrap=True, crop=False)

    def heading(self, text: str) -> None:
        self.console.print()
        self.line(text, "bold")

    @property
    def width(self) -> int:
        return self.console.width

    def table(self, *columns: str, right: tuple[str, ...] = (), names: tuple[str, ...] = (), prose: tuple[str, ...] = (),
              boxed: bool = True) -> Table:
        """A table of short values kept on one line. ``names`` columns hold identifiers: cut with an
        ellipsis when too long (--names demangled and the JSON have it whole), never split mid-word;
        ``prose`` columns wrap at words."""
        table = TextTable(header_style="bold", box=box.SIMPLE_HEAD if boxed else None, pad_edge=False)
        for column in columns:
            justify = "right" if column in right else "left"
            if column in names:
                # Wraps at spaces ("a -> b"); a single overlong word ends in an ellipsis, never split.
                table.add_column(column, overflow="ellipsis", max_width=48, min_width=12)
            elif column in prose:
                table.add_column(column, justify=justify, overflow="fold", ratio=1, min_width=20)
            else:
                table.add_column(column, justify=justify, no_wrap=True, min_width=len(column))
        return table

    def fits(self, table: Table) -> bool:
        """Whether ``table`` laid out on this page stays within its width with every column in it: rich
        squeezes a table too wide down to columns of no width, so the header row must still name them all."""
        lines = ["".join(segment.text for segment in line)
                 for line in Segment.split_lines(self.console.render(table, self.console.options))]  # uncropped
        if any(cell_len(line) > self.width for line in lines):
            return False
        header = next((line for line in lines if line.strip()), "")
        return all(str(column.header) in header for column in table.columns)

    def fit(self, build, columns: tuple[str, ...], drop: tuple[tuple[str, ...], ...]) -> tuple[Table, list[str], int]:
        """The table ``build(columns)`` as wide as the page allows: ``drop``'s groups of columns, in that
        order, leave it until it fits. Gives the table, the columns left out, and the narrowest page that
        shows them all."""
        shown, left_out = list(columns), []
        table = build(tuple(shown))
        for group in drop:
            if self.fits(self.probe(table)):
                break
            shown = [c for c in shown if c not in group]
            left_out += [c for c in columns if c in group]
            table = build(tuple(shown))
        return table, left_out, self.narrowest(build, columns) if left_out else self.width

    def narrowest(self, build, columns: tuple[str, ...]) -> int:
        """The narrowest page, wider than this one, that the table ``build(columns)`` fits (a page that
        fits it fits it wider too)."""
        probe = self.probe(build(columns))
        low, high = self.width + 1, max(self.width + 1, MAX_WIDTH)
        while low < high:
            middle = (low + high) // 2
            low, high = (low, middle) if Page(middle).fits(probe) else (middle + 1, high)
        return low

    def probe(self, table: Table) -> Table:
        """A copy of ``table`` with at most two rows whose columns measure as ``table``'s do (in each, the
        cell asking for the most room and the cell needing the most): rich lays both out in the same
        column widths, so whether a table fits is found without laying out all its rows, again and again."""
        options = self.console.options.update_width(MAX_WIDTH)
        probe = copy.copy(table)
        probe.columns = []
        for column in table.columns:
            cells = column._cells
            sizes = [Measurement.get(self.console, options, c) for c in cells]
            picked = sorted({max(range(len(cells)), key=lambda i: sizes[i].maximum),
                             max(range(len(cells)), key=lambda i: sizes[i].minimum)}) if cells else []
            probe.columns.append(dataclasses.replace(column, _cells=[cells[i] for i in picked] + [""] * (2 - len(picked)) if cells else []))
        probe.rows = [Row()] * (2 if table.rows else 0)
        return probe

    def left_out(self, columns: str, where: str, shown_from: int) -> None:
        """Say which columns a narrow terminal left out of a table, where they are instead, and from
        how many columns the table shows them."""
        self.line(f"{columns}: in {where} below (a terminal of {shown_from} columns shows them in the table)", "dim",
                  label="left out of the table:")

    def print(self, renderable) -> None:
        self.console.print(renderable)

    def text(self) -> str:
        # Rich pads wrapped cells to the column's width: no trailing blanks in what is printed or saved.
        return "\n".join(line.rstrip(" ") for line in self.buffer.getvalue().split("\n"))


def summary_columns(table: Table) -> list[str]:
    """The headers of ``table``'s columns."""
    return [str(column.header) for column in table.columns]


def shown_text(text, limit: int) -> str:
    """Report text escaped for the terminal, at most ``limit`` characters of it (the last an ellipsis):
    a 16 MB kernel name is not laid out whole (--format json has it)."""
    text = str(text)
    if len(text) <= limit:
        return terminal(text)
    return terminal(text[:limit])[: limit - 1] + "…"


_WORD = re.compile(r"\S+")


def wrap(text: str, first: int, rest: int) -> list[tuple[int, int]]:
    """Where greedy word wrapping cuts ``text`` (first line ``first`` columns, the others ``rest``), as
    (start, end) offsets; a word wider than a line goes on over the next ones. Linear in the text."""
    lines: list[tuple[int, int]] = []
    start = end = None
    width = first
    for word in _WORD.finditer(text):
        s, e = word.span()
        if start is not None and e - start > width:
            lines.append((start, end))
            start, width = None, rest
        if start is None:
            start = s
        while e - start > width:
            lines.append((start, start + width))
            start, width = start + width, rest
        end = e
    if start is not None:
        lines.append((start, end))
    return lines


def cell(text, style: str = "") -> Text:
    """Report text in a table cell, control characters escaped."""
    return Text(terminal(text), style=style)
