"""PyTorch profiler traces (``torch.profiler``'s Chrome-trace JSON, written by Kineto), plain or
gzipped; read by :mod:`ncuwrap.timeline.readers.kineto_json`. ``.json`` is also the suffix of ncuwrap's own
documents, so a ``.json`` file is a trace only where its first bytes say so."""

from __future__ import annotations

import re

from ncuwrap.timeline.readers.interface import TimelineReader

# A Kineto trace opens with one of these keys (schemaVersion first, as torch 2.x writes it; a trace
# written again by another tool may lead with traceEvents); ncuwrap's documents open with "schema".
_KEYS = rb'"(?:schemaVersion|traceEvents|deviceProperties|distributedInfo|displayTimeUnit|baseTimeNanoseconds|traceName|trace_id)"'
_OPENING = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*\{\s*" + _KEYS + rb"\s*:")
_RANK = re.compile(rb'"distributedInfo"\s*:\s*\{[^{}]*?"rank"\s*:\s*(\d{1,9})\b')


def rank_of(head: bytes) -> int | None:
    """The rank a trace's ``distributedInfo`` gives (torch.profiler writes it before the events: a
    trace's first bytes, ncuwrap.timeline.readers.head, are enough); None where it has none."""
    found = _RANK.search(head)
    return int(found.group(1)) if found else None


class KinetoTrace(TimelineReader):
    """A torch.profiler trace: ``trace.json``, ``x.pt.trace.json``, gzipped or not."""

    kind = "kineto"
    producer = "PyTorch profiler (Kineto)"
    suffixes = (".pt.trace.json", ".pt.trace.json.gz", ".json", ".json.gz")  # torch.profiler writes the first two
    shared = (".json", ".json.gz")
    described = "a PyTorch profiler trace (.json or .json.gz)"
    fix = "give a torch.profiler trace (.json or .json.gz, from export_chrome_trace or tensorboard_trace_handler)"

    def sniff(self, head: bytes) -> bool:
        return _OPENING.match(head) is not None

    def read(self, path, *, nsys=None, ranks=False):
        from ncuwrap.timeline.readers import kineto_json

        return kineto_json.read(path, ranks=ranks)
