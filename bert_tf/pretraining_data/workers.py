"""Work units and the processes that run them.

A unit of work is one pass over one block of a window's documents; it has a
random seed of its own, derived from (random_seed, window, pass, block), so
its records do not depend on which process makes them or when. A process
holds a `_Generator` (the vocab, the tokenizer and its word cache) and runs
two kinds of task: tokenizing part of a window's documents, and turning
some of a window's units into framed TFRecords (pairs, masks, serialization).
`make_executor` starts the processes, or runs the tasks inline for one
worker; `submit_tokenization` and `submit_generation` hand them work.
"""

import concurrent.futures
import multiprocessing
import os
import random
import threading
import time

import numpy as np

from bert_tf.pretraining_data.config import PAIRS_STREAM, PretrainingDataSummary
from bert_tf.pretraining_data.corpus import CachedTokenizer
from bert_tf.pretraining_data.instances import pack_pairs, plan_block
from bert_tf.pretraining_data.static_masking import mask_tokens
from bert_tf.records import record_specs, tfrecord
from bert_tf.text import tokenization

# Most pairs masked and serialized at once, which bounds numpy's temporaries
# to some tens of megabytes however long a document is.
MAX_BATCH_PAIRS = 2048


class _Generator:
    """Everything a process needs to tokenize windows and write their pairs."""

    def __init__(self, config):
        """Loads the vocab.

        Args:
          config: a PretrainingDataConfig.
        """
        self.config = config
        tokenizer = tokenization.FullTokenizer(config.vocab_file, config.do_lower_case)
        self.vocab = tokenization.VocabTables(tokenizer.vocab)
        self.tokenizer = CachedTokenizer(tokenizer)
        self.features = record_specs.pretraining_features(
            config.max_seq_length, config.max_predictions_per_seq)

    def _random_generators(self, window_index, pass_index, block_index):
        """Seeds the random streams of one unit from random_seed.

        Args:
          window_index, pass_index, block_index: the unit.

        Returns:
          (random.Random for the pair layout, numpy Generator for masking).
        """
        seed = np.random.SeedSequence([
            PAIRS_STREAM, self.config.random_seed % (1 << 64), window_index, pass_index,
            block_index])
        layout_seed, mask_seed = seed.spawn(2)
        layout_state = layout_seed.generate_state(4).tobytes()
        layout_rng = random.Random(int.from_bytes(layout_state, "little"))
        return layout_rng, np.random.default_rng(mask_seed)

    def generate(self, window, units):
        """Writes the records of some units of a window.

        Args:
          window: a corpus.Window.
          units: a list of (pass_index, block_index, first_document,
            end_document).

        Returns:
          (blocks, summary): for each unit that has records, their framed
          TFRecords back to back and each one's size, in unit order; and a
          PretrainingDataSummary of the units.
        """
        summary = PretrainingDataSummary()
        blocks = []
        for pass_index, block_index, first, end in units:
            layout_rng, mask_rng = self._random_generators(window.index, pass_index, block_index)
            layout = plan_block(window, first, end, self.config, layout_rng, summary)
            if layout is not None:
                # A block of one huge document has many pairs: batches bound
                # the memory that masking and serializing them take.
                blocks += [self._write_block(window.tokens, batch, mask_rng, summary)
                           for batch in layout.batches(MAX_BATCH_PAIRS)]
        return blocks, summary

    def _write_block(self, tokens, layout, rng, summary):
        """Masks and serializes the pairs of one unit.

        Args:
          tokens: the window's token ids.
          layout: an instances.PairLayout.
          rng: a numpy Generator.
          summary: a PretrainingDataSummary to count into.

        Returns:
          (data, lengths), as tfrecord.encode_tfrecords returns.
        """
        config = self.config
        input_ids, segment_ids, is_candidate, length = pack_pairs(
            tokens, layout, config.max_seq_length, self.vocab)
        masked_ids, positions, labels, num_masked, decisions = mask_tokens(
            input_ids, is_candidate, length, config, self.vocab, rng)
        input_mask = np.arange(config.max_seq_length) < length[:, None]
        weights = np.arange(config.max_predictions_per_seq) < num_masked[:, None]
        values = (masked_ids, input_mask, segment_ids, positions, labels, weights,
                  layout.is_random_next[:, None])
        records = tfrecord.encode_tfrecords(list(zip(self.features, values, strict=True)))

        summary.instances += len(length)
        summary.tokens += int(length.sum())
        summary.masked_tokens += int(num_masked.sum())
        summary.masked_to_mask += decisions[0]
        summary.masked_to_random += decisions[1]
        summary.masked_kept += decisions[2]
        summary.random_next += int(layout.is_random_next.sum())
        summary.truncated += int(layout.truncated.sum())
        return records


# Each worker process builds its own _Generator once, in _init_worker.
_generator = None


def _exit_with_parent():
    """Ends this worker when the process that started it is gone.

    A parent killed with kill -9 cannot stop its workers: they would wait for
    tasks forever, holding their memory. The parent's death shows as a new
    parent process id (the orphan is re-parented).
    """
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="exit_with_parent", daemon=True).start()


def _init_worker(config):
    """Builds this process's _Generator."""
    global _generator
    _generator = _Generator(config)


def _init_worker_process(config):
    """A worker process's start: its _Generator, and a life tied to its parent's."""
    _exit_with_parent()
    _init_worker(config)


def _tokenize_task(documents):
    """Runs CachedTokenizer.tokenize_documents in a worker."""
    return _generator.tokenizer.tokenize_documents(documents)


def _generate_task(window, units):
    """Runs _Generator.generate in a worker."""
    return _generator.generate(window, units)


class _InlineExecutor(concurrent.futures.Executor):
    """Runs each task when it is submitted, in this process."""

    def submit(self, fn, /, *args, **kwargs):
        """Runs fn(*args, **kwargs) and returns a finished Future."""
        future = concurrent.futures.Future()
        future.set_result(fn(*args, **kwargs))
        return future

    def shutdown(self, wait=True, *, cancel_futures=False):
        """Frees this process's _Generator, its vocab and word cache."""
        global _generator
        _generator = None


def make_executor(config, num_workers):
    """Starts the processes that tokenize and generate.

    Args:
      config: a PretrainingDataConfig.
      num_workers: 1 runs everything in this process.

    Returns:
      A concurrent.futures.Executor whose processes hold a _Generator.
    """
    if num_workers == 1:
        _init_worker(config)
        return _InlineExecutor()
    # "spawn" rather than "fork": a caller that has loaded TensorFlow (tests,
    # notebooks) holds threads and locks that forking would copy half-done.
    return concurrent.futures.ProcessPoolExecutor(
        num_workers, mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker_process, initargs=(config,))


def _split(items, parts):
    """Cuts a list into at most `parts` contiguous, nearly equal pieces."""
    size = max(1, -(-len(items) // parts))
    return [items[i:i + size] for i in range(0, len(items), size)]


def _units(window, dupe_factor):
    """Lists a window's work units in their canonical order.

    Args:
      window: a corpus.Window.
      dupe_factor: the number of passes.

    Returns:
      A list of (pass_index, block_index, first_document, end_document).
    """
    blocks = window.blocks()
    return [(pass_index, block_index, first, end)
            for pass_index in range(dupe_factor)
            for block_index, (first, end) in enumerate(blocks)]


def submit_tokenization(executor, documents, parts):
    """Submits a raw window's documents for tokenization.

    Args:
      executor: the Executor.
      documents: a list of documents, each a list of lines, or None.
      parts: how many tasks to split them into.

    Returns:
      A list of Futures of CachedTokenizer.tokenize_documents results; empty
      if documents is None.
    """
    return [executor.submit(_tokenize_task, chunk) for chunk in _split(documents or [], parts)]


def submit_generation(executor, window, dupe_factor, parts):
    """Submits a tokenized window's units for generation.

    Args:
      executor: the Executor.
      window: a corpus.Window.
      dupe_factor: the number of passes.
      parts: how many tasks to split the units into.

    Returns:
      A list of Futures of (blocks, summary) results, as _Generator.generate
      returns them, in unit order.
    """
    return [executor.submit(_generate_task, window, units)
            for units in _split(_units(window, dupe_factor), parts)]
