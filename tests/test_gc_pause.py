"""The collector paused while a large result is built (ncuwrap.core.gc_pause): back on after it, what was built
aged into the oldest generation without a walk (issue 41: the next young collection walked a 10,000-launch
diagnosis's 500,000 objects, 28 ms), cyclic garbage still collected, and another's frozen objects left frozen."""

from __future__ import annotations

import gc

from ncuwrap.core.gc_pause import no_collection_pauses


class _Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cyclic collector frees it


def _generation(obj) -> int | None:
    return next((g for g in range(3) if any(o is obj for o in gc.get_objects(generation=g))), None)


def test_what_was_built_is_aged_and_the_collector_is_back():
    assert gc.isenabled()
    with no_collection_pauses():
        assert not gc.isenabled()
        built = [{"launch": [i]} for i in range(1000)]  # a list in each: tracked (a dict of numbers is not)
    assert gc.isenabled()
    assert _generation(built) == 2 and _generation(built[-1]) == 2
    assert gc.get_count()[0] < 700  # no young collection pending over them


def test_cyclic_garbage_built_inside_is_still_collected():
    with no_collection_pauses():
        node = _Node()
    gc.collect()  # nothing of the test's own left to age out of the way
    probe = [node]
    del node
    assert any(isinstance(o, _Node) for o in gc.get_objects(generation=2))
    probe.clear()
    gc.collect()
    assert not any(isinstance(o, _Node) for o in gc.get_objects())


def test_frozen_objects_stay_frozen_and_a_paused_caller_keeps_its_pause():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with no_collection_pauses():
            [{"launch": i} for i in range(100)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with no_collection_pauses():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
