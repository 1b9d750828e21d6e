"""Answers questions about raw contexts with a SavedModel that run_squad.py --export_dir wrote.

  python predict_answers.py --export_dir=/tmp/squad_model \\
    --context="Jim Henson was a puppeteer from Mississippi." --question="Who was Jim Henson?"
  python predict_answers.py --export_dir=/tmp/squad_model --input_file=dev-v2.0.json \\
    --output_file=answers.jsonl

--question may be given several times: every question is asked about the
one --context, or, with as many --context flags as questions, the n-th
question about the n-th context. --input_file is a SQuAD JSON file (v1.1 or
v2.0, with or without answers), or JSON lines, one object a line:
{"question": "...", "context": "...", "id": "..."} (the id optional). The
file is read and checked whole before the model is loaded, and run
--batch_size questions at a time, in order of length; a long context is
read in the windows the model was trained with.

Prints one JSON object a line, in input order: the question's id (from the
file; else its number from 0), the answer's text, its character offsets in
the context (end exclusive; -1 and -1, and an empty answer, where a SQuAD
2.0 model finds none) and its score (the answer's start + end logit).
"""

import json

from absl import app, flags

from bert_tf import cli, io_utils
from bert_tf.cli import text_input
from bert_tf.data.squad import reading
from bert_tf.serving import export_runner

text_input.define_flags(input_file_help="A SQuAD JSON file, or JSON lines of {\"question\", "
                        "\"context\"[, \"id\"]} objects.",
                        batch_size_help="Questions run through the model at a time.")
flags.DEFINE_multi_string("question", None, "A question to answer; may be repeated.")
flags.DEFINE_multi_string("context", None, "The text the questions are about: one for all "
                          "the questions, or one per question, in order.")
flags.adopt_module_key_flags(text_input)
FLAGS = flags.FLAGS


def questions_from_flags(questions, contexts):
    """The (id, question, context) of --question and --context.

    Args:
      questions: The --question values.
      contexts: The --context values: one, or one per question.

    Returns:
      A list of (id, question, context), the ids numbers from 0.

    Raises:
      app.UsageError: no question or context, or a number of contexts that
        is neither 1 nor the questions'.
    """
    if not (questions and contexts):
        raise app.UsageError("Give --question and --context, or --input_file")
    if len(contexts) not in (1, len(questions)):
        raise app.UsageError(f"{len(questions)} --question and {len(contexts)} --context: "
                             "give one --context for all the questions, or one per question")
    contexts = contexts * len(questions) if len(contexts) == 1 else contexts
    return [(str(number), question, context)
            for number, (question, context) in enumerate(zip(questions, contexts, strict=True))]


def main(argv):
    if argv[1:]:
        raise app.UsageError("Give the questions with --question (and --context) or "
                             f"--input_file, not as arguments: {' '.join(argv[1:])}")
    if FLAGS.input_file and (FLAGS.question or FLAGS.context):
        raise app.UsageError("--input_file holds the questions and contexts: drop "
                             "--question and --context")
    export_runner.check_task(FLAGS.export_dir, "QuestionAnsweringTask")
    if FLAGS.input_file:
        items = reading.read_questions(FLAGS.input_file)
    else:
        items = questions_from_flags(FLAGS.question, FLAGS.context)
    size = FLAGS.batch_size
    batches = ({"question": [question for _, question, _ in items[i:i + size]],
                "context": [context for _, _, context in items[i:i + size]]}
               for i in range(0, len(items), size))
    ids = iter(qas_id for qas_id, _, _ in items)
    with io_utils.atomic_write_or_stdout(FLAGS.output_file) as out:
        for _, outputs in export_runner.run_batches(
                FLAGS.export_dir, "serving_default", batches, "QuestionAnsweringTask",
                ("question", "context"), text_input.LENGTH_ORDER_BATCHES):
            for text, start, end, score in zip(outputs["answer_text"], outputs["answer_start"],
                                               outputs["answer_end"], outputs["score"],
                                               strict=True):
                out.write(json.dumps({"id": next(ids), "answer": text.decode("utf-8"),
                                      "start": int(start), "end": int(end),
                                      "score": round(float(score), 4)},
                                     ensure_ascii=False) + "\n")
            out.flush()


if __name__ == "__main__":
    cli.run(main)
