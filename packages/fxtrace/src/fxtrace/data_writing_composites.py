"""Python versions of composite ops whose C++ body fills a tensor through its data pointer.

A CompositeImplicitAutograd op never reaches the tracing dispatch mode: it runs its C++ body,
whose aten ops are recorded. A body that makes a tensor from a list (`at::tensor(list)`: an
`empty`, then the elements copied in through the data pointer) writes where the dispatcher does
not see: the graph records a bare `empty`, its contents undefined (a wrong graph in real mode;
on fakes the copy raises, a fake having no data). While `make_fx` traces, a torch function mode
(`replacing_data_writing_composites`) runs such ops as the Python versions here instead, which
make that tensor with `torch.tensor(list)`, a constant of the graph, and leave the rest to the
op itself. Arguments they do not handle (symbolic or tensor lengths) go to the op as before.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

aten = torch.ops.aten

_NO_REDUCTION, _MEAN = 0, 1


def _ctc_loss(log_probs: torch.Tensor, targets: torch.Tensor, input_lengths: Any,
              target_lengths: Any, blank: int = 0, reduction: int | str = _MEAN,
              zero_infinity: bool = False) -> Any:
    """`ctc_loss` with int-list lengths and a mean (`torch.ctc_loss`'s 1, or
    `F.ctc_loss`'s "mean"): ATen divides each loss by its target length (at least 1), a tensor
    its body writes element by element, then takes the mean."""
    if reduction not in (_MEAN, "mean") or not isinstance(target_lengths, (list, tuple)) \
            or not all(type(n) is int for n in target_lengths):
        return NotImplemented
    losses = torch.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                            _NO_REDUCTION, zero_infinity)
    lengths = torch.tensor(target_lengths, dtype=losses.dtype, device=losses.device)
    return (losses / lengths.clamp_min(1)).mean()


_PYTHON_VERSIONS = {torch.nn.functional.ctc_loss: _ctc_loss, torch.ctc_loss: _ctc_loss,
                     aten.ctc_loss.IntList: _ctc_loss}


class replacing_data_writing_composites(TorchFunctionMode):  # noqa: N801 (a context manager)
    """Runs the ops that have a Python version here as that version."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        version = _PYTHON_VERSIONS.get(func)
        if version is not None:
            out = version(*args, **kwargs)
            if out is not NotImplemented:
                return out
        return func(*args, **kwargs)
