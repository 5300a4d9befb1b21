import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def fresh_caches():
    import dynamo

    dynamo.reset()
    yield
    dynamo.reset()
