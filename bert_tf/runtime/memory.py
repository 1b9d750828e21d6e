"""Keeps a CPU run's memory down: the allocator TensorFlow uses, and free pages handed back.

The allocator. On a CPU whose vector units multiply bfloat16 or int8
(AVX512_VNNI, AVX512_BF16, AMX), TensorFlow turns its oneDNN kernels on,
and with them its oneDNN CPU allocator: every allocation of 4 KB or more
comes from a pool (TensorFlow's BFC allocator) that grows to the largest
total ever in use and never shrinks, and that malloc_trim cannot reach.
For TensorFlow's own kernels the pool is the better choice: they allocate
and free many tensors per step, which the pool reuses without a page fault.
An XLA-compiled step instead takes one large temporary buffer per program,
and the pool keeps every one it ever held: fine-tuning all-MiniLM-L6-v2 in
float32 with XLA on an AMD EPYC peaked at 8.2 GB on SQuAD with the pool and
4.9 GB with malloc (docs/benchmarks.md, "Peak memory of fine-tuning"). So when XLA
compiles the steps on a CPU, use_system_allocator() asks TensorFlow to take
its memory from malloc, where it is freed and trimmed as below. TensorFlow
reads the setting once, at its first allocation: run_setup.prepare() calls
it after choosing the precision and before anything allocates. A value the
user has set wins.

The free pages.

glibc's malloc keeps memory that the program frees, for the next request,
and returns it to the system only from the top of each heap. XLA's compiler
(LLVM) allocates and frees about 0.9 GB while it compiles the train step of
all-MiniLM-L6-v2 at batch 32 and seq 128; the compiled program and other
live objects lie above most of that memory, so the process keeps it. The
first step's execution then maps its temporary buffer (1.3 GB there) on top
of it, and every later step does the same: that retained memory adds to the
peak of every step (docs/benchmarks.md, "Peak memory of fine-tuning").

malloc_trim(0) gives back every free page, wherever it lies. Called from a
thread every second while a step may be compiling, it returns the compiler's
memory before the step's buffer fills, at the cost of a short pass over the
heaps (milliseconds) and of faulting in again the pages that the next steps
reuse. On C libraries without malloc_trim (macOS, musl) nothing is done.
"""

import contextlib
import ctypes
import os
import threading

# TensorFlow's oneDNN switch between its pooled allocator and malloc.
SYSTEM_ALLOCATOR_ENV = "TF_ONEDNN_USE_SYSTEM_ALLOCATOR"

# The C library's malloc_trim, looked up once; None where there is none.
try:
    MALLOC_TRIM = ctypes.CDLL(None).malloc_trim
    MALLOC_TRIM.argtypes = [ctypes.c_size_t]
    MALLOC_TRIM.restype = ctypes.c_int
except (AttributeError, OSError):
    MALLOC_TRIM = None


def use_system_allocator():
    """Makes TensorFlow's oneDNN allocator take memory from malloc (see the module docstring).

    Has an effect only before TensorFlow's first allocation, and only on CPUs
    where TensorFlow turns oneDNN on; elsewhere the variable is not read.

    Returns:
      The variable's value now: "true", or what the user had set.
    """
    return os.environ.setdefault(SYSTEM_ALLOCATOR_ENV, "true")


def release_free_memory():
    """Returns the C heap's free pages to the system, once.

    Returns:
      True if the C library has malloc_trim (glibc), else False.
    """
    if MALLOC_TRIM is None:
        return False
    MALLOC_TRIM(0)
    return True


@contextlib.contextmanager
def releasing_free_memory(enabled=True, interval_seconds=1.0):
    """Calls release_free_memory() every interval_seconds while the block runs.

    Args:
      enabled: False runs the block alone (e.g. when no step compiles).
      interval_seconds: Seconds between two releases.

    Yields:
      None.
    """
    if not enabled or MALLOC_TRIM is None:
        yield
        return
    stop = threading.Event()

    def release_until_stopped():
        while not stop.wait(interval_seconds):
            release_free_memory()

    thread = threading.Thread(target=release_until_stopped, name="release_free_memory",
                              daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
