"""VariableTrackers: what the symbolic interpreter knows about each kind of Python value.

`base` defines the protocol; `constant`, `tensor`, `containers`, `functions`, `builtins` and
`objects` implement it per kind of value; `builder` turns a real value from the frame into the
right tracker, with the guards that keep it valid.
"""
