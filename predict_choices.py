"""Chooses the ending of each question of a SWAG-layout CSV file with a SavedModel that
run_swag.py --export_dir wrote.

  python predict_choices.py --export_dir=/tmp/swag_model --input_file=$SWAG_DIR/test.csv \\
    --output_file=predictions.csv

The file is read as run_swag.py reads it (a header naming sent1, sent2 and
ending0, ending1, ...; a label column is not read), checked whole before the
model is loaded, and each question's choices are packed as training packed
them (swag.second_segments). The output is run_swag.py's predictions.csv: id,
the chosen ending's number and text, and every ending's probability, in input
order, written only once complete. The model is run --batch_size questions at
a time. A question whose context and an ending do not fit the export's
max_seq_length is cut as training cut it: the first few are warned about by
line, and their number at the end; rows with an empty ending are warned
about once.
"""

from absl import flags

from bert_tf import cli
from bert_tf.cli import text_input
from bert_tf.data import swag
from bert_tf.serving import export_runner

text_input.define_flags(input_file_help="A CSV file in SWAG's layout.",
                        output_file_help="Where predictions.csv's lines go (it appears only "
                        "when complete).",
                        batch_size_help="Questions run through the model at a time.")
flags.adopt_module_key_flags(text_input)
flags.mark_flags_as_required(["input_file", "output_file"])
FLAGS = flags.FLAGS

SIGNATURE = "choose"


def main(_):
    export_runner.check_task(FLAGS.export_dir, "MultipleChoiceTask")
    shapes = (export_runner.read_info(FLAGS.export_dir) or {}).get("signatures", {}).get(
        SIGNATURE, {}).get("input_shapes", {})
    num_choices = shapes.get("endings", [None, 4])[1]
    examples = swag.read_examples(FLAGS.input_file, num_choices, labelled=False)
    batches = ({"context": [example.context for example in examples[i:i + FLAGS.batch_size]],
                "endings": [swag.second_segments(example)
                            for example in examples[i:i + FLAGS.batch_size]]}
               for i in range(0, len(examples), FLAGS.batch_size))
    probabilities, truncated = [], []
    for _, outputs in export_runner.run_batches(FLAGS.export_dir, SIGNATURE, batches,
                                         "MultipleChoiceTask", ("context", "endings"),
                                         text_input.LENGTH_ORDER_BATCHES):
        probabilities.extend(outputs["probabilities"])
        # Exports from before they said which inputs they cut: none known.
        truncated.extend(outputs.get("truncated", [False] * len(outputs["probabilities"])))
    cut = text_input.CutInputs("questions")
    for example, was_cut in zip(examples, truncated, strict=True):
        if was_cut:
            cut.add(f"line {example.line}")
    swag.write_predictions(FLAGS.output_file, examples, probabilities)
    cut.finish(len(examples))


if __name__ == "__main__":
    cli.run(main)
