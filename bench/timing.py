"""The wall time of a piece of work, as the speed benches report it: the median of repeats."""

import statistics
import time


def median_seconds(run, repeats):
    """Runs `run` `repeats` times.

    Args:
      run: A function of no arguments.
      repeats: How many times to run it (at least 1).

    Returns:
      (its last result, the median of the wall times in seconds).
    """
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)
