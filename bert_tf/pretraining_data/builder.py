"""The driver of the data builder: `create_pretraining_data`.

It reads the input a window at a time, has the workers tokenize each window
and generate its records, and keeps them shuffled in a spill file while the
next window is read and tokenized; at the end it interleaves the windows at
random into the output files, so that the records are shuffled across the
whole corpus.
"""

import time

import numpy as np

from bert_tf.pretraining_data.config import (
    SHUFFLE_STREAM,
    PretrainingDataError,
    PretrainingDataSummary,
)
from bert_tf.pretraining_data.corpus import assemble_window, group_windows
from bert_tf.pretraining_data.output import OutputFiles, Progress
from bert_tf.pretraining_data.sources import open_text_source
from bert_tf.pretraining_data.workers import (
    make_executor,
    submit_generation,
    submit_tokenization,
)
from bert_tf.text import tokenization


def _write_window(output, window, generating, config, summary):
    """Waits for a window's records and adds them to the output, shuffled.

    Args:
      output: the output.OutputFiles.
      window: the corpus.Window.
      generating: the Futures that submit_generation returned.
      config: a PretrainingDataConfig.
      summary: a PretrainingDataSummary to count into.
    """
    blocks = []
    for future in generating:
        task_blocks, task_summary = future.result()
        blocks += task_blocks
        summary.add(task_summary)
    shuffle = np.random.default_rng(np.random.SeedSequence(
        [SHUFFLE_STREAM, config.random_seed % (1 << 64), window.index]))
    output.add_window(blocks,
                      shuffle.permutation(sum(len(lengths) for _, lengths in blocks)))


def _window_summary(window):
    """Counts a window's documents and tokens.

    Args:
      window: a corpus.Window.

    Returns:
      A PretrainingDataSummary.
    """
    summary = PretrainingDataSummary(
        documents=window.num_documents, input_tokens=len(window.tokens),
        documents_too_short=window.num_empty)
    if window.num_documents == 1 and window.document_offsets[1] == 1:
        # Alone in its window, a one-sentence document has no pair to form.
        summary.documents_too_short += 1
    return summary


def create_pretraining_data(input_patterns, output_files, config, num_workers=1):
    """Writes pretraining TFRecords from raw text.

    Args:
      input_patterns: comma-separated input files and globs, or a list, laid
        out as config.text_input.input_format says; None when
        config.text_input.tfds_name gives the text.
      output_files: the output files, a comma-separated string or a list;
        records are dealt to them in turn.
      config: a PretrainingDataConfig.
      num_workers: processes that tokenize and generate; the output does not
        depend on it.

    Returns:
      A PretrainingDataSummary.

    Raises:
      ValueError: on bad settings.
      PretrainingDataError: on a bad input, vocab or output location.
    """
    config.validate()
    if num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, got {num_workers}")
    if isinstance(output_files, str):
        output_files = [p.strip() for p in output_files.split(",") if p.strip()]
    if not output_files:
        raise PretrainingDataError("no output file given")
    source = open_text_source(input_patterns, config.text_input)
    # Check the vocab and its casing here, where an error is clearest,
    # before any worker.
    try:
        tokenization.VocabTables.from_file(config.vocab_file)
        tokenization.check_case_fits_vocab(
            config.do_lower_case, tokenization.load_vocab(config.vocab_file), config.vocab_file)
    except ValueError as e:
        raise PretrainingDataError(str(e)) from e

    progress = Progress()
    summary = PretrainingDataSummary()
    documents = source.documents(config.errors)
    windows = group_windows(documents, int(config.window_mb * (1 << 20)))
    parts = 2 * num_workers
    output = OutputFiles(output_files, config.random_seed)
    index = 0
    try:
        with make_executor(config, num_workers) as executor:
            pending = submit_tokenization(executor, next(windows, None), parts)
            while pending:
                window = assemble_window(index, [f.result() for f in pending])
                summary.add(_window_summary(window))
                generating = submit_generation(executor, window, config.dupe_factor, parts)
                # Read and tokenize the next window while this one generates.
                pending = submit_tokenization(executor, next(windows, None), parts)
                _write_window(output, window, generating, config, summary)
                index += 1
                progress.update(summary, index)
        if summary.documents == 0:
            raise PretrainingDataError(f"the input holds no text: {source.describe()}")
        if summary.instances == 0:
            # An empty record file would fail only later, in run_pretraining.py.
            raise PretrainingDataError(
                f"no instance could be made from {source.describe()} "
                f"({summary.documents} document(s), {summary.documents_too_short} too short "
                "to form a pair), so nothing was written: the shortest input that makes one "
                "is two one-sentence documents (lines separated by a blank line) or one "
                "document of two sentences (two lines)")
        output.commit()
    finally:
        output.close()
    summary.elapsed_s = time.monotonic() - progress.start
    progress.update(summary, index, force=True)
    return summary
