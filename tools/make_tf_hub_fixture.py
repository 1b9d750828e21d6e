"""Makes tests/fixtures/tf_hub_encoder/: a tiny BERT encoder as TF Hub publishes them.

TF Hub's BERT encoders (bert_en_uncased_L-12_H-768_A-12 and the Small BERTs)
were exported by TF Model Garden's export_tfhub_lib from a BertEncoder, whose
weights have other names and shapes than bert_tf's own export. This tool
exports a random 2-layer, hidden-32 BertEncoder that way, with a 100-token
vocab, and saves its outputs on a few id sequences beside it
(reference.npz), so tests/unit/checkpoints/test_tf_hub.py checks that --init_checkpoint reads
such an encoder with the same outputs. The tool needs tf-models-official and
gin-config, which bert_tf never uses; the test needs neither. Run it with
tf-keras installed:

  pip install --no-deps --target /tmp/tfm tf-models-official==2.20.0 gin-config
  PYTHONPATH=/tmp/tfm TF_USE_LEGACY_KERAS=1 python -m tools.make_tf_hub_fixture
"""

import argparse
import os
import shutil
import tempfile

os.environ["TF_USE_LEGACY_KERAS"] = "1"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from official.legacy.bert import configs  # noqa: E402
from official.nlp.tools import export_tfhub_lib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "tests", "fixtures", "tf_hub_encoder")
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=OUTPUT)
    args = parser.parse_args()

    tf.keras.utils.set_random_seed(0)
    words = [f"w{i}" for i in range(100 - len(SPECIAL))]
    config = configs.BertConfig(
        vocab_size=len(SPECIAL) + len(words), hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, hidden_act="gelu",
        max_position_embeddings=64, type_vocab_size=2)
    with tempfile.TemporaryDirectory() as work:
        vocab = os.path.join(work, "vocab.txt")
        with open(vocab, "w", encoding="utf-8") as f:
            f.write("\n".join(SPECIAL + words) + "\n")
        _, encoder = export_tfhub_lib._create_model(bert_config=config, with_mlm=False)
        checkpoint = tf.train.Checkpoint(encoder=encoder).save(os.path.join(work, "ckpt"))
        if os.path.exists(args.output):
            shutil.rmtree(args.output)
        export_tfhub_lib.export_model(args.output, bert_config=config,
                                      model_checkpoint_path=checkpoint, with_mlm=False,
                                      vocab_file=vocab, do_lower_case=True)

    # Outputs of the SavedModel itself, as a user loads it.
    rng = np.random.default_rng(0)
    lengths = [12, 7, 3]
    input_ids = rng.integers(5, 100, size=(3, 12)).astype(np.int32)
    input_mask = np.array([[1] * n + [0] * (12 - n) for n in lengths], np.int32)
    input_type_ids = np.array([[0] * (n // 2) + [1] * (12 - n // 2) for n in lengths],
                              np.int32) * input_mask
    input_ids *= input_mask
    loaded = tf.saved_model.load(args.output)
    outputs = loaded({"input_word_ids": input_ids, "input_mask": input_mask,
                      "input_type_ids": input_type_ids}, training=False)
    np.savez(os.path.join(args.output, "reference.npz"), input_ids=input_ids,
             input_mask=input_mask, segment_ids=input_type_ids,
             pooled_output=outputs["pooled_output"].numpy(),
             sequence_output=outputs["sequence_output"].numpy())
    print(f"Wrote {args.output}")


if __name__ == "__main__":
    main()
