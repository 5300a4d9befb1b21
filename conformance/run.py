"""Run the conformance sweeps (conformance/*_opinfo.py) and write docs/conformance.md.

    python conformance/run.py                  every sweep, in full
    python conformance/run.py --only fxtrace   one sweep
    python conformance/run.py --sample         the fixed CI sample of ops only

Each sweep's `run(sample)` returns a markdown section; sections of sweeps not run this time are
kept from the existing page.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from report import write_report  # noqa: E402

if __name__ == "__main__":
    write_report(
        folder=Path(__file__).parent,
        suffix="_opinfo",
        page=Path(__file__).resolve().parents[1] / "docs" / "conformance.md",
        title="Conformance",
        intro=(
            "OpInfo sweeps: every op of PyTorch's OpInfo database on its float32 CPU samples, "
            "through our implementation and through PyTorch's own (the peer) in the same run."
        ),
        argv=sys.argv[1:],
    )
