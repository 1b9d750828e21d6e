"""Finds the entities in raw sentences with a SavedModel that run_ner.py --export_dir wrote.

  python predict_entities.py --export_dir=/tmp/ner_model "Angela Merkel visited Paris."
  python predict_entities.py --export_dir=/tmp/ner_model --input_file=news.txt \\
    --output_file=entities.tsv

--input_file holds one sentence a line; --input_file=- reads stdin. The
model is loaded once and run --batch_size sentences at a time. From a file,
16 batches are read at a time and run in order of length, so that each
batch holds sentences of about one length and pays for no padding beyond
them; from stdin, each batch runs as its lines come. The lines are written
in input order as soon as they are done, and progress is logged every few
seconds.

Prints one line per entity: the sentence's number (from 0, in argument or
line order), the entity's type, its character offsets in the sentence (end
exclusive), its score and its text, tab-separated, with the text escaped so
that a tab or newline in it cannot break the line.
"""

from absl import flags

from bert_tf import cli, io_utils
from bert_tf.cli import text_input
from bert_tf.serving import export_runner

text_input.define_flags()
flags.adopt_module_key_flags(text_input)
FLAGS = flags.FLAGS


def main(argv):
    texts = text_input.TextInput(argv[1:], FLAGS.input_file, names=("text",))
    number = 0
    with io_utils.atomic_write_or_stdout(FLAGS.output_file) as out:
        for inputs, outputs in export_runner.run_batches(FLAGS.export_dir, "serving_default",
                                                  texts.batches(FLAGS.batch_size),
                                                  "TaggingTask", ("text",),
                                                  texts.sort_window):
            for i in range(len(inputs["text"])):
                for j in range(outputs["num_entities"][i]):
                    text = outputs["entity_text"][i][j].decode("utf-8")
                    out.write(f"{number + i}\t{outputs['entity_type'][i][j].decode('utf-8')}\t"
                              f"{outputs['entity_start'][i][j]}\t{outputs['entity_end'][i][j]}\t"
                              f"{outputs['entity_score'][i][j]:.3f}\t{cli.printable(text)}\n")
            number += len(inputs["text"])
            out.flush()


if __name__ == "__main__":
    cli.run(main)
