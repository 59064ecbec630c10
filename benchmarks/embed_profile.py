"""Where the embedder's time goes, and how close its int8 matrix products run to the CPU's
int8 speed: one text of ``--tokens`` word pieces through the default embedding model (bge-small,
int8), one thread, with onnxruntime's profiler on.

    .venv/bin/python benchmarks/embed_profile.py [--tokens 160] [--runs 30] [--json]

It prints the share of the run each kind of operation takes, the int8 work of the quantized
matrix products in giga-operations per second, and, as the baseline measured in the same run,
the same amount of int8 work done as one large product by the same library (a graph of one
``MatMulInteger``, built with the ``onnx`` package from the ``bench`` extra). The nearer the
first figure is to the second, the less a different way of running the same model can gain:
only fewer operations per text (a smaller or differently exported model, so new vectors)
would be faster.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from maxy.embeddings.bge import BgeSmallEmbedder

HIDDEN, FFN, LAYERS = 384, 1536, 12
QUANTIZED = ("DynamicQuantizeMatMul", "MatMulIntegerToFloat", "MatMulInteger")


def _session(path: str, *, profile: str | None = None) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    if profile:
        options.enable_profiling = True
        options.profile_file_prefix = profile
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


def _time(run: Any, runs: int) -> float:
    """Median seconds of ``run()`` over ``runs`` calls after three warm-up calls."""
    for _ in range(3):
        run()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _model_profile(model: str, tokens: int, runs: int, workdir: str) -> tuple[float, dict[str, float]]:
    """Median seconds per run, and each operation type's share of the profiled kernel time."""
    session = _session(model, profile=os.path.join(workdir, "profile"))
    ids = np.random.default_rng(7).integers(1000, 20000, size=(1, tokens), dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in {i.name for i in session.get_inputs()}:
        feed["token_type_ids"] = np.zeros_like(ids)
    seconds = _time(lambda: session.run(None, feed), runs)
    events = json.loads(Path(session.end_profiling()).read_text())
    spent: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            spent[event["args"]["op_name"]] += event["dur"]
    total = sum(spent.values()) or 1
    return seconds, {op: us / total for op, us in spent.most_common()}


def _gemm_baseline(rows: int, runs: int, workdir: str) -> float:
    """Giga int8 operations per second of one ``rows`` x 384 by 384 x 1536 ``MatMulInteger``."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(11)
    weights = numpy_helper.from_array(rng.integers(-127, 128, size=(HIDDEN, FFN), dtype=np.int8), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w", "za"], ["y"])],
        "gemm",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [rows, HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [rows, FFN])],
        [weights, numpy_helper.from_array(np.array(128, dtype=np.uint8), "za")],
    )
    path = os.path.join(workdir, "gemm.onnx")
    Path(path).write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    session = _session(path)
    a = rng.integers(0, 256, size=(rows, HIDDEN), dtype=np.uint8)
    seconds = _time(lambda: session.run(None, {"a": a}), runs)
    return 2 * rows * HIDDEN * FFN / seconds / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=160, help="word pieces in the text (default 160)")
    parser.add_argument("--runs", type=int, default=30, help="timed runs of each (default 30)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not 3 <= args.tokens <= 512:
        parser.exit(2, f"{parser.prog}: --tokens must be in 3..512 (the model has 512 positions)\n")
    if args.runs < 1:
        parser.exit(2, f"{parser.prog}: --runs must be at least 1\n")
    try:
        import onnx  # noqa: F401
    except ImportError:
        parser.exit(2, f"{parser.prog}: the baseline needs the onnx package: pip install -e '.[bench]'\n")

    model = str(BgeSmallEmbedder()._model_file())
    with tempfile.TemporaryDirectory() as workdir:
        seconds, shares = _model_profile(model, args.tokens, args.runs, workdir)
        baseline = _gemm_baseline(args.tokens * 8, args.runs, workdir)
    macs_per_token = LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN)
    quantized_share = sum(v for k, v in shares.items() if k in QUANTIZED)
    model_gops = 2 * macs_per_token * args.tokens / (seconds * quantized_share) / 1e9
    figures = {
        "tokens": args.tokens,
        "ms_per_text": round(seconds * 1000, 2),
        "texts_per_s_one_core": round(1 / seconds, 1),
        "shares": {k: round(v, 3) for k, v in shares.items() if v >= 0.005},
        "int8_share": round(quantized_share, 3),
        "model_int8_gops": round(model_gops, 1),
        "baseline_int8_gops": round(baseline, 1),
        "ratio": round(model_gops / baseline, 2),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(
        f"one text of {args.tokens} word pieces, one thread: {figures['ms_per_text']} ms ({figures['texts_per_s_one_core']}/s)"
    )
    for op, share in figures["shares"].items():
        print(f"  {op:<24} {share * 100:5.1f}%")
    print(
        f"int8 products: {quantized_share * 100:.1f}% of the run at {model_gops:.0f} G int8 op/s; "
        f"one large int8 product (baseline): {baseline:.0f} G op/s; ratio {figures['ratio']}"
    )


if __name__ == "__main__":
    main()
