"""Classifies raw sentences with a SavedModel that run_classifier.py --export_dir wrote.

  python predict_text.py --export_dir=/tmp/sst2_model "A gripping film." "Dull and long."
  python predict_text.py --export_dir=/tmp/mrpc_model --pair "He said yes." "He agreed."

With --pair, the sentences are taken two at a time as (text_a, text_b).
"""

import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the SavedModel tokenizes with)
from absl import app, flags

flags.DEFINE_string("export_dir", None, "The SavedModel folder.")
flags.DEFINE_bool("pair", False, "Read the sentences as (text_a, text_b) pairs.")
flags.mark_flag_as_required("export_dir")
FLAGS = flags.FLAGS


def main(argv):
    sentences = argv[1:]
    if not sentences:
        raise app.UsageError("give the sentences to classify as arguments")
    if FLAGS.pair and len(sentences) % 2:
        raise app.UsageError("--pair needs an even number of sentences")
    model = tf.saved_model.load(FLAGS.export_dir)
    if FLAGS.pair:
        firsts, seconds = sentences[0::2], sentences[1::2]
        outputs = model.signatures["pair"](text_a=tf.constant(firsts),
                                           text_b=tf.constant(seconds))
        shown = [f"{a} ||| {b}" for a, b in zip(firsts, seconds, strict=True)]
    else:
        outputs = model.signatures["single"](text_a=tf.constant(sentences))
        shown = sentences
    for text, prediction, probabilities in zip(
            shown, outputs["predictions"].numpy(), outputs["probabilities"].numpy(),
            strict=True):
        print(f"{prediction}\t{' '.join(f'{p:.3f}' for p in probabilities)}\t{text}")


if __name__ == "__main__":
    app.run(main)
