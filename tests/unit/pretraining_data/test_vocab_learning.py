"""Tests for learning a WordPiece vocabulary: pretraining_data.vocab_learning, learn_vocab.py.

The library is tested in process on the data builder's tiny fixture corpus
(tests/fixtures/pretraining_corpus.txt, 53 lines) with small vocab sizes;
the script runs in a subprocess as a user runs it, and its vocab.txt then
goes through create_pretraining_data and run_pretraining.py unchanged.
"""

import collections
import os
import re
import subprocess
import sys

import pytest
import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from bert_tf import pretraining_data
from bert_tf.model.config import BertConfig
from bert_tf.pretraining_data import vocab_learning
from bert_tf.text import tokenization
from tests import helpers

ROOT = helpers.ROOT
CORPUS = os.path.join(ROOT, "tests", "fixtures", "pretraining_corpus.txt")
# bert-base-uncased's first tokens: [PAD], 99 unused slots, then the four specials.
BERT_BASE_HEAD = (["[PAD]"] + [f"[unused{i}]" for i in range(99)]
                  + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"])


def learn(tmp_path, text=None, **settings):
    """Learns a vocab from text (default: the fixture corpus); returns (vocab, summary)."""
    if text is None:
        corpus = CORPUS
    else:
        corpus = str(tmp_path / "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write(text)
    output = str(tmp_path / "vocab.txt")
    settings.setdefault("min_count", 2)
    config = vocab_learning.VocabLearningConfig(**settings)
    summary = vocab_learning.learn_vocab_file(corpus, output, config)
    return list(tokenization.load_vocab(output)), summary


def test_special_tokens_at_bert_base_uncaseds_ids(tmp_path):
    vocab, _ = learn(tmp_path, vocab_size=300)
    assert vocab[:104] == BERT_BASE_HEAD
    assert not any(token.startswith("[") and token.endswith("]") and len(token) > 1
                   for token in vocab[104:])


def test_994_unused_slots_give_bert_base_uncaseds_reserved_block(tmp_path, minilm_folder):
    vocab, _ = learn(tmp_path, vocab_size=1200, num_unused=994)
    real = list(tokenization.load_vocab(os.path.join(minilm_folder, "vocab.txt")))
    assert len(real) == 30522
    # The same 999 tokens at the same ids; the learned pieces start after them.
    assert vocab[:999] == real[:999]
    assert not vocab[999].startswith("[")


def test_fewer_unused_slots_keep_the_order(tmp_path):
    vocab, _ = learn(tmp_path, vocab_size=200, num_unused=2)
    assert vocab[:7] == ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_target_size_is_reached_within_the_learners_slack(tmp_path):
    vocab, summary = learn(tmp_path, vocab_size=260, min_count=1)
    assert 0.95 * 260 <= len(vocab) <= 260
    assert summary.vocab_size == len(vocab)
    assert len(set(vocab)) == len(vocab)
    assert f"vocab written: {len(vocab)} tokens (target 260)" in summary.describe()


def test_a_target_the_text_cannot_fill_says_why(tmp_path):
    vocab, summary = learn(tmp_path, vocab_size=5000, min_count=3)
    assert len(vocab) < 0.95 * 5000
    assert "no more pieces seen at least min_count=3 times" in summary.shortfall
    assert summary.shortfall in summary.describe()


@pytest.mark.parametrize("vocab_size, min_count", [(200, 1), (300, 2), (400, 3)])
def test_the_logged_search_gives_tensorflow_texts_own_result(vocab_size, min_count):
    basic = tokenization.BasicTokenizer()
    counts = collections.Counter()
    with open(CORPUS, encoding="utf-8") as f:
        for line in f:
            counts.update(basic.tokenize(line))
    config = vocab_learning.VocabLearningConfig(vocab_size=vocab_size, min_count=min_count)
    ours, _ = vocab_learning.learn_vocab(counts, config)
    theirs = learner.learn(counts, vocab_size, vocab_learning.reserved_tokens(99),
                           lower_thresh=min_count)
    assert ours == theirs


def test_an_oversized_result_loses_its_rarest_pieces_never_a_character():
    # Every word seen once, min_count=1: the learner's search has no threshold
    # left to try and returns every word and piece, far above the target.
    words = [a + b + c for a in "bcdfg" for b in "aeiou" for c in "lmnprst"]
    config = vocab_learning.VocabLearningConfig(vocab_size=140, min_count=1, num_unused=0)
    vocab, shortfall = vocab_learning.learn_vocab(dict.fromkeys(words, 1), config)
    assert len(vocab) == 140 and shortfall == ""
    characters = set("bcdfgaeioulmnprst")
    assert characters | {"##" + char for char in characters} <= set(vocab)
    wordpiece = tokenization.WordpieceTokenizer({token: i for i, token in enumerate(vocab)})
    assert "[UNK]" not in wordpiece.tokenize(" ".join(words))


def test_every_character_is_kept_as_a_start_and_a_continuation(tmp_path):
    vocab, summary = learn(tmp_path, vocab_size=300)
    characters = {char for line in open(CORPUS, encoding="utf-8")
                  for word in tokenization.BasicTokenizer().tokenize(line) for char in word}
    assert characters <= set(vocab)
    assert {"##" + char for char in characters} <= set(vocab)
    assert summary.num_characters == len(characters)
    assert summary.unknown_words == 0
    # Learned pieces beyond the characters: whole words and ## pieces.
    assert summary.num_word_starts > 0 and summary.num_continuations > 0


def test_held_out_words_tokenize_without_unk_but_for_unseen_characters(tmp_path):
    with open(CORPUS, encoding="utf-8") as f:
        lines = f.read().splitlines()
    learned_on, held_out = lines[:40], lines[40:]
    vocab, _ = learn(tmp_path, "\n".join(learned_on) + "\n", vocab_size=300)
    seen = {char for char in " ".join(learned_on).lower()}
    tokenizer = tokenization.FullTokenizer(str(tmp_path / "vocab.txt"), do_lower_case=True)
    words = tokenizer.basic_tokenizer.tokenize(" ".join(held_out) + " kayak жук")
    unknown = [word for word in words if tokenizer.tokenize(word) == ["[UNK]"]]
    assert unknown == [word for word in words if not set(word) <= seen]
    assert "жук" in unknown and "kayak" not in unknown


def test_casing_flag(tmp_path):
    text = "The Keeper met Anna.\nThe Keeper met Anna again.\n" * 3
    lower, _ = learn(tmp_path, text, vocab_size=200, min_count=2)
    assert "keeper" in lower and "Keeper" not in lower
    assert tokenization.case_mismatch_with_vocab(True, dict.fromkeys(lower), "v") is None
    cased, _ = learn(tmp_path, text, vocab_size=200, min_count=2, do_lower_case=False)
    assert {"Keeper", "Anna", "The"} <= set(cased) and "keeper" not in cased


def test_words_are_bert_tfs_basic_tokens(tmp_path):
    # Accents stripped when lower-casing, punctuation and CJK ideographs split.
    text = "Café, café! 東京 naïve.\n" * 3
    vocab, summary = learn(tmp_path, text, vocab_size=150, min_count=2)
    assert {"cafe", ",", "!", "東", "京", "naive", "."} <= set(vocab)
    assert "café" not in vocab and "東京" not in vocab
    assert summary.words == 3 * 8


def test_max_lines_reads_a_sample(tmp_path):
    _, summary = learn(tmp_path, vocab_size=300, max_lines=10)
    assert summary.lines == 10


@pytest.mark.parametrize("settings, text, message", [
    ({"vocab_size": 120}, None,
     r"vocab_size=120 is too small: the 104 special and unused tokens and the input's \d+ "
     r"characters \(each also as a ## piece\) need \d+"),
    ({"vocab_size": 300}, "\n \n\n", "the input holds no words"),
    ({"vocab_size": 0}, None, "vocab_size must be at least 1, got 0"),
])
def test_bad_settings_and_input_are_clear_errors(tmp_path, settings, text, message):
    with pytest.raises(vocab_learning.VocabLearningError, match=message):
        learn(tmp_path, text, **settings)
    assert not os.path.exists(tmp_path / "vocab.txt")


def test_a_missing_input_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="input file not found: missing.txt"):
        vocab_learning.learn_vocab_file("missing.txt", str(tmp_path / "vocab.txt"),
                                        vocab_learning.VocabLearningConfig())


@pytest.mark.slow
def test_script_output_feeds_the_data_builder_and_pretraining(tmp_path):
    vocab_file = str(tmp_path / "model" / "vocab.txt")
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "learn_vocab.py"), f"--input_file={CORPUS}",
         f"--output_file={vocab_file}", "--vocab_size=250", "--min_count=2", "--num_unused=10"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True,
        timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    for statistic in ("vocab written:", "word pieces per word", "of the words whole",
                      "word starts", "## pieces"):
        assert statistic in result.stderr
    vocab_size = len(tokenization.load_vocab(vocab_file))
    assert vocab_size <= 250

    # The data builder, as create_pretraining_data.py calls it.
    records = str(tmp_path / "train.tfrecord")
    summary = pretraining_data.create_pretraining_data(
        CORPUS, records, pretraining_data.PretrainingDataConfig(
            vocab_file=vocab_file, max_seq_length=32, max_predictions_per_seq=5,
            dupe_factor=2))
    assert summary.instances == sum(1 for _ in tf.data.TFRecordDataset(records)) > 0

    # A tiny model whose embedding has one row per line of the vocab.
    config_file = str(tmp_path / "model" / "bert_config.json")
    BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2,
               num_attention_heads=2, intermediate_size=64, max_position_embeddings=32,
               type_vocab_size=2).to_json_file(config_file)
    output_dir = str(tmp_path / "pretraining")
    trained = subprocess.run(
        [sys.executable, os.path.join(ROOT, "run_pretraining.py"), f"--input_file={records}",
         f"--output_dir={output_dir}", f"--bert_config_file={config_file}", "--do_train",
         "--train_batch_size=4", "--max_seq_length=32", "--max_predictions_per_seq=5",
         "--num_train_steps=2", "--num_warmup_steps=1", "--iterations_per_loop=2",
         "--jit_compile=false"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT, "CUDA_VISIBLE_DEVICES": "-1"},
        capture_output=True, text=True, timeout=300, check=False)
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert re.search(r"step 2/2  loss [0-9.]+", trained.stderr)
    assert tf.train.latest_checkpoint(output_dir).endswith("ckpt-2")


def test_an_output_that_is_an_input_is_refused_before_anything_is_written(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Some text here.\n", encoding="utf-8")
    # A ValueError: cli.run prints it as one line, "learn_vocab.py: error: ...".
    with pytest.raises(vocab_learning.VocabLearningError,
                       match=f"output file {corpus} is also an input file"):
        vocab_learning.learn_vocab_file(str(tmp_path / "*.txt"), str(corpus),
                                        vocab_learning.VocabLearningConfig())
    assert corpus.read_text(encoding="utf-8") == "Some text here.\n"
