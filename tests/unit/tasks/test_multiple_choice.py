"""Tests for bert_tf/tasks/multiple_choice.py: records of [choices, seq], read and learnt.

The worked example of README's "Adding a task": a family whose records hold
several sequences. They are written flat by tfrecord.write_examples, read
back as [batch, choices, seq] by input_pipeline.finetuning_dataset (padding
cut from every choice alike), and finetune.run, given the task and a
FinetuneData of generated questions, trains a tiny model that learns to pick
the right choice.
"""

import os

import numpy as np
import pytest

from bert_tf import configs, finetune, io_utils
from bert_tf.data import protocol, swag
from bert_tf.model.config import BertConfig
from bert_tf.records import input_pipeline, tfrecord
from bert_tf.tasks import MultipleChoiceTask

CHOICES, SEQ, VOCAB = 3, 32, 30
# The right ending holds this token; the wrong ones do not.
CLUE = 7


def _records(count, seed):
    """Questions whose right ending holds CLUE, each choice 4 to 12 tokens long."""
    rng = np.random.default_rng(seed)
    records = []
    for _ in range(count):
        label = int(rng.integers(CHOICES))
        record = {"input_ids": np.zeros((CHOICES, SEQ), np.int64),
                  "input_mask": np.zeros((CHOICES, SEQ), np.int64),
                  "segment_ids": np.zeros((CHOICES, SEQ), np.int64),
                  "label_ids": [label], "is_real_example": [1]}
        for choice in range(CHOICES):
            length = int(rng.integers(4, 13))
            ids = rng.integers(8, VOCAB, size=length)
            ids[0], ids[-1] = 101 % VOCAB, 102 % VOCAB
            if choice == label:
                ids[int(rng.integers(1, length - 1))] = CLUE
            record["input_ids"][choice, :length] = ids
            record["input_mask"][choice, :length] = 1
            record["segment_ids"][choice, length // 2:length] = 1
        records.append(record)
    return records


def _write(path, records, task):
    with io_utils.atomic_write(path, "wb") as f:
        tfrecord.write_examples(f, records, task.feature_specs())


def test_records_come_back_as_batch_choices_seq_with_padding_cut_from_every_choice(tmp_path):
    task = MultipleChoiceTask(swag.SwagSettings(SEQ, CHOICES))
    records = _records(8, seed=0)
    path = str(tmp_path / "train.tfrecord")
    _write(path, records, task)
    dataset = input_pipeline.finetuning_dataset(path, 4, False, task.feature_specs(),
                                                trim_to_multiple_of=16)
    batches = list(dataset)
    assert len(batches) == 2
    for i, batch in enumerate(batches):
        # Every choice is at most 12 tokens: cut to 16 of the 32 columns.
        assert batch["input_ids"].shape == (4, CHOICES, 16)
        assert batch["label_ids"].shape == (4, 1)
        for name in ("input_ids", "input_mask", "segment_ids"):
            expected = np.stack([r[name][:, :16] for r in records[4 * i:4 * i + 4]])
            np.testing.assert_array_equal(batch[name], expected)
        np.testing.assert_array_equal(batch["label_ids"][:, 0],
                                      [r["label_ids"][0] for r in records[4 * i:4 * i + 4]])


class GeneratedQuestions(protocol.FinetuneData):
    """The data side of the family: generated splits of _records()."""

    def __init__(self, sizes):
        self.sizes = sizes
        self.splits = {}

    def read(self, splits):
        for split in splits:
            self.splits.setdefault(split, _records(self.sizes[split], seed=len(self.splits)))

    def num_train_examples(self):
        return len(self.splits["train"])

    def describe(self, split):
        return f"{len(self.splits[split])} questions"

    def records(self, split):
        return self.splits[split]

    def task_settings(self):
        return {"choices": CHOICES}

    def training_settings(self):
        return {"train_questions": self.sizes["train"]}

    def references(self, split):
        # The right choices, as SWAG's data gives them.
        return swag.SwagReferences([record["label_ids"][0] for record in self.splits[split]],
                                   examples=[])

    def score(self, predictions, references):
        return swag.choice_scores(predictions["predictions"], references.labels)


@pytest.mark.slow
def test_finetune_run_trains_the_family_and_it_learns_to_pick_the_right_choice(tmp_path):
    config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=SEQ, type_vocab_size=2)
    config.to_json_file(str(tmp_path / "bert_config.json"))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"[unused{i}]\n" for i in range(VOCAB)), encoding="utf-8")
    output_dir = tmp_path / "run"
    run = configs.FinetuneConfig(
        run=configs.RunSettings(output_dir=str(output_dir), do_train=True, do_eval=True),
        model=configs.ModelSettings(bert_config_file=str(tmp_path / "bert_config.json"),
                                    max_seq_length=SEQ),
        vocab=configs.VocabSettings(vocab_file=str(vocab)),
        batches=configs.BatchSizes(train_batch_size=16, eval_batch_size=16),
        optimizer=configs.OptimizerSettings(learning_rate=3e-3), num_train_epochs=10,
        padding=configs.PaddingSettings(dynamic_padding=True),
        runtime=configs.RuntimeSettings(seed=1))
    files, runtime = finetune.start(run)
    data = GeneratedQuestions({"train": 256, "dev": 64})
    finetune.run(run, MultipleChoiceTask(swag.SwagSettings(SEQ, CHOICES)), data, files, runtime)

    with open(os.path.join(output_dir, "eval_results.txt"), encoding="utf-8") as f:
        results = dict(line.strip().split(" = ") for line in f)
    assert int(results["global_step"]) == 160
    # Chance is 1/3.
    assert float(results["eval_accuracy"]) > 0.9
