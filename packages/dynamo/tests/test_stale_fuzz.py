"""A fixed sample of the stale-answer fuzzer's cases (`stale_fuzz.py`): each seed's function,
run eagerly and compiled through its steps of changes, agrees with eager everywhere. The long
sweep is `nox -s fuzz`."""

from __future__ import annotations

import pytest
import stale_fuzz

# The first seeds (about 15 s on one core), and seeds that caught fixed bugs the first ones
# miss: 157, a float operand of `^` truncated where the other was a symbolic int (`7.5 ^ s0`
# gave 3, not eager's TypeError); 929 and 1552, an enum member's attribute (`Mode.A.w`) baked
# into the graph unguarded, so a later change to it was not seen; 163, a `__len__` that returned
# a symbolic int, negative after a change, gave it as the length (eager's ValueError); 262,
# `if obj:` answered by `__len__` missed a `__bool__` added to the class; 499, a descriptor read
# on the class (`type(gh).d`) missed its `__get__` replaced; 3892, a `__match_args__` made a
# list matched by its names (eager's TypeError); 33072, `hash(math.sqrt(2 * x.numel()))` guarded
# by sympy's `sqrt(2)*sqrt(s0)*sqrt(s1)`, false in floats (the compilation failed its own guards);
# 46331, the fuzzer's own: eager's step turned grad mode off before the compiled namespace's
# same step ran (`X = X * 1` lost requires_grad there alone); 77576, the fuzzer's own:
# `pow(2, hash(gf))` with gf = 0.5 asked eager for 2 ** 2 ** 60 and never finished; 79482,
# `(-1.5 == (x.numel() >= 7)) * 2` promoted the condition to a float unchanged (its compilation
# failed its own guards).
# Among the first, seed 8 caught a
# partial that the trace gave a `__dict__`, so `partial(gpa, k=0.5)` no longer flattened it, and
# seed 65 an AttributeError caught in the frame whose text was the name alone.
SEEDS = [*range(128), 157, 163, 262, 499, 929, 1552, 3892, 33072, 46331, 77576, 79482]


@pytest.mark.parametrize("seed", SEEDS)
def test_compiled_answers_equal_eager_after_every_change(seed: int) -> None:
    case = stale_fuzz.generate(seed)
    outcome = stale_fuzz.run(case)
    if outcome.failure is not None:
        pytest.fail(stale_fuzz.describe(case, outcome), pytrace=False)
