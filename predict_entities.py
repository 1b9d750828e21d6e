"""Finds the entities in raw sentences with a SavedModel that run_ner.py --export_dir wrote.

  python predict_entities.py --export_dir=/tmp/ner_model "Angela Merkel visited Paris."

Prints one line per entity: the sentence's number, the entity's type, its
character offsets in the sentence (end exclusive), its score and its text,
tab-separated, with the text escaped so that a tab or newline in it cannot
break the line.
"""

from absl import app, flags

from bert_tf import cli, export

flags.DEFINE_string("export_dir", None, "The SavedModel folder.")
flags.mark_flag_as_required("export_dir")
FLAGS = flags.FLAGS


def main(argv):
    sentences = cli.text_arguments(argv[1:])
    if not sentences:
        raise app.UsageError("give the sentences to tag as arguments")
    outputs = export.run_signature(FLAGS.export_dir, "serving_default", text=sentences)
    for i in range(len(sentences)):
        for j in range(outputs["num_entities"][i]):
            text = outputs["entity_text"][i, j].decode("utf-8")
            print(f"{i}\t{outputs['entity_type'][i, j].decode('utf-8')}\t"
                  f"{outputs['entity_start'][i, j]}\t{outputs['entity_end'][i, j]}\t"
                  f"{outputs['entity_score'][i, j]:.3f}\t{cli.printable(text)}")


if __name__ == "__main__":
    cli.run(main)
