"""Achievable throughput of a lane's device: a large float32 matrix product, timed after a warm-up."""
from __future__ import annotations

import time
from types import ModuleType


def matmul_gflops(keras: ModuleType, size: int = 2048, seconds: float = 1.0) -> float:
    """Median GFLOP/s of size×size×size float32 products (2·n³ FLOPs each), synchronised per product."""
    ops = keras.ops
    a = keras.random.normal((size, size), seed=1)
    b = keras.random.normal((size, size), seed=2)
    # Reading one element back waits for the device to finish the product.
    float(ops.convert_to_numpy(ops.matmul(a, b)[0, 0]))  # warm-up: kernels chosen, memory touched
    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 200):
        t0 = time.perf_counter()
        float(ops.convert_to_numpy(ops.matmul(a, b)[0, 0]))
        times.append(time.perf_counter() - t0)
    times.sort()
    return 2.0 * size**3 / times[len(times) // 2] / 1e9
