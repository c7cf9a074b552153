"""The columns a capture's events are held in: numpy arrays of equal length, and texts as codes into a
list of distinct texts (:class:`Labels`).

A timeline is read and analysed by whole columns, so a table needs no more than a dict of arrays with
row selection; pandas would bring 0.3-0.4 s of imports into every ``ncuwrap timeline`` process, longer
than the whole analysis of a 200-step capture. :meth:`Events.to_pandas` gives a DataFrame to those who
want one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

# An op's shapes text (ncuwrap.timeline.readers.kineto_json, pytorch_nvtx) longer than this is not kept (a torch.cat of a
# thousand tensors writes ~20 kB): a hostile capture cannot fill memory with distinct texts.
MAX_SHAPES_BYTES = 64 << 10

class Labels:
    """A text column: ``codes`` (int32, -1 where a row has no text) into ``categories``, each distinct
    text once. A capture repeats a few hundred names millions of times; a test of the text is asked once
    per category (:meth:`test`)."""

    __slots__ = ("codes", "categories")
    __hash__ = None  # == compares row by row

    def __init__(self, codes, categories: Iterable):
        self.codes = np.asarray(codes, dtype=np.int32)
        self.categories = list(categories)

    @classmethod
    def of(cls, texts: Iterable) -> "Labels":
        """Texts (None: no text) as labels, categories in the order they first appear."""
        code_of: dict = {}
        codes = [-1 if t is None else code_of.setdefault(str(t), len(code_of)) for t in texts]
        return cls(np.array(codes, dtype=np.int32), code_of)

    def __len__(self) -> int:
        return self.codes.size

    def __getitem__(self, rows):
        """The text of row ``rows`` (an int; None where it has none), or the labels of the rows selected
        (a slice, a mask, positions)."""
        if isinstance(rows, (int, np.integer)):
            code = int(self.codes[rows])
            return None if code < 0 else self.categories[code]
        return Labels(self.codes[rows], self.categories)

    def __eq__(self, text) -> np.ndarray:  # type: ignore[override]
        return self.test(lambda t: t == text)

    def __ne__(self, text) -> np.ndarray:  # type: ignore[override]
        return ~(self == text)

    def isin(self, texts) -> np.ndarray:
        wanted = set(texts)
        return self.test(lambda t: t in wanted)

    def test(self, test: Callable[[str], object]) -> np.ndarray:
        """``test`` of each row's text (False where a row has none), asked once per category."""
        verdicts = np.array([bool(test(c)) for c in self.categories] + [False], dtype=bool)
        return verdicts[self.codes]

    def tolist(self) -> list:
        texts = [*self.categories, None]
        return [texts[c] for c in self.codes.tolist()]

    def relabel(self, label: Callable[[str], str]) -> "Labels":
        """Each category replaced by ``label(category)``; categories that become one are merged."""
        texts = [label(c) for c in self.categories]
        code_of = {t: i for i, t in enumerate(dict.fromkeys(texts))}
        lookup = np.array([code_of[t] for t in texts] + [-1], dtype=np.int32)  # code -1 stays -1
        return Labels(lookup[self.codes], code_of)

    def recode(self, categories: list) -> "Labels":
        """The same texts as codes into ``categories`` (which holds every category of these)."""
        code_of = {t: i for i, t in enumerate(categories)}
        lookup = np.array([code_of[t] for t in self.categories] + [-1], dtype=np.int32)
        return Labels(lookup[self.codes], categories)

    def factorize(self) -> tuple[np.ndarray, list]:
        """Each row's group and the groups' texts, groups in the order their text first appears
        (-1 where a row has no text)."""
        present, first = np.unique(self.codes, return_index=True)
        keep = present >= 0
        present, first = present[keep], first[keep]
        order = np.argsort(first, kind="stable")
        lookup = np.full(len(self.categories) + 1, -1, dtype=np.int64)
        lookup[present[order]] = np.arange(order.size)
        return lookup[self.codes], [self.categories[c] for c in present[order].tolist()]

    @staticmethod
    def join(columns: list["Labels"]) -> "Labels":
        """Columns one after the other, their categories united."""
        categories = list(dict.fromkeys(c for column in columns for c in column.categories))
        return Labels(np.concatenate([c.recode(categories).codes for c in columns]), categories)

    def to_pandas(self):
        import pandas as pd

        return pd.Categorical.from_codes(self.codes, categories=self.categories)

    def __repr__(self) -> str:
        return f"Labels({len(self)} rows, {len(self.categories)} texts)"


class Events:
    """Columns of equal length, by name: numpy arrays (integers; float64 with NaN where a value may be
    missing) and :class:`Labels`."""

    __slots__ = ("_columns", "_n")

    def __init__(self, columns: dict | None = None, n: int | None = None):
        columns = dict(columns or {})
        lengths = {len(v) for v in columns.values() if not np.isscalar(v)}
        if n is None:
            n = lengths.pop() if lengths else 0
        self._n = int(n)
        self._columns: dict = {}
        for name, value in columns.items():
            self[name] = value

    def __len__(self) -> int:
        return self._n

    @property
    def empty(self) -> bool:
        return self._n == 0

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    def __contains__(self, name: str) -> bool:
        return name in self._columns

    def __getitem__(self, name: str):
        return self._columns[name]

    def __setitem__(self, name: str, value) -> None:
        """A column; a scalar fills every row."""
        if not isinstance(value, Labels):
            value = np.asarray(value)
            if value.ndim == 0:
                value = np.full(self._n, value, dtype=value.dtype)
        if len(value) != self._n:
            raise ValueError(f"column {name} has {len(value)} rows, the table {self._n}")
        self._columns[name] = value

    def get(self, name: str, default=None):
        return self._columns.get(name, default)

    def rows(self, selection) -> "Events":
        """The rows a mask, positions or a slice select, in that order."""
        if isinstance(selection, slice):
            n = len(range(*selection.indices(self._n)))
        else:
            selection = np.asarray(selection)
            n = int(selection.sum()) if selection.dtype == bool else selection.size
        out = Events(n=n)
        out._columns = {name: column[selection] for name, column in self._columns.items()}
        return out

    def drop(self, names: Iterable[str]) -> "Events":
        gone = set(names)
        out = Events(n=self._n)
        out._columns = {k: v for k, v in self._columns.items() if k not in gone}
        return out

    @staticmethod
    def concat(tables: list["Events"]) -> "Events":
        """Tables with the same columns one after the other (text columns' categories united)."""
        names = tables[0].columns
        columns = {}
        for name in names:
            parts = [t[name] for t in tables]
            columns[name] = Labels.join(parts) if isinstance(parts[0], Labels) else np.concatenate(parts)
        return Events(columns, n=sum(len(t) for t in tables))

    def to_pandas(self):
        """The table as a pandas DataFrame (text columns as categoricals)."""
        import pandas as pd

        return pd.DataFrame({k: (v.to_pandas() if isinstance(v, Labels) else v) for k, v in self._columns.items()})

    def __repr__(self) -> str:
        return f"Events({self._n} rows: {', '.join(self._columns)})"
