"""Writing a results page (docs/performance.md, docs/conformance.md) from runnable sections.

Every `<name><suffix>.py` module in a folder has `run(...) -> str | None`, a markdown section
(None: nothing to measure on this machine). The page gets a header (date, machine, command) and
one section per module, between markers, so that a run of some modules, or one that measures
nothing, keeps the others' last results.
"""

from __future__ import annotations

import datetime
import importlib.util
import platform
import re
import sys
from pathlib import Path

import torch


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    gpu = f", GPU {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""
    return (f"{platform.system()} {platform.release()}, {cpu}, {_cores()} cores{gpu}, "
            f"Python {platform.python_version()}, torch {torch.__version__}")


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_report(folder: Path, suffix: str, page: Path, title: str, intro: str,
                 argv: list[str]) -> None:
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    sample = "--sample" in argv
    sections = dict(re.findall(r"<!-- (\w+) -->\n(.*?)<!-- end -->\n", page.read_text(), re.S)
                    if page.exists() else [])
    for path in sorted(folder.glob(f"*{suffix}.py")):
        name = path.stem
        if only is not None and not name.startswith(only):
            continue
        print(f"running {name} ...", flush=True)
        module = _load(path)
        body = module.run(sample=sample) if sample else module.run()
        if body is None:  # nothing measurable on this machine: the last results stay
            print(f"{name}: nothing to measure here; its section is kept", flush=True)
            continue
        command = " ".join(["python", Path(sys.argv[0]).as_posix(), *argv])
        stamp = f"_{datetime.date.today().isoformat()}, {machine()}, `{command}`_"
        heading, _, rest = body.partition("\n")
        sections[name] = f"{heading}\n\n{stamp}\n{rest}"
    text = f"# {title}\n\n{intro}\n\n" + "".join(
        f"<!-- {name} -->\n{body}<!-- end -->\n" for name, body in sorted(sections.items())
    )
    page.write_text(text)
    print(f"wrote {page}")
