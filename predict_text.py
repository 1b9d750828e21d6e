"""Classifies raw sentences with a SavedModel that run_classifier.py --export_dir wrote.

  python predict_text.py --export_dir=/tmp/sst2_model "A gripping film." "Dull and long."
  python predict_text.py --export_dir=/tmp/mrpc_model --pair "He said yes." "He agreed."
  python predict_text.py --export_dir=/tmp/sst2_model --input_file=reviews.txt \\
    --output_file=labels.tsv

With --pair, the sentences are taken two at a time as (text_a, text_b), or
from --input_file's lines as text_a<TAB>text_b; a model trained on single
sentences refuses --pair. --input_file=- reads stdin.
The model is loaded once and run --batch_size sentences at a time. From a
file, 16 batches are read at a time and run in order of length, so that each
batch holds sentences of about one length and pays for no padding beyond
them; from stdin, each batch runs as its lines come. The lines are written
in input order as soon as they are done, and progress is logged every few
seconds.

Each line is: the prediction (the label's name; for a multi-label model
the names of every label at or above its threshold, joined by its label
separator; for regression the value; the class id for exports without
label names), the probabilities, each as label:probability (in the labels'
order, label_list.txt's for data of your own; the class id for exports
without label names; for regression the value alone), the sentence
(tabs, newlines and control characters in it written as backslash escapes,
so that they cannot break the line), in input order. An empty sentence is
classified, with a warning; so is a line of NUL bytes alone (a NUL is read
as a space, so that the words around it stay apart). A sentence (or pair)
longer than the export's max_seq_length is cut as training cut it: the
first few are warned about one by one, and their number at the end.
"""

from absl import flags

from bert_tf import cli, io_utils
from bert_tf.cli import text_input
from bert_tf.serving import export_runner

flags.DEFINE_bool("pair", False, "Read the sentences as (text_a, text_b) pairs: two arguments "
                  "each, or --input_file lines text_a<TAB>text_b.")
text_input.define_flags()
flags.adopt_module_key_flags(text_input)
FLAGS = flags.FLAGS


def labelled(probabilities, label_names):
    """An input's probabilities, each with its label's name: "negative:0.120 positive:0.880".

    Args:
      probabilities: The export's probabilities of one input, in the labels' order.
      label_names: The labels' names the export records, or None.

    Returns:
      The column's text; the class ids stand for names an export does not
      record, and a regression's score (one value, no labels) is alone.
    """
    if label_names is None and len(probabilities) == 1:
        return f"{probabilities[0]:.3f}"
    names = label_names or [str(i) for i in range(len(probabilities))]
    return " ".join(f"{name}:{p:.3f}" for name, p in zip(names, probabilities, strict=True))


def main(argv):
    names = ("text_a", "text_b") if FLAGS.pair else ("text_a",)
    # A multi-label export is served alike; any other task is refused (check_task).
    info = export_runner.read_info(FLAGS.export_dir) or {}
    task = "MultiLabelTask" if info.get("task") == "MultiLabelTask" else "ClassificationTask"
    export_runner.check_task(FLAGS.export_dir, task)
    # A pair given to a single-sentence model would be joined and classified.
    export_runner.check_trained_inputs(FLAGS.export_dir, names, "drop --pair")
    texts = text_input.TextInput(argv[1:], FLAGS.input_file, names)
    signature = "pair" if FLAGS.pair else "single"
    # How a warning names an input: its line, or its place among the arguments.
    unit = "line" if FLAGS.input_file else ("pair" if FLAGS.pair else "argument")
    label_names = info.get("labels")
    number, cut = 0, text_input.CutInputs()
    with io_utils.atomic_write_or_stdout(FLAGS.output_file) as out:
        for inputs, outputs in export_runner.run_batches(FLAGS.export_dir, signature,
                                                  texts.batches(FLAGS.batch_size),
                                                  task, names, texts.sort_window):
            shown = [" ||| ".join(pair) for pair in zip(*inputs.values(), strict=True)]
            # Exports from before they said which inputs they cut: none known.
            truncated = outputs.get("truncated", [False] * len(shown))
            # The labels' names, where the export has them.
            answers = [label.decode("utf-8") for label in outputs["labels"]] if (
                "labels" in outputs) else outputs["predictions"]
            for text, answer, probabilities, was_cut in zip(
                    shown, answers, outputs["probabilities"], truncated, strict=True):
                number += 1
                out.write(f"{answer}\t{labelled(probabilities, label_names)}\t"
                          f"{cli.printable(text)}\n")
                if was_cut:
                    cut.add(f"{unit} {number}")
            out.flush()
    cut.finish(number)


if __name__ == "__main__":
    cli.run(main)
