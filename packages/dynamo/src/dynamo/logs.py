"""Logging: one standard `logging` logger per topic, under `dynamo.`.

Topics: `graph` (each captured graph's code), `guards` (each entry's guards), `recompiles`
(which guard failed, in words, when a cached function recompiles), `graph_breaks` (reason and
user line of each break), `bytecode` (the original code's disassembly and the transformed
frame's source), `perf` (compile time per phase). Switch topics on with the environment
variable `DYNAMO_LOGS`, comma-separated (`DYNAMO_LOGS=graph_breaks,recompiles`), or `all`; or
configure the loggers `dynamo.<topic>` like any other.
"""

from __future__ import annotations

import logging
import os

TOPICS = ("graph", "guards", "recompiles", "graph_breaks", "bytecode", "perf")
ENV_VAR = "DYNAMO_LOGS"


class _TopicHandler(logging.StreamHandler):
    """Prints a topic's records to stderr unless a handler above the topic's logger gets them
    too (the application's `logging.basicConfig`, pytest's capture): then they are printed
    once, by that handler, instead of twice."""

    def emit(self, record: logging.LogRecord) -> None:
        log = logging.getLogger(record.name)
        above = log.parent if log.propagate else None
        while above is not None:
            if any(record.levelno >= h.level for h in above.handlers):
                return
            above = above.parent if above.propagate else None
        super().emit(record)


def logger(topic: str) -> logging.Logger:
    return logging.getLogger(f"dynamo.{topic}")


def configure(spec: str | None = None) -> list[str]:
    """Switch on the topics in `spec` (default: the environment variable); returns them."""
    spec = os.environ.get(ENV_VAR, "") if spec is None else spec
    wanted = [t.strip() for t in spec.split(",") if t.strip()]
    if "all" in wanted:
        wanted = list(TOPICS)
    unknown = [t for t in wanted if t not in TOPICS]
    if unknown:
        raise ValueError(f"{ENV_VAR}: unknown topics {unknown}; known: {', '.join(TOPICS)}")
    root = logging.getLogger("dynamo")
    if root.level == logging.NOTSET:
        # a topic that is not switched on stays quiet under the application's
        # `logging.basicConfig(level=logging.DEBUG)`, as torch's loggers do
        root.setLevel(logging.WARNING)
    for topic in wanted:
        log = logger(topic)
        log.setLevel(logging.DEBUG)
        if not log.handlers:
            handler = _TopicHandler()
            handler.setFormatter(logging.Formatter(f"[dynamo.{topic}] %(message)s"))
            log.addHandler(handler)
    return wanted
