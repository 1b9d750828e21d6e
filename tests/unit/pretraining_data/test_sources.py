"""Tests for the text the data builder and the vocab learner read: sentences.py, sources.py.

The input formats are written to tmp_path; TensorFlow Datasets text comes
from a tiny data set in TFDS's own prepared layout, written offline in
tmp_path (tests/helpers/tfds_helpers.py), so that TFDS's real reading,
checks and failures run without the network.
"""

import os

import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from bert_tf import pretraining_data
from bert_tf.pretraining_data import (
    PretrainingDataConfig,
    PretrainingDataError,
    TextInputConfig,
    open_text_source,
    split_sentences,
    vocab_learning,
)
from tests import helpers
from tests.helpers import tfds_helpers

VOCAB = os.path.join(helpers.FIXTURES, "pretraining_vocab.txt")

# The documents every layout below holds.
DOCUMENTS = [
    ["The dog ran to the river.", "It was cold!", "Was the water deep?", "Nobody knew."],
    ["A man found a book in the house.", "He read it at night."],
    ["The city has a school.", "People go there."],
]
LAYOUTS = {
    "sentences": {"a.txt": "The dog ran to the river.\nIt was cold!\nWas the water deep?\n"
                           "Nobody knew.\n\nA man found a book in the house.\n"
                           "He read it at night.\n",
                  "b.txt": "The city has a school.\nPeople go there.\n"},
    "paragraphs": {"a.txt": "The dog ran to the river. It was cold!\n"
                            "Was the water deep? Nobody knew.\n\n\n"
                            "A man found a book in the house. He read it at night.\n",
                   "b.txt": "  The city has a school. People go there.  \n\n"},
    "lines": {"a.txt": "The dog ran to the river. It was cold! Was the water deep? "
                       "Nobody knew.\n\nA man found a book in the house. He read it at night.\n",
              "b.txt": "The city has a school. People go there."},
    "files": {"a.txt": "The dog ran to the river. It was cold!\n\nWas the water deep? "
                       "Nobody knew.\n",
              "b.txt": "A man found a book in the house.\nHe read it at night.\n",
              "c.txt": "The city has a school. People go there.\n"},
}


class ManualDocuments(tfds.core.GeneratorBasedBuilder):
    """A TFDS data set that TFDS can only prepare from files downloaded by hand."""

    VERSION = tfds.core.Version("1.0.0")
    MANUAL_DOWNLOAD_INSTRUCTIONS = "Put texts.txt in the manual folder."

    def _info(self):
        return tfds.core.DatasetInfo(
            builder=self, features=tfds.features.FeaturesDict({"text": tfds.features.Text()}))

    def _split_generators(self, dl_manager):
        return {"train": self._generate_examples(dl_manager.manual_dir / "texts.txt")}

    def _generate_examples(self, path):
        for number, text in enumerate(path.read_text().splitlines()):
            yield number, {"text": text}


@pytest.fixture(scope="module")
def tfds_dir(tmp_path_factory):
    """A TFDS data folder holding tiny_documents (tfds_helpers.TEXTS), prepared."""
    return tfds_helpers.write_text_dataset(tmp_path_factory.mktemp("tfds"))


def write_layout(directory, layout):
    """Writes a layout's files; returns their glob."""
    for name, text in LAYOUTS[layout].items():
        (directory / name).write_text(text, encoding="utf-8")
    return str(directory / "*.txt")


def read(input_patterns, errors="strict", **settings):
    """The documents a source reads, sentences only."""
    source = open_text_source(input_patterns, TextInputConfig(**settings))
    return [sentences for sentences, _ in source.documents(errors)]


# The sentence splitter.

def test_sentences_end_at_a_stop_before_a_capital_on_every_line():
    text = ("The first document starts here. It has two sentences!\n"
            "A second line? Yes.\n\n  Spaces around are dropped.  ")
    assert split_sentences(text) == [
        "The first document starts here.", "It has two sentences!", "A second line?", "Yes.",
        "Spaces around are dropped."]


def test_quotes_and_brackets_stay_with_their_sentence():
    text = ('He stopped. "Why now?" she asked. (It was late.) Then they left. '
            "\u201cNo,\u201d he said. \u2018Fine.\u2019 She went.")
    assert split_sentences(text) == [
        "He stopped.", '"Why now?" she asked.', "(It was late.)", "Then they left.",
        "\u201cNo,\u201d he said.", "\u2018Fine.\u2019", "She went."]


def test_abbreviations_before_a_capital_are_split_and_others_are_not():
    # The rule knows no abbreviations: before a capital they end a sentence.
    assert split_sentences("Dr. Smith met J. Doe at 5 p.m. on Monday. The U.S. Army came.") == [
        "Dr.", "Smith met J.", "Doe at 5 p.m. on Monday.", "The U.S.", "Army came."]


def test_no_split_before_a_digit_or_lower_case_or_inside_numbers():
    text = "It ended in 1990. 2001 came next, e.g. in spring. Pi is 3.14. That is all."
    assert split_sentences(text) == [
        "It ended in 1990. 2001 came next, e.g. in spring.", "Pi is 3.14.", "That is all."]


def test_capitals_of_other_scripts_start_sentences_and_caseless_text_is_kept_whole():
    assert split_sentences("Il a dit non. \u00c9lise est partie. \u0416\u0434\u0438!") == [
        "Il a dit non.", "\u00c9lise est partie.", "\u0416\u0434\u0438!"]
    assert split_sentences("\u4eca\u5929\u4e0b\u96e8\u3002\u6211\u5728\u5bb6\u3002") == [
        "\u4eca\u5929\u4e0b\u96e8\u3002\u6211\u5728\u5bb6\u3002"]
    assert split_sentences(" \n\n \t") == []


# The input formats.

@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_input_format_reads_the_same_documents(tmp_path, layout):
    assert read(write_layout(tmp_path, layout), input_format=layout) == DOCUMENTS


def test_the_original_format_is_read_as_it_is_without_splitting(tmp_path):
    (tmp_path / "a.txt").write_text("Two. Sentences on a line.\nA second line\n\nNext one.\n")
    source = open_text_source(str(tmp_path / "a.txt"), TextInputConfig())
    assert list(source.documents("strict")) == [
        (["Two. Sentences on a line.", "A second line"], 40), (["Next one."], 10)]


def test_max_documents_and_bytes_of_plain_text(tmp_path):
    pattern = write_layout(tmp_path, "lines")
    source = open_text_source(pattern, TextInputConfig(input_format="lines", max_documents=2))
    documents = list(source.documents("strict"))
    assert [sentences for sentences, _ in documents] == DOCUMENTS[:2]
    first_line = LAYOUTS["lines"]["a.txt"].split("\n")[0]
    assert documents[0][1] == len(first_line.encode()) + 1


def test_bytes_that_are_not_utf8_name_the_file_and_line(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"Fine. Good.\nBad \xff byte. Here.\n")
    with pytest.raises(PretrainingDataError, match=r"a.txt:2: byte 5 of the line is not UTF-8"):
        read(str(tmp_path / "a.txt"), input_format="paragraphs")
    assert read(str(tmp_path / "a.txt"), "replace", input_format="paragraphs") == [
        ["Fine.", "Good.", "Bad \ufffd byte.", "Here."]]


# TensorFlow Datasets.

def test_a_tfds_data_set_is_read_offline_each_example_a_document(tfds_dir):
    documents = read(None, tfds_name="tiny_documents", tfds_data_dir=tfds_dir)
    assert documents == DOCUMENTS  # the empty example is left out
    assert len(tfds_helpers.TEXTS) == len(DOCUMENTS) + 1
    assert read(None, tfds_name="tiny_documents", tfds_data_dir=tfds_dir,
                tfds_split="train[1:]", max_documents=1) == DOCUMENTS[1:2]
    source = open_text_source(None, TextInputConfig(tfds_name="tiny_documents",
                                                    tfds_data_dir=tfds_dir))
    assert source.files == ()
    assert source.describe() == "TensorFlow Datasets tiny_documents, split train, feature text"


@pytest.mark.parametrize("settings, message", [
    ({"tfds_name": "no_such_data_set"},
     "--tfds_name=no_such_data_set: Dataset no_such_data_set not found."),
    ({"tfds_name": "tiny_documents", "tfds_text_feature": "body"},
     "--tfds_text_feature=body: tiny_documents has no such feature; its features: stars, text"),
    ({"tfds_name": "tiny_documents", "tfds_text_feature": "stars"},
     "--tfds_text_feature=stars: tiny_documents's stars is a Scalar, not text"),
    ({"tfds_name": "tiny_documents", "tfds_split": "validation"},
     "--tfds_split=validation: "),
])
def test_a_bad_tfds_setting_is_one_line_naming_its_flag(tfds_dir, settings, message):
    with pytest.raises(PretrainingDataError) as raised:
        read(None, tfds_data_dir=tfds_dir, **settings)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_a_tfds_data_set_that_cannot_be_prepared_offline_says_so(tmp_path):
    with pytest.raises(PretrainingDataError) as raised:
        read(None, tfds_name="manual_documents", tfds_data_dir=str(tmp_path))
    message = str(raised.value)
    assert message.startswith(
        f"--tfds_name=manual_documents is not prepared in {tmp_path}/manual_documents/1.0.0 "
        "and TensorFlow Datasets could not prepare it: ")
    assert "\n" not in message


@pytest.mark.parametrize("patterns, settings, message", [
    (None, {}, "give the text: --input_file or --tfds_name"),
    ("a.txt", {"tfds_name": "tiny_documents"}, "give --input_file or --tfds_name, not both"),
])
def test_the_text_comes_from_files_or_tfds(patterns, settings, message):
    with pytest.raises(PretrainingDataError, match=message):
        open_text_source(patterns, TextInputConfig(**settings))


def test_an_unknown_input_format_is_refused():
    with pytest.raises(ValueError, match="input_format must be one of sentences, paragraphs, "
                       "lines, files, got 'words'"):
        PretrainingDataConfig(vocab_file=VOCAB,
                              text_input=TextInputConfig(input_format="words")).validate()


# Both consumers read through the same source.

def test_the_data_builder_and_the_vocab_learner_read_tfds_and_plain_text(tmp_path, tfds_dir):
    text_input = TextInputConfig(tfds_name="tiny_documents", tfds_data_dir=tfds_dir)
    output = str(tmp_path / "records.tfrecord")
    config = PretrainingDataConfig(vocab_file=VOCAB, max_seq_length=32, dupe_factor=2,
                                   max_predictions_per_seq=5, text_input=text_input)
    summary = pretraining_data.create_pretraining_data(None, output, config)
    assert summary.documents == 3 and summary.input_tokens > 0
    assert summary.instances == sum(1 for _ in tf.data.TFRecordDataset(output)) > 0

    vocab_config = vocab_learning.VocabLearningConfig(vocab_size=200, min_count=1,
                                                      text_input=text_input)
    learned = vocab_learning.learn_vocab_file(None, str(tmp_path / "vocab.txt"), vocab_config)
    assert learned.lines == sum(len(document) for document in DOCUMENTS)

    plain = vocab_learning.VocabLearningConfig(
        vocab_size=200, min_count=1, text_input=TextInputConfig(input_format="paragraphs"))
    (tmp_path / "text").mkdir()
    from_files = vocab_learning.learn_vocab_file(
        write_layout(tmp_path / "text", "paragraphs"), str(tmp_path / "vocab2.txt"), plain)
    assert from_files.lines == learned.lines and from_files.words == learned.words
