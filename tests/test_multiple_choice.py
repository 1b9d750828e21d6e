"""Tests for bert_tf/tasks/multiple_choice.py: records of [choices, seq], read and learnt.

The worked example of a family whose records hold several sequences: they
are written flat by tfrecord.write_examples, read back as [batch, choices,
seq] by input_pipeline.finetuning_dataset (padding cut from every choice
alike), and a tiny model learns to pick the right choice.
"""

import numpy as np
import tensorflow as tf

from bert_tf import input_pipeline, io_utils, tfrecord
from bert_tf.config import BertConfig
from bert_tf.modeling import BertModel
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
    task = MultipleChoiceTask(CHOICES, SEQ)
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


def test_a_tiny_model_learns_to_pick_the_right_choice(tmp_path):
    tf.keras.utils.set_random_seed(1)
    task = MultipleChoiceTask(CHOICES, SEQ)
    config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=SEQ, type_vocab_size=2)
    encoder = BertModel(config)
    heads = task.create_heads(encoder)
    path = str(tmp_path / "train.tfrecord")
    _write(path, _records(256, seed=2), task)
    optimizer = tf.keras.optimizers.Adam(3e-3)
    variables = encoder.trainable_variables + heads["classifier"].trainable_variables

    @tf.function
    def step(batch):
        with tf.GradientTape() as tape:
            loss = task.losses(batch, task.forward(encoder, heads, batch, training=True))["loss"]
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
        return loss

    train = input_pipeline.finetuning_dataset(path, 16, True, task.feature_specs(), seed=3,
                                              trim_to_multiple_of=16)
    for batch in train.take(150):
        step(batch)

    test = _records(64, seed=4)
    test_path = str(tmp_path / "test.tfrecord")
    _write(test_path, test, task)
    probabilities = []
    for batch in input_pipeline.finetuning_dataset(test_path, 16, False, task.feature_specs()):
        outputs = task.forward(encoder, heads, batch, training=False)
        predictions = task.predictions(batch, outputs)
        assert predictions["predictions"].shape == (16, CHOICES)
        probabilities.append(predictions["predictions"].numpy())
    scores = task.score({"predictions": np.concatenate(probabilities)},
                        [r["label_ids"][0] for r in test])
    # Chance is 1/3.
    assert scores["eval_accuracy"] > 0.9
