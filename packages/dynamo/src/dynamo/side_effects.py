"""Side effects: what the traced code changes outside the graph, replayed when the graph runs.

While tracing, nothing real may change, yet the code writes: it appends to a list it was given,
sets an attribute of a module or object, assigns a global or a variable of an enclosing
function. Each such write is recorded here instead, and reads that follow see the recorded
value. The transformed frame replays them after the graph has run (before the step made for
real, at a graph break): first every new value is computed, then every write is made, so one
write cannot disturb another's value. Containers from the frame are updated in place, keeping
their identity. In-place ops on input tensors need no replay: the graph performs them.
"""

from __future__ import annotations

from typing import Any

from dynamo.exc import Unsupported
from dynamo.sources import ItemsCopySource
from dynamo.variables.base import VariableTracker
from guards import AttrSource

MISSING = object()  # what `load` returns for a location nothing was written to
DELETED = object()  # what `load` returns for a location the trace deleted (`del obj.name`)


class SideEffects:
    def __init__(self) -> None:
        self.containers: dict[int, VariableTracker] = {}  # frame containers mutated, by id
        self.writes: dict[tuple[str, int, Any], tuple[str, Any, Any, VariableTracker]] = {}
        self.changes = 0  # writes seen so far, to containers made while tracing too
        self.cell_sources: dict[int, Any] = {}  # closure cells written: id -> the cell's source

    def mutated(self, container: VariableTracker) -> None:
        """A list, dict or set was changed in place; one from the frame (it has a source) is
        updated for real when the graph has run."""
        if isinstance(container.source, ItemsCopySource):
            raise Unsupported(f"changing the items of a {container.source.kind.__name__} subclass's "
                              "instance from outside the trace")
        if isinstance(container.source, AttrSource) and container.source.attr == "__dict__":
            raise Unsupported("changing an object's __dict__ directly")
        if container.source is not None:
            self.containers[id(container)] = container
        self.changes += 1

    def store(self, kind: str, target: Any, name: Any, value: VariableTracker) -> None:
        """Record `target.name = value` (kind "attr"), `target[name] = value` for a globals
        dict ("global") or `target.cell_contents = value` for a closure cell ("cell").
        `target` is the real object, or for an attribute, the tracker of the object."""
        self.changes += 1
        # The last write wins; the location keeps its first write's place (a new attribute
        # lands in `__dict__` where Python would put it).
        self.writes[(kind, id(target), name)] = (kind, target, name, value)

    def delete(self, kind: str, target: Any, name: Any, there: bool) -> None:
        """Record `del target.name` (kind "attr") or `del target[name]` for a globals dict
        ("global"); `there`: whether the real location holds a value before the graph runs
        (if not, the name was only written in the trace, and nothing is left to replay)."""
        self.changes += 1
        if there:
            self.writes[(kind, id(target), name)] = (kind, target, name, DELETED)
        else:
            self.writes.pop((kind, id(target), name), None)

    def attributes_set(self, target: Any) -> dict[str, VariableTracker]:
        """The attributes of `target` (a tracker) set (or `DELETED`) so far, by name, in
        order."""
        return {name: value for kind, t, name, value in self.writes.values()
                if kind == "attr" and t is target}

    def load(self, kind: str, target: Any, name: Any) -> Any:
        """The value recorded for a location, `DELETED`, or `MISSING`."""
        found = self.writes.get((kind, id(target), name))
        return MISSING if found is None else found[3]

    def __bool__(self) -> bool:
        return bool(self.containers or self.writes)

