"""Terminal output (rich): laid out for the terminal's width, wrapped at words with continuation lines
indented under their first line, report text shown with control characters escaped."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuwrap.render.escape import terminal

# The narrowest terminal laid out for; anything narrower gets 80 columns.
MIN_WIDTH = 40
STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "green", "minor": "dim"}


class TextTable(Table):
    """A rich table whose text cells are report text: escaped (control characters visible) and
    never read as rich markup, whoever adds the row. The one path every table row takes."""

    def add_row(self, *renderables, **kwargs) -> None:
        super().add_row(*(cell(r) if isinstance(r, str) else r for r in renderables), **kwargs)


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
        """``text`` wrapped at words; continuation lines start under the text, after ``indent`` and
        ``label`` (a severity, 'evidence:'), so a wrapped paragraph keeps its shape."""
        grid = Table.grid()
        cells: list = []
        if indent:
            grid.add_column(width=indent, no_wrap=True)
            cells.append("")
        if label:
            grid.add_column(no_wrap=True)
            cells.append(Text(terminal(label) + " ", style=label_style if label_style is not None else style))
        # fold: a word longer than the whole line (a kernel signature) is cut; others wrap whole.
        grid.add_column(overflow="fold")
        cells.append(Text(terminal(text), style=style))
        grid.add_row(*cells)
        self.console.print(grid)

    def heading(self, text: str) -> None:
        self.console.print()
        self.line(text, "bold")

    @property
    def width(self) -> int:
        return self.console.width

    def table(self, *columns: str, right: tuple[str, ...] = (), names: tuple[str, ...] = (), prose: tuple[str, ...] = (),
              boxed: bool = True) -> Table:
        """A table of short values kept on one line. ``names`` columns hold identifiers: cut with an
        ellipsis when too long (the full name is in the sections below), never split mid-word;
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
                table.add_column(column, justify=justify, no_wrap=True)
        return table

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


def cell(text, style: str = "") -> Text:
    """Report text in a table cell, control characters escaped."""
    return Text(terminal(text), style=style)
