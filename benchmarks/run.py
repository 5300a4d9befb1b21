"""Run the benchmarks (benchmarks/*_bench.py) and write docs/performance.md.

    python benchmarks/run.py                  every benchmark
    python benchmarks/run.py --only fakecore  one benchmark

Each benchmark measures ours and the peer (PyTorch's own implementation) in the same run.
Results are written, never asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from report import write_report  # noqa: E402

if __name__ == "__main__":
    write_report(
        folder=Path(__file__).parent,
        suffix="_bench",
        page=Path(__file__).resolve().parents[1] / "docs" / "performance.md",
        title="Performance",
        intro=(
            "Each benchmark runs ours and the peer (PyTorch's own implementation) side by side "
            "in the same process; times are medians of repeated runs after a warm-up. A ratio "
            "below 1 means ours is faster. Run with `nox -s bench`."
        ),
        argv=sys.argv[1:],
    )
