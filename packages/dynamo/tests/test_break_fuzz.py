"""A fixed sample of the graph-break position fuzzer's cases (`break_fuzz.py`): each seed's
function, with breaks in loops, `with` blocks, `try` statements, callees and sub-expressions,
gives eager's results, exceptions, log, printed text, grad mode and input afterwards. A long
sweep: `python packages/dynamo/tests/break_fuzz.py --start 0 --n 1000` (and `--start 1000000`
for the extended constructs)."""

from __future__ import annotations

import break_fuzz
import pytest

# The first seeds, and 136, the fuzzer's own: `b.mul_(n)` after `a, b = b, x` wrote the input
# that eager and compiled shared (each call now gets a copy). From EXTENDED_SEEDS (generators,
# match, global/nonlocal, del, comprehensions, tensor iteration, *args/**kwargs): the first
# seeds, 1000033 (`for v in t` is `t.unbind(0)`: an in-place write then a row used is eager's
# error) and 1001223 (`sum` of a generator adds each item before the next is made).
SEEDS = [*range(12), 136, *range(1_000_000, 1_000_006), 1_000_033, 1_001_223]


@pytest.mark.parametrize("seed", SEEDS)
def test_breaks_anywhere_give_eager_answers(seed: int) -> None:
    failure = break_fuzz.run(break_fuzz.generate(seed))
    if failure is not None:
        pytest.fail(f"seed {seed}: {failure}\n  python packages/dynamo/tests/break_fuzz.py "
                    f"--seed {seed} --show", pytrace=False)
