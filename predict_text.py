"""Classifies raw sentences with a SavedModel that run_classifier.py --export_dir wrote.

  python predict_text.py --export_dir=/tmp/sst2_model "A gripping film." "Dull and long."
  python predict_text.py --export_dir=/tmp/mrpc_model --pair "He said yes." "He agreed."

With --pair, the sentences are taken two at a time as (text_a, text_b).
Each line is: the predicted class, the probabilities, the sentence (tabs,
newlines and control characters in it written as backslash escapes, so that
they cannot break the line). An empty sentence is classified, with a warning.
"""

import sys

from absl import app, flags

from bert_tf import cli, export

flags.DEFINE_string("export_dir", None, "The SavedModel folder.")
flags.DEFINE_bool("pair", False, "Read the sentences as (text_a, text_b) pairs.")
flags.mark_flag_as_required("export_dir")
FLAGS = flags.FLAGS


def main(argv):
    sentences = cli.text_arguments(argv[1:])
    if not sentences:
        raise app.UsageError("give the sentences to classify as arguments")
    if FLAGS.pair and len(sentences) % 2:
        raise app.UsageError("--pair needs an even number of sentences")
    for number, text in enumerate(sentences, start=1):
        if not text.strip():
            print(f"predict_text.py: warning: argument {number} is empty; its prediction "
                  "reflects no text", file=sys.stderr)
    if FLAGS.pair:
        firsts, seconds = sentences[0::2], sentences[1::2]
        outputs = export.run_signature(FLAGS.export_dir, "pair", text_a=firsts, text_b=seconds)
        shown = [f"{a} ||| {b}" for a, b in zip(firsts, seconds, strict=True)]
    else:
        outputs = export.run_signature(FLAGS.export_dir, "single", text_a=sentences)
        shown = sentences
    for text, prediction, probabilities in zip(
            shown, outputs["predictions"], outputs["probabilities"], strict=True):
        print(f"{prediction}\t{' '.join(f'{p:.3f}' for p in probabilities)}\t"
              f"{cli.printable(text)}")


if __name__ == "__main__":
    cli.run(main)
