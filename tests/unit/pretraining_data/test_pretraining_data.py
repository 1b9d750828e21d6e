"""Tests for bert_tf.pretraining_data.

Most tests run on a synthetic corpus in which every word's first piece names
its document and position ("d3p17"), so that each record can be traced back
to the text it came from. Others use two fixtures:
  pretraining_corpus.txt: a few documents of English written for these tests;
  pretraining_vocab.txt: the bert-base-uncased entries that the corpus uses,
    plus [PAD], [UNK], [CLS], [SEP], [MASK] and five [unused] entries.
Records are read back with TensorFlow, which checks their CRCs and parses them
independently of the code under test.
"""

import collections
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import pretraining_data
from bert_tf.pretraining_data import (
    PretrainingDataConfig,
    PretrainingDataError,
    output,
    workers,
)
from bert_tf.pretraining_data.corpus import CachedTokenizer
from bert_tf.pretraining_data.instances import truncate_pair
from bert_tf.text import tokenization
from tests import helpers

FIXTURES = helpers.FIXTURES
CORPUS = os.path.join(FIXTURES, "pretraining_corpus.txt")
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")

# Enough [unused] entries that drawing replacements from the whole vocab, as
# the original did, would hit them many times.
SPECIAL_TOKENS = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                  + [f"[unused{i}]" for i in range(50)])
SUFFIXES = ["##a", "##b", "##c"]


def original_spec(max_seq_length, max_predictions_per_seq):
    """The features that the original run_pretraining.py parses, as it declares them."""
    return {
        "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64),
        "masked_lm_ids": tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature([max_predictions_per_seq], tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }


def read_records(paths, config):
    """Parses TFRecord files with the original's spec into numpy arrays."""
    records = [r.numpy() for r in tf.data.TFRecordDataset(paths)]
    parsed = tf.io.parse_example(
        records, original_spec(config.max_seq_length, config.max_predictions_per_seq))
    return {name: t.numpy() for name, t in parsed.items()}


class SyntheticCorpus:
    """A corpus whose records can be traced back to their text.

    Word k of document d is "d{d}p{k}", followed for `suffix_share` of the
    words by one or two letters that WordPiece splits off as ##a, ##b, ##c.
    """

    def __init__(self, directory, num_documents=12, seed=0, suffix_share=0.0):
        rng = random.Random(seed)
        tokens = list(SPECIAL_TOKENS) + SUFFIXES
        lines = []
        for document in range(num_documents):
            position = 0
            for _ in range(rng.randint(3, 10)):
                words = []
                for _ in range(rng.randint(2, 9)):
                    head = f"d{document}p{position}"
                    tokens.append(head)
                    position += 1
                    tail = ""
                    if rng.random() < suffix_share:
                        tail = "".join(rng.choice("abc") for _ in range(rng.randint(1, 2)))
                    words.append(head + tail)
                lines.append(" ".join(words))
            lines.append("")
        self.path = os.path.join(directory, "synthetic.txt")
        self.vocab_file = os.path.join(directory, "synthetic_vocab.txt")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        with open(self.vocab_file, "w", encoding="utf-8") as f:
            f.write("\n".join(tokens) + "\n")

        self.tokenizer = tokenization.FullTokenizer(self.vocab_file, do_lower_case=True)
        self.documents = [[]]
        for line in lines:
            if line:
                self.documents[-1].extend(
                    self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(line)))
            else:
                self.documents.append([])
        self.documents = [d for d in self.documents if d]
        # Each word's first piece occurs once in the corpus.
        self.place = {token: (d, i) for d, ids in enumerate(self.documents)
                      for i, token in enumerate(ids) if not self.is_continuation(token)}

    def is_continuation(self, token_id):
        """Whether the id is a ## piece."""
        return self.tokenizer.inv_vocab[token_id].startswith("##")

    def locate(self, segment):
        """Returns (document, start) of a run of tokens, asserting that the text holds it."""
        offset = next(k for k, t in enumerate(segment) if not self.is_continuation(t))
        document, index = self.place[segment[offset]]
        start = index - offset
        assert self.documents[document][start:start + len(segment)] == list(segment)
        return document, start

    def config(self, **overrides):
        """A small PretrainingDataConfig on this corpus's vocab."""
        settings = dict(vocab_file=self.vocab_file, max_seq_length=32,
                        max_predictions_per_seq=5, dupe_factor=5, random_seed=7)
        settings.update(overrides)
        return PretrainingDataConfig(**settings)


def generate(tmp_path, inputs, config, num_outputs=1, num_workers=1, name="out"):
    """Runs create_pretraining_data; returns (output paths, summary)."""
    outputs = [str(tmp_path / f"{name}-{i}.tfrecord") for i in range(num_outputs)]
    summary = pretraining_data.create_pretraining_data(
        inputs, outputs, config, num_workers=num_workers)
    return outputs, summary


def unpack(features, row):
    """Splits one record into its segments, restoring the masked tokens.

    Returns:
      (original_ids, a_length, b_length, positions, labels): the ids before
      masking, the segments' lengths and the masked positions and labels.
    """
    ids = features["input_ids"][row]
    length = int(features["input_mask"][row].sum())
    a_length = int((features["segment_ids"][row][:length] == 0).sum()) - 2
    count = int(features["masked_lm_weights"][row].sum())
    positions = features["masked_lm_positions"][row][:count]
    labels = features["masked_lm_ids"][row][:count]
    original = ids.copy()
    original[positions] = labels
    return original, a_length, length - a_length - 3, positions, labels


def words_of(original, a_length, b_length, is_continuation):
    """Groups a record's candidate positions into words: a piece and its ## pieces."""
    words = []
    for first, length in ((1, a_length), (a_length + 2, b_length)):
        for position in range(first, first + length):
            if words and position > first and is_continuation(original[position]):
                words[-1].append(position)
            else:
                words.append([position])
    return words


def fate(features, row, position, label, mask_id):
    """What masking did to a position: "mask", "kept" or "random"."""
    token = features["input_ids"][row][position]
    if token == mask_id:
        return "mask"
    return "kept" if token == label else "random"


def test_records_hold_exactly_the_original_features(tmp_path):
    corpus = SyntheticCorpus(tmp_path)
    config = corpus.config()
    (output,), summary = generate(tmp_path, corpus.path, config)
    records = [r.numpy() for r in tf.data.TFRecordDataset(output)]
    assert len(records) == summary.instances > 0
    for record in records:
        feature = tf.train.Example.FromString(record).features.feature
        assert set(feature) == set(original_spec(32, 5))
        for name in ("input_ids", "input_mask", "segment_ids"):
            assert len(feature[name].int64_list.value) == 32
        for name in ("masked_lm_positions", "masked_lm_ids"):
            assert len(feature[name].int64_list.value) == 5
        assert len(feature["masked_lm_weights"].float_list.value) == 5
        assert len(feature["next_sentence_labels"].int64_list.value) == 1


@pytest.mark.parametrize("batch_pairs", [2048, 7])
def test_pairs_come_from_the_text_in_the_original_layout(tmp_path, monkeypatch, batch_pairs):
    # Small batches split each block's pairs, as a very long document's are.
    monkeypatch.setattr(workers, "MAX_BATCH_PAIRS", batch_pairs)
    corpus = SyntheticCorpus(tmp_path)
    config = corpus.config()
    (output,), _ = generate(tmp_path, corpus.path, config)
    features = read_records(output, config)
    cls_id, sep_id = corpus.tokenizer.vocab["[CLS]"], corpus.tokenizer.vocab["[SEP]"]
    for row in range(len(features["input_ids"])):
        original, a_length, b_length, _, _ = unpack(features, row)
        length = a_length + b_length + 3
        assert a_length >= 1 and b_length >= 1 and length <= config.max_seq_length
        assert original[0] == cls_id
        assert original[a_length + 1] == sep_id and original[length - 1] == sep_id
        assert not original[length:].any() and not features["input_mask"][row][length:].any()
        assert features["segment_ids"][row].tolist() == (
            [0] * (a_length + 2) + [1] * (b_length + 1) + [0] * (config.max_seq_length - length))
        # locate() asserts that each segment, masked tokens restored from
        # masked_lm_ids, is a run of its document's text.
        a_document, a_start = corpus.locate(original[1:a_length + 1].tolist())
        b_document, b_start = corpus.locate(original[a_length + 2:length - 1].tolist())
        if features["next_sentence_labels"][row][0] == 0:
            assert b_document == a_document and b_start >= a_start + a_length
        else:
            assert b_document != a_document


def test_masked_positions_are_sorted_candidates_of_the_right_count(tmp_path):
    corpus = SyntheticCorpus(tmp_path)
    config = corpus.config(max_predictions_per_seq=5)
    (output,), _ = generate(tmp_path, corpus.path, config)
    features = read_records(output, config)
    for row in range(len(features["input_ids"])):
        _, a_length, b_length, positions, _ = unpack(features, row)
        length = a_length + b_length + 3
        expected = min(5, max(1, round(length * config.masked_lm_prob)), a_length + b_length)
        assert len(positions) == expected
        assert (np.diff(positions) > 0).all()
        in_a = (positions >= 1) & (positions <= a_length)
        in_b = (positions >= a_length + 2) & (positions <= a_length + b_length + 1)
        assert (in_a | in_b).all(), "a position points at [CLS], [SEP] or padding"
        weights = features["masked_lm_weights"][row]
        assert weights.tolist() == [1.0] * expected + [0.0] * (5 - expected)
        assert not features["masked_lm_positions"][row][expected:].any()
        assert not features["masked_lm_ids"][row][expected:].any()


def test_mask_rate_is_fifteen_percent(tmp_path):
    config = PretrainingDataConfig(vocab_file=VOCAB, dupe_factor=20, random_seed=3)
    (output,), summary = generate(tmp_path, CORPUS, config)
    features = read_records(output, config)
    rate = features["masked_lm_weights"].sum() / features["input_mask"].sum()
    assert summary.instances > 100
    assert rate == pytest.approx(summary.mask_rate)
    assert abs(rate - 0.15) < 0.01


def test_masked_tokens_split_80_10_10_over_real_word_pieces(tmp_path):
    corpus = SyntheticCorpus(tmp_path, num_documents=30)
    config = corpus.config(dupe_factor=20, max_predictions_per_seq=20)
    (output,), summary = generate(tmp_path, corpus.path, config)
    features = read_records(output, config)
    mask_id = corpus.tokenizer.vocab["[MASK]"]
    fates, replacements = [], []
    for row in range(len(features["input_ids"])):
        _, _, _, positions, labels = unpack(features, row)
        for position, label in zip(positions, labels, strict=True):
            fates.append(fate(features, row, position, label, mask_id))
            if fates[-1] == "random":
                replacements.append(corpus.tokenizer.inv_vocab[features["input_ids"][row][position]])
    total = len(fates)
    assert total > 5000
    # Five standard deviations of a binomial share over `total` draws.
    assert abs(fates.count("mask") / total - 0.8) < 5 * (0.16 / total) ** 0.5
    assert abs(fates.count("kept") / total - 0.1) < 5 * (0.09 / total) ** 0.5
    assert abs(fates.count("random") / total - 0.1) < 5 * (0.09 / total) ** 0.5
    assert summary.masked_to_mask == fates.count("mask")
    assert not [t for t in replacements if t in SPECIAL_TOKENS]


def test_next_sentence_labels_are_balanced(tmp_path):
    corpus = SyntheticCorpus(tmp_path, num_documents=30)
    config = corpus.config(dupe_factor=20)
    (output,), summary = generate(tmp_path, corpus.path, config)
    labels = read_records(output, config)["next_sentence_labels"][:, 0]
    assert len(labels) > 1000
    assert labels.mean() == pytest.approx(summary.random_next_share)
    # Above one half, as in the original: a one-sentence chunk always takes a
    # random next.
    assert 0.48 < labels.mean() < 0.62


@pytest.mark.parametrize("per_piece", [False, True])
def test_whole_word_masking_masks_words_together(tmp_path, per_piece):
    corpus = SyntheticCorpus(tmp_path, num_documents=20, suffix_share=0.6)
    config = corpus.config(do_whole_word_mask=True, wwm_decision_per_piece=per_piece,
                           max_predictions_per_seq=8, dupe_factor=10)
    (output,), _ = generate(tmp_path, corpus.path, config)
    features = read_records(output, config)
    mask_id = corpus.tokenizer.vocab["[MASK]"]
    whole_words = mixed_words = 0
    for row in range(len(features["input_ids"])):
        original, a_length, b_length, positions, labels = unpack(features, row)
        label_of = dict(zip(positions.tolist(), labels.tolist(), strict=True))
        for word in words_of(original, a_length, b_length, corpus.is_continuation):
            masked = [p in label_of for p in word]
            assert all(masked) or not any(masked), "a word was masked in part"
            if len(word) > 1 and all(masked):
                whole_words += 1
                fates = {fate(features, row, p, label_of[p], mask_id) for p in word}
                mixed_words += len(fates) > 1
    assert whole_words > 100
    if per_piece:
        assert mixed_words > 0
    else:
        assert mixed_words == 0


def test_without_whole_word_masking_words_are_masked_in_part(tmp_path):
    corpus = SyntheticCorpus(tmp_path, num_documents=20, suffix_share=0.6)
    config = corpus.config(dupe_factor=5)
    (output,), _ = generate(tmp_path, corpus.path, config)
    features = read_records(output, config)
    partial = 0
    for row in range(len(features["input_ids"])):
        original, a_length, b_length, positions, _ = unpack(features, row)
        for word in words_of(original, a_length, b_length, corpus.is_continuation):
            partial += 0 < len(set(word) & set(positions.tolist())) < len(word)
    assert partial > 0


def test_output_is_identical_for_any_number_of_workers(tmp_path):
    corpus = SyntheticCorpus(tmp_path, num_documents=40)
    # A 1 KB window makes several windows, so that their order matters too.
    config = corpus.config(window_mb=0.001)
    one, _ = generate(tmp_path, corpus.path, config, num_outputs=3, num_workers=1, name="one")
    two, summary = generate(tmp_path, corpus.path, config, num_outputs=3, num_workers=2,
                            name="two")
    assert summary.instances > 0
    for path_one, path_two in zip(one, two, strict=True):
        with open(path_one, "rb") as f1, open(path_two, "rb") as f2:
            data = f1.read()
            assert data and data == f2.read()
    other_seed, _ = generate(tmp_path, corpus.path, config.__class__(
        **{**config.__dict__, "random_seed": 8}), name="seed8")
    with open(other_seed[0], "rb") as f1, open(one[0], "rb") as f2:
        assert f1.read() != f2.read()


def test_records_are_dealt_round_robin(tmp_path):
    corpus = SyntheticCorpus(tmp_path)
    config = corpus.config()
    (single,), _ = generate(tmp_path, corpus.path, config, name="single")
    dealt, _ = generate(tmp_path, corpus.path, config, num_outputs=3, name="dealt")
    records = [r.numpy() for r in tf.data.TFRecordDataset(single)]
    for k, path in enumerate(dealt):
        assert [r.numpy() for r in tf.data.TFRecordDataset(path)] == records[k::3]


def test_records_are_shuffled_across_windows(tmp_path):
    """The file is not in corpus order: a window's records are spread over all of it.

    Written window after window, the first half of the file held only the
    first half of the corpus, and a reader that shuffles in a small buffer,
    as the original's does, trained on one part of the corpus at a time.
    """
    corpus = SyntheticCorpus(tmp_path, num_documents=40)
    # A 1 KB window makes several windows.
    config = corpus.config(window_mb=0.001, dupe_factor=2)
    (path,), _ = generate(tmp_path, corpus.path, config)
    features = read_records(path, config)
    documents = []
    for row in range(len(features["input_ids"])):
        original, a_length, _, _, _ = unpack(features, row)
        documents.append(corpus.locate(original[1:a_length + 1].tolist())[0])
    # Rank correlation of the position in the file with the document: about
    # 1 in corpus order, about 0 shuffled.
    positions = np.argsort(np.argsort(documents, kind="stable"))
    correlation = np.corrcoef(np.arange(len(documents)), positions)[0, 1]
    assert len(documents) > 150 and abs(correlation) < 0.2, correlation
    # The file's first half holds records of the last documents too.
    assert max(documents[:len(documents) // 2]) >= 30


class ListReader:
    """A window's records, as interleave_windows reads them."""

    def __init__(self, records):
        self.records = iter(records)

    def next_record(self):
        return next(self.records)


@pytest.mark.parametrize("records_per_draw", [2, 1 << 16])
def test_windows_are_interleaved_uniformly(records_per_draw):
    """Every interleaving of two windows of 3 and 2 records is equally likely."""
    rng = np.random.default_rng(0)
    counts = collections.Counter()
    draws = 6000
    for _ in range(draws):
        readers = [ListReader("abc"), ListReader("de")]
        order = "".join(output.interleave_windows(readers, [3, 2], rng, records_per_draw))
        counts[order] += 1
    # Each window's own order is kept, and all 10 interleavings occur.
    assert all(o.index("a") < o.index("b") < o.index("c") for o in counts)
    assert len(counts) == 10
    # Each one's count within five standard deviations of draws / 10.
    expected = draws / 10
    assert all(abs(c - expected) < 5 * np.sqrt(expected * 0.9) for c in counts.values())


def test_a_single_document_never_pairs_with_itself(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("The keeper wrote the weather.\nGulls circled above the harbour.\n"
                    "The ovens needed an hour to warm up properly.\n" * 3, encoding="utf-8")
    config = PretrainingDataConfig(vocab_file=VOCAB, max_seq_length=24, dupe_factor=10)
    (output,), summary = generate(tmp_path, str(path), config)
    labels = read_records(output, config)["next_sentence_labels"]
    assert summary.instances == len(labels) > 0
    assert not labels.any()
    assert summary.skipped_random_next > 0


def test_an_input_too_short_for_any_instance_is_an_error_and_writes_nothing(tmp_path):
    path = tmp_path / "short.txt"
    # One document without any word piece, then one of a single sentence.
    path.write_text("\x01\x02\n\nThe keeper wrote the weather.\n", encoding="utf-8")
    config = PretrainingDataConfig(vocab_file=VOCAB, dupe_factor=2)
    with pytest.raises(PretrainingDataError, match=(
            f"no instance could be made from {path} \\(1 document\\(s\\), 2 too short to form "
            "a pair\\), so nothing was written: the shortest input that makes one is two "
            "one-sentence documents")):
        generate(tmp_path, str(path), config)
    assert os.listdir(tmp_path) == ["short.txt"]
    # Its shortest fix: a second one-sentence document.
    with open(path, "a", encoding="utf-8") as f:
        f.write("\nGulls circled above the harbour.\n")
    (output,), summary = generate(tmp_path, str(path), config)
    assert summary.instances > 0 and os.path.getsize(output) > 0


def test_cached_tokenization_matches_the_tokenizer():
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
    with open(CORPUS, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    lines += ["The  café,\tNAÏVE keeper!", "gulls\u00a0circled\u2028above", "\x01\x02",
              "lighthouse\u3000水 keeper"]
    tokens, sentence_lengths, _, _ = CachedTokenizer(tokenizer).tokenize_documents([lines])
    expected = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line)) for line in lines]
    assert tokens.tolist() == [i for ids in expected for i in ids]
    assert sentence_lengths.tolist() == [len(ids) for ids in expected if ids]


def test_truncation_matches_the_token_by_token_rule():
    rng = random.Random(0)
    for a_length in range(1, 30):
        for b_length in range(1, 30):
            a, b = list(range(a_length)), list(range(100, 100 + b_length))
            # The original's rule: drop from the longer segment, B on a tie.
            while len(a) + len(b) > 20:
                (a if len(a) > len(b) else b).pop()
            a_start, a_kept, b_start, b_kept, truncated = truncate_pair(
                0, a_length, 100, 100 + b_length, 20, rng)
            assert (a_kept, b_kept, truncated) == (len(a), len(b), a_length + b_length > 20)
            assert 0 <= a_start <= a_length - a_kept and 100 <= b_start <= 100 + b_length - b_kept
    fronts = [truncate_pair(0, 60, 100, 110, 20, rng)[0] for _ in range(2000)]
    # 50 tokens come off A, each from its front with probability 1/2.
    assert abs(np.mean(fronts) - 25) < 5 * (50 * 0.25 / 2000) ** 0.5


@pytest.mark.parametrize("inputs, message", [
    ("missing.txt", "input file not found"),
    ("*.nothing", "no input file matches"),
    (" , ", "no input file given"),
])
def test_missing_input_is_an_error(tmp_path, monkeypatch, inputs, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PretrainingDataError, match=message):
        generate(tmp_path, inputs, PretrainingDataConfig(vocab_file=VOCAB))


def test_empty_input_is_an_error(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("\n\n  \n", encoding="utf-8")
    with pytest.raises(PretrainingDataError, match="holds no text"):
        generate(tmp_path, str(path), PretrainingDataConfig(vocab_file=VOCAB))
    assert os.listdir(tmp_path) == ["empty.txt"]


@pytest.mark.parametrize("content, message", [
    (None, "Cannot read vocab file"),
    (b"", "empty"),
    (b"[CLS]\n\xff\xfe\n", "not UTF-8"),
    (b"[PAD]\n[CLS]\n[SEP]\nthe\n", r"lacks \[MASK\]"),
])
def test_unusable_vocab_is_an_error(tmp_path, content, message):
    vocab = tmp_path / "vocab.txt"
    if content is not None:
        vocab.write_bytes(content)
    with pytest.raises(PretrainingDataError, match=message):
        generate(tmp_path, CORPUS, PretrainingDataConfig(vocab_file=str(vocab)))


def test_non_utf8_input_names_the_file_and_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("The keeper wrote.\n\nThe café opened.\n".encode("latin-1"))
    with pytest.raises(PretrainingDataError, match=rf"{path}:3: .*--errors=replace"):
        generate(tmp_path, str(path), PretrainingDataConfig(vocab_file=VOCAB))
    for errors in ("replace", "ignore"):
        config = PretrainingDataConfig(vocab_file=VOCAB, errors=errors)
        _, summary = generate(tmp_path, str(path), config, name=errors)
        assert summary.documents == 2


@pytest.mark.parametrize("setting, message", [
    ({"max_seq_length": 4}, "cannot hold a pair"),
    ({"max_predictions_per_seq": 0}, "max_predictions_per_seq"),
    ({"masked_lm_prob": 1.5}, "masked_lm_prob"),
    ({"dupe_factor": 0}, "dupe_factor"),
    ({"window_mb": 0}, "window_mb"),
    ({"errors": "skip"}, "errors"),
])
def test_bad_settings_are_errors(setting, message):
    with pytest.raises(ValueError, match=message):
        PretrainingDataConfig(vocab_file=VOCAB, **setting).validate()


def test_unwritable_output_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    config = PretrainingDataConfig(vocab_file=VOCAB)
    with pytest.raises(PretrainingDataError, match="cannot write output file"):
        pretraining_data.create_pretraining_data(CORPUS, str(blocker / "out.tfrecord"), config)
    with pytest.raises(PretrainingDataError, match="is a directory"):
        pretraining_data.create_pretraining_data(CORPUS, str(tmp_path), config)


def test_a_cased_run_on_an_uncased_vocab_is_refused_before_any_work(tmp_path):
    """Every capitalised word would be [UNK]: 4% of an English text's tokens."""
    config = PretrainingDataConfig(vocab_file=VOCAB, do_lower_case=False)
    with pytest.raises(PretrainingDataError, match=(
            f"^--do_lower_case=False, but {VOCAB} has no word piece with a capital letter "
            "\\(an uncased vocab\\): capitalised words would be \\[UNK\\]; pass "
            "--do_lower_case=True$")):
        pretraining_data.create_pretraining_data(CORPUS, str(tmp_path / "out.tfrecord"), config)
    assert os.listdir(tmp_path) == []


def test_a_failed_run_leaves_no_output(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"The keeper wrote.\n\xff\n")
    out = tmp_path / "out"
    # A tiny window writes the good file's records before the bad file fails.
    config = PretrainingDataConfig(vocab_file=VOCAB, window_mb=0.0001)
    with pytest.raises(PretrainingDataError):
        pretraining_data.create_pretraining_data(
            [CORPUS, str(bad)], [str(out / "a.tfrecord"), str(out / "b.tfrecord")], config)
    assert os.listdir(out) == []


def test_the_builder_does_not_import_tensorflow():
    # It must start in a fraction of a second and stay small, in each worker too.
    root = helpers.ROOT
    code = "import sys, bert_tf.pretraining_data; assert 'tensorflow' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)
    # Nor does the script, whose flags are generated from the config (config_flags).
    code = "import sys, create_pretraining_data; assert 'tensorflow' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)
