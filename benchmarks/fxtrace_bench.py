"""Tracing time of a transformer block: fxtrace.make_fx against PyTorch's make_fx.

Both trace the same function, a functional call of the block with its parameters passed as
inputs, in each tracing mode.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from models import TransformerBlock  # noqa: E402
from timing import median_seconds  # noqa: E402


def run() -> str:
    from torch.fx.experimental.proxy_tensor import make_fx as peer_make_fx

    from fxtrace import make_fx

    model = TransformerBlock().eval()
    params = dict(model.named_parameters())
    x = torch.randn(8, 128, 64)

    def block(x, params):
        return torch.func.functional_call(model, params, (x,))

    lines = [
        "## fxtrace: tracing a transformer block",
        "",
        "`make_fx(block, mode)(x, params)` for a TransformerBlock on an (8, 128, 64) input; "
        "median of 7 traces after 2 warm-ups.",
        "",
        "| mode | ours ms | peer ms | ours / peer |",
        "| --- | --- | --- | --- |",
    ]
    for mode in ("real", "fake", "symbolic"):
        ours = median_seconds(lambda: make_fx(block, mode)(x, params))  # noqa: B023
        peer = median_seconds(lambda: peer_make_fx(block, tracing_mode=mode)(x, params))  # noqa: B023
        lines.append(f"| {mode} | {ours * 1e3:.1f} | {peer * 1e3:.1f} | {ours / peer:.2f} |")
    return "\n".join(lines) + "\n"
