"""Pacing of the training loop's progress lines, and how they show durations.

On a CPU or GPU, Trainer.train sizes each loop (one host round trip, one
progress line) from the measured step time, so that a line comes about every
log_every_secs; loop_steps decides the size and format_duration writes the
time left.
"""


def loop_steps(step_seconds, iterations_per_loop, log_every_secs):
    """How many steps the next training loop runs, before the end and checkpoint caps.

    Args:
      step_seconds: The last loop's seconds per step, or None before the
        first loop.
      iterations_per_loop: The most steps of one loop.
      log_every_secs: TrainingConfig.log_every_secs: None for fixed loops.

    Returns:
      iterations_per_loop without log_every_secs. With it: one step for the
      first loop (which also compiles, so that its line comes early), and
      afterwards the steps that take about log_every_secs at the last loop's
      pace, at least 1 and at most iterations_per_loop.
    """
    if log_every_secs is None:
        return iterations_per_loop
    if step_seconds is None:
        return 1
    fitting = int(log_every_secs / max(step_seconds, 1e-9))
    return max(1, min(iterations_per_loop, fitting))


def format_duration(seconds):
    """A duration for a log line: "45s", "12m05s" or "2h03m".

    Args:
      seconds: A non-negative number of seconds.

    Returns:
      The duration rounded to whole seconds (or minutes, from an hour up).
    """
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
