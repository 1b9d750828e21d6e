"""Classifies raw sentences with a SavedModel that run_classifier.py --export_dir wrote.

  python predict_text.py --export_dir=/tmp/sst2_model "A gripping film." "Dull and long."
  python predict_text.py --export_dir=/tmp/mrpc_model --pair "He said yes." "He agreed."
  python predict_text.py --export_dir=/tmp/sst2_model --input_file=reviews.txt \\
    --output_file=labels.tsv

With --pair, the sentences are taken two at a time as (text_a, text_b), or
from --input_file's lines as text_a<TAB>text_b. --input_file=- reads stdin.
The model is loaded once and run --batch_size sentences at a time; the
lines of each batch are written as soon as it is done, and progress is
logged every few seconds.

Each line is: the predicted class, the probabilities, the sentence (tabs,
newlines and control characters in it written as backslash escapes, so that
they cannot break the line), in input order. An empty sentence is
classified, with a warning.
"""

from absl import flags

from bert_tf import cli, export, io_utils, text_input

flags.DEFINE_string("export_dir", None, "The SavedModel folder.")
flags.DEFINE_bool("pair", False, "Read the sentences as (text_a, text_b) pairs: two arguments "
                  "each, or --input_file lines text_a<TAB>text_b.")
text_input.define_flags()
flags.adopt_module_key_flags(text_input)
flags.mark_flag_as_required("export_dir")
FLAGS = flags.FLAGS


def main(argv):
    names = ("text_a", "text_b") if FLAGS.pair else ("text_a",)
    texts = text_input.TextInput(argv[1:], FLAGS.input_file, names)
    signature = "pair" if FLAGS.pair else "single"
    with io_utils.atomic_write_or_stdout(FLAGS.output_file) as out:
        for inputs, outputs in export.run_batches(FLAGS.export_dir, signature,
                                                  texts.batches(FLAGS.batch_size),
                                                  "ClassificationTask", names):
            shown = [" ||| ".join(pair) for pair in zip(*inputs.values(), strict=True)]
            for text, prediction, probabilities in zip(
                    shown, outputs["predictions"], outputs["probabilities"], strict=True):
                out.write(f"{prediction}\t{' '.join(f'{p:.3f}' for p in probabilities)}\t"
                          f"{cli.printable(text)}\n")
            out.flush()


if __name__ == "__main__":
    cli.run(main)
