"""Raw text to masked-LM and next-sentence pretraining TFRecords.

The input is UTF-8 text with one sentence per line and a blank line between
documents (the original's format), or plain text (documents a paragraph, a
line or a file each) or a TensorFlow Datasets data set, split into
sentences by a simple rule (sources.py, sentences.py). Each output record
is a tf.train.Example with the features of
`bert_tf.records.record_specs.pretraining_features`: a pair laid out as
[CLS] A [SEP] B [SEP], where B is the text that follows A half of the time and
a random span of another document otherwise, with some word pieces masked.

The algorithm keeps the statistics of the original google-research/bert
create_pretraining_data.py:
  - each document, on each of the `dupe_factor` passes, draws a target length
    of max_seq_length - 3, replaced with probability short_seq_prob by a
    uniform length in [2, max_seq_length - 3];
  - sentences accumulate into a chunk until it reaches the target; A is a
    random number of the chunk's first sentences and B the rest, or, half of
    the time and always for a one-sentence chunk, a random span of another
    document, in which case the chunk's unused sentences are put back;
  - the longer segment loses tokens, each one from its front or its back at
    random, until the pair fits;
  - round(15% of the tokens, [CLS] and [SEP] included), at least one and at
    most max_predictions_per_seq, are chosen among the word pieces other than
    [CLS] and [SEP]; 80% become [MASK], 10% a random word piece and 10% stay;
  - whole-word masking chooses words, a word being a piece and the "##"
    pieces that follow it, and masks all of their pieces.

It fixes the original's known bugs:
  - with a single document, the original drew a "random next" from that same
    document; here a random next always comes from another document, and a
    pair that has none to draw from is skipped and counted;
  - under whole-word masking the original chose [MASK]/random/keep for each
    piece, splitting words; the choice is now made once per word
    (wwm_decision_per_piece=True restores the original behaviour);
  - random replacements were drawn from the whole vocab, [unused*], [PAD] and
    the other bracketed special tokens included; they are now drawn from the
    real word pieces only;
  - whole-word groups no longer cross [SEP]: a "##" piece that starts a
    segment, as truncation at the front often leaves, starts its own word.

And, to stream, it differs in scope:
  - the input is processed in windows of consecutive documents, about
    `window_mb` of text each. Random-next spans come from another document of
    the same window rather than from the whole corpus. Each window's records
    are shuffled and kept in a spill file beside the output; at the end the
    windows are interleaved at random, which makes the output a uniform
    shuffle of all the records, as the original's. Peak memory is therefore
    bounded by the window, not by the corpus: a window's records take about
    11 bytes per byte of its text and pass, some 45 MB for 4 MB at
    dupe_factor=5. The spill file takes as much disk as the output, until
    the output is complete.
  - the end of an input file also ends a document.

Determinism: every pair and mask is a function of (random_seed, window,
pass, block of documents), the records of a window are shuffled with a seed
of their own, and the windows are interleaved with another, then dealt
round-robin over the output files. The output
files are therefore byte-for-byte the same whatever the number of workers;
they depend on the input, the flags and window_mb.

Records are serialized and framed as TFRecords by `bert_tf.records.tfrecord`, with
numpy, so that neither the workers nor the main process load TensorFlow: that
takes longer and more memory than generating a whole window.

The modules, in the order the data flows through them:
  config.py: the settings (PretrainingDataConfig, with the input's
    TextInputConfig), the counts (PretrainingDataSummary) and the error
    (PretrainingDataError);
  sources.py: input files or a TFDS data set -> documents of sentences,
    with sentences.py's split of plain text;
  corpus.py: documents -> windows of token ids;
  instances.py: the pairs of a block of documents, packed into rows;
  static_masking.py: the masked-LM masks of the rows;
  workers.py: units of work and the processes that run them;
  output.py: the output files and the progress log;
  builder.py: create_pretraining_data, which drives them.
  vocab_learning.py: a vocab.txt learned from the same text (learn_vocab.py).
"""

from bert_tf.pretraining_data.builder import create_pretraining_data
from bert_tf.pretraining_data.config import (
    PretrainingDataConfig,
    PretrainingDataError,
    PretrainingDataSummary,
    TextInputConfig,
)
from bert_tf.pretraining_data.sentences import split_sentences
from bert_tf.pretraining_data.sources import expand_input_patterns, open_text_source

__all__ = [
    "PretrainingDataConfig",
    "PretrainingDataError",
    "PretrainingDataSummary",
    "TextInputConfig",
    "create_pretraining_data",
    "expand_input_patterns",
    "open_text_source",
    "split_sentences",
]
