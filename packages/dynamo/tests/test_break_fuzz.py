"""A fixed sample of the graph-break position fuzzer's cases (`break_fuzz.py`): each seed's
function, with breaks in loops, `with` blocks, `try` statements, callees and sub-expressions,
gives eager's results, exceptions, log, printed text, grad mode and input afterwards. A long
sweep: `python packages/dynamo/tests/break_fuzz.py --start 0 --n 1000`."""

from __future__ import annotations

import break_fuzz
import pytest

# The first seeds, and 136, the fuzzer's own: `b.mul_(n)` after `a, b = b, x` wrote the input
# that eager and compiled shared (each call now gets a copy).
SEEDS = [*range(12), 136]


@pytest.mark.parametrize("seed", SEEDS)
def test_breaks_anywhere_give_eager_answers(seed: int) -> None:
    failure = break_fuzz.run(break_fuzz.generate(seed))
    if failure is not None:
        pytest.fail(f"seed {seed}: {failure}\n  python packages/dynamo/tests/break_fuzz.py "
                    f"--seed {seed} --show", pytrace=False)
