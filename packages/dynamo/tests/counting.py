"""A backend for tests that keeps the graphs it is given."""

from __future__ import annotations

from collections.abc import Callable

import torch

import dynamo


def counting_backend(backend: str) -> tuple[Callable, list[torch.fx.GraphModule]]:
    """A backend that compiles each graph with the backend named `backend`, and the list it
    appends each graph to."""
    graphs: list[torch.fx.GraphModule] = []

    def compile_graph(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
        graphs.append(gm)
        return dynamo.backends.lookup_backend(backend)(gm, example_inputs)

    return compile_graph, graphs
