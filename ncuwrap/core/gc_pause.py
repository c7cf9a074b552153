"""Building many small objects at once (the verdicts of 10,000 launches and their JSON document).

Python's cyclic garbage collector runs every few hundred new container objects, and each full pass
walks every object alive: while a large result is being built (hundreds of thousands of dicts,
lists and records, none of them in a reference cycle) those passes cost more than the building.
:func:`no_collection_pauses` holds them off for such a stretch and puts the collector back as it was,
with what the stretch built aged into the oldest generation (the next young collections would walk it all).
"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def no_collection_pauses():
    """Pause the cyclic garbage collector inside the block (reference counting still frees
    everything that is dropped); it runs again afterwards if it ran before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _age()
            gc.enable()


def _age() -> None:
    """Move every object the collector tracks into its oldest generation, without walking them: what the
    block built (the 500,000 objects of 10,000 launches' verdicts) would otherwise be walked by the next
    young collection (docs/scale.md, figures behind the code), and by the middle one again; they are still collected, by the full
    collections. Not where something is frozen (gc.freeze): unfreezing it would undo that."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
