"""Structured inputs and outputs: what a compiled call returns and leaves in its arguments is
what eager's returns and leaves, identities included."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

import dynamo


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_size_from_the_frame_returned_is_the_callers_object(backend: str) -> None:
    def f(x, s, d):
        return x + 1, s, d["s"], (s, d)

    compiled = dynamo.compile(f, backend=backend)
    for _ in range(2):  # compiling, then the cached entry
        s, d = torch.Size([3]), {"s": torch.Size([2, 1])}
        _, got_s, got_ds, (again, got_d) = compiled(torch.ones(3), s, d)
        assert got_s is s and got_ds is d["s"] and again is s and got_d is d


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("extend", [
    lambda lst, x: lst.extend(lst),
    lambda lst, x: lst.__iadd__(lst),
    lambda lst, x: (lst.append(x), lst.extend(lst)),
    lambda lst, x: (lst.append(1), lst.extend(lst), lst.append(2)),
])
def test_a_frame_list_extended_by_itself(backend: str, extend) -> None:
    # the list was unread: its items were read by `extend`'s argument, and the extension lost
    def f(lst, x):
        extend(lst, x)
        return x + len(lst)

    compiled = dynamo.compile(f, backend=backend)
    for n in (2, 2, 3):
        x, expected_list, got_list = torch.ones(1), list(range(n)), list(range(n))
        expected = f(expected_list, x)
        got = compiled(got_list, x)
        assert len(got_list) == len(expected_list)
        assert all(a is b or (type(a) is type(b) and type(a) is not torch.Tensor and a == b)
                   or (isinstance(a, torch.Tensor) and torch.equal(a, b))
                   for a, b in zip(got_list, expected_list))
        torch.testing.assert_close(got, expected)


def test_the_first_compilation_in_a_process_holds_its_pytree_guards() -> None:
    # The first fake op imports torch._dynamo (torch's meta kernels are `_disable_dynamo`
    # wrapped), which imports torch.distributed.tensor, which registers pytree nodes: the
    # trace's guard on `SUPPORTED_NODES`' keys failed for its own inputs, and the call ran
    # eagerly with a warning
    script = textwrap.dedent("""
        import warnings
        import torch
        import torch.utils._pytree as pytree
        import dynamo

        class Pt:
            def __init__(self, a, b):
                self.a, self.b = a, b

        pytree.register_pytree_node(Pt, lambda p: ([p.a, p.b], None), lambda ch, ctx: Pt(*ch))

        def f(p):
            leaves, spec = pytree.tree_flatten(p)
            return pytree.tree_unflatten([leaf * 2 for leaf in leaves], spec)

        graphs = []
        def backend(gm, example_inputs):
            graphs.append(gm)
            return gm.forward

        warnings.simplefilter("error")
        compiled = dynamo.compile(f, backend=backend)
        counts = []
        for _ in range(2):
            out = compiled(Pt(torch.ones(2), torch.ones(2)))
            assert type(out) is Pt and torch.equal(out.a, torch.full((2,), 2.0))
            counts.append(len(graphs))
        # (traced again once, the state having changed under the first trace), then cached
        assert counts[0] in (1, 2) and counts[1] == counts[0], counts
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
