"""The main demo: what the stack does today, on real models.

1. fakecore: a GPT-style transformer block and a CNN run on fake tensors with symbolic sizes;
   no data is computed, yet every output shape is an expression in the inputs' sizes, and the
   ShapeEnv lists the assumptions (guards) the run made about them.
2. fxtrace: the block traced to an aten graph with a symbolic batch and sequence length; one
   graph then serves inputs of other sizes.
3. guards: those assumptions compiled into one check function, which says which inputs the
   graph may be reused for, and why not.
4. dynamo: a small GPT language model compiled from its Python source: the captured graph, the
   guards that protect it, a recompilation, and cached calls against eager.
5. inductor_lite: the same GPT through dynamo with the Triton backend: how many kernels, what was
   fused, and one generated kernel (on CPU through Triton's interpreter when
   INDUCTOR_LITE_TRITON_CPU=1 TRITON_INTERPRET=1, as `nox -s demo` sets).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import torch

import dynamo
from fakecore import FakeTensorMode, ShapeEnv
from fxtrace import make_fx
from guards import GuardSet, LocalSource, TensorMatch, shape_guards

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from models import GPT, SmallCNN, TransformerBlock  # noqa: E402


def fake_forward(model: torch.nn.Module, example: torch.Tensor, dynamic_dims: tuple[int, ...]):
    mode = FakeTensorMode(ShapeEnv())
    fake_input = mode.from_tensor(example, dynamic_dims=dynamic_dims, source=LocalSource("x"))
    params = {n: mode.from_tensor(p) for n, p in model.named_parameters()}
    buffers = {n: mode.from_tensor(b) for n, b in model.named_buffers()}
    with mode:
        out = torch.func.functional_call(model, {**params, **buffers}, (fake_input,))
    return fake_input, out, mode.shape_env


def main() -> None:
    print("== fakecore: fake tensors with symbolic sizes")
    for model, example, dims in [
        (TransformerBlock(), torch.randn(8, 128, 64), (0, 1)),
        (SmallCNN(), torch.randn(4, 3, 32, 32), (0, 2, 3)),
    ]:
        x, y, env = fake_forward(model.eval(), example, dims)
        print(f"{type(model).__name__}: input {tuple(x.shape)} -> output {tuple(y.shape)}, "
              f"strides {y.stride()}")
        print(f"  guards: {[str(g.expr) for g in env.guards] or 'none'}")

    print("\n== fxtrace: an aten graph that serves every batch and sequence length")
    block = TransformerBlock().eval()
    gm = make_fx(block, "symbolic")(torch.randn(2, 8, 64))
    ops = Counter(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
    print(f"{len(gm.graph.nodes)} nodes; most used: {ops.most_common(5)}")
    for shape in [(3, 5, 64), (1, 33, 64)]:
        x = torch.randn(shape)
        print(f"  input {shape}: matches eager: {torch.allclose(gm(x), block(x), atol=1e-5)}")

    print("\n== guards: when may a graph traced on a (4, 3, 32, 32) image be reused?")
    cnn = SmallCNN().eval()
    _, _, env = fake_forward(cnn, torch.randn(4, 3, 32, 32), (0, 2, 3))
    check = GuardSet(shape_guards(env))
    check.add(TensorMatch.of(LocalSource("x"), torch.randn(4, 3, 32, 32), dynamic_dims=(0, 2, 3)))
    for shape in [(16, 3, 64, 64), (4, 3, 32, 16), (4, 1, 32, 32)]:
        frame = {"x": torch.randn(shape)}
        verdict = "yes" if check.check(frame, {}) else "no: " + "; ".join(check.explain(frame, {}))
        print(f"  {shape}: {verdict}")


def compile_gpt() -> None:
    print("\n== dynamo: compiling a GPT language model from its Python source")
    model = GPT().eval()
    compiled = dynamo.compile(model, fullgraph=True)
    tokens = torch.randint(0, 256, (4, 32))
    start = time.perf_counter()
    out = compiled(tokens)
    capture = time.perf_counter() - start
    guards, entry = compiled._compiled_forward.cache.entries[0]
    ops = Counter(getattr(n.target, "__name__", str(n.target))
                  for n in entry.graph.graph.nodes if n.op in ("call_function", "call_method"))
    print(f"first call (capture + compile): {capture * 1e3:.0f} ms; one graph of "
          f"{sum(ops.values())} ops, most used: {ops.most_common(4)}")
    body = [line for line in entry.graph.code.splitlines() if " = " in line]
    print("the graph's first block, as FX prints it:")
    for line in body[body.index(next(b for b in body if "layer_norm" in b)):][:8]:
        print("   ", line.split(";")[0].strip()[:110])
    print(f"outputs match eager: {torch.allclose(out, model(tokens), atol=1e-5)}")
    kinds: dict[str, str] = {}
    for guard in guards:
        kinds.setdefault(type(guard).__name__, guard.describe())
    print(f"{len(guards)} guards; one of each kind:")
    for kind, words in kinds.items():
        print(f"  {kind}: {words[:100]}")
    longer = torch.randint(0, 256, (4, 48))
    print("a longer sequence fails the guards:", "; ".join(guards.explain(
        compiled._compiled_forward.bind(model, longer), type(model).forward.__globals__))[:110])
    compiled(longer)
    compiled(torch.randint(0, 256, (4, 40)))
    print(f"after lengths 48 and 40 the cache holds {len(compiled._compiled_forward.cache)} "
          "entries: the second compiled the length as a symbol (automatic dynamic)")
    for label, fn in (("eager", lambda: model(tokens)), ("compiled", lambda: compiled(tokens))):
        fn()
        start = time.perf_counter()
        for _ in range(20):
            fn()
        print(f"  {label}: {(time.perf_counter() - start) / 20 * 1e3:.2f} ms per call")


def generate_kernels() -> None:
    print("\n== inductor_lite: the GPT compiled by dynamo with the Triton backend")
    import tempfile

    import inductor_lite

    model = GPT(n_layers=2).eval()
    tokens = torch.randint(0, 256, (2, 16))
    with tempfile.TemporaryDirectory() as folder, torch.no_grad():
        inductor_lite.config.dump_dir = folder
        out = dynamo.compile(model, backend="inductor_lite", fullgraph=True)(tokens)
        inductor_lite.config.dump_dir = None
        c = inductor_lite.counters
        print(f"outputs match eager: {torch.allclose(out, model(tokens), atol=1e-4)}")
        if c["kernels"] == 0:
            print("CPU tensors without Triton's interpreter: the aten graph ran eagerly (set "
                  "INDUCTOR_LITE_TRITON_CPU=1 TRITON_INTERPRET=1 to run generated kernels)")
            return
        print(f"{c['lowered_ops']} aten ops lowered into {c['kernels']} Triton kernels "
              f"({c['fused_buffers']} buffers share a kernel), {c['extern_calls']} matmul/attention "
              f"calls, {c['fallbacks']} eager fallbacks")
        source = next(Path(folder).glob("*.py")).read_text()
    kernel = next(k for k in source.split("@triton.jit") if "rsqrt" in k)
    print("the first kernel with a layer norm (embeddings, their sum and its normalisation):")
    for line in kernel.strip().splitlines()[:24]:
        print("   ", line[:110])


if __name__ == "__main__":
    main()
    compile_gpt()
    generate_kernels()
