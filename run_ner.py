"""Fine-tunes BERT for token tagging (named entities, CoNLL-2003): train, evaluate, predict.

  python run_ner.py --data_dir=$CONLL_DIR --init_checkpoint=$BERT_BASE_DIR \\
    --do_train=true --do_eval=true --do_predict=true --max_seq_length=128 \\
    --train_batch_size=32 --learning_rate=5e-5 --num_train_epochs=3.0 \\
    --output_dir=/tmp/ner_output/ --export_dir=/tmp/ner_model

--data_dir holds train.txt, valid.txt (or dev.txt) and test.txt: one word a
line with its tag in the last column ("word TAG", "word POS chunk TAG" or
"word TAG 0"), a blank line between sentences, -DOCSTART- lines between
documents. The first word piece of each word carries its tag; later pieces
are ignored in the loss and in prediction. Each sentence is encoded alone
(no context from its neighbours); one longer than max_seq_length - 2 pieces
is cut into overlapping windows, and each word is tagged in exactly one.

The predict file's tag column, when it has one, is not used: a tag the
model was not trained with is no error there.

Outputs in output_dir: label_list.txt (the tags, in id order, which
prediction reads back), eval_results.txt (entity precision, recall and F1
overall and per type, as conlleval counts them; token accuracy; loss) and,
with --do_predict, <name>_predictions.txt: the predict file with one more
column, the predicted tag, for conlleval-style tools. --export_dir writes a
SavedModel that finds the entities in raw sentences (see predict_entities.py).
"""

import os

from absl import app, flags, logging

from bert_tf import cli, conll, distribution, finetune, input_pipeline, tagging_data, training
from bert_tf.tasks import TaggingTask
from bert_tf.tasks.tagging import TaggingReferences

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None, "Folder with train.txt, valid.txt (or dev.txt) and "
                    "test.txt in CoNLL layout.")
flags.DEFINE_string("predict_file", None, "The file --do_predict tags; default: "
                    "<data_dir>/test.txt. Any file of the same layout; the tag column may "
                    "be absent.")
flags.DEFINE_list("labels", None, "The tags, in id order; default: those of train.txt "
                  "when training, else output_dir/label_list.txt.")
flags.DEFINE_integer("window_stride", None, "Word pieces between the starts of the windows "
                     "of a sentence longer than max_seq_length - 2 pieces; default: half "
                     "of that, so that windows overlap by half.")
finetune.define_finetune_flags()
finetune.define_padding_flags()
training.define_training_flags()
distribution.define_tpu_flags()
flags.adopt_module_key_flags(finetune)
flags.adopt_module_key_flags(training)
flags.adopt_module_key_flags(distribution)
flags.mark_flags_as_required(["output_dir"])

_LABEL_FILE = "label_list.txt"


def _split_file(name):
    """The path of a split in --data_dir; valid.txt may be called dev.txt."""
    path = os.path.join(FLAGS.data_dir or "", f"{name}.txt")
    if name == "valid" and not os.path.exists(path):
        dev = os.path.join(FLAGS.data_dir or "", "dev.txt")
        path = dev if os.path.exists(dev) else path
    return path


def _label_list(train_sentences):
    """The tags: --labels, else train.txt's (written to output_dir), else output_dir's."""
    path = os.path.join(FLAGS.output_dir, _LABEL_FILE)
    if FLAGS.labels:
        labels = FLAGS.labels
    elif train_sentences:
        labels = conll.label_list(train_sentences)
    elif os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]
    else:
        raise ValueError(f"no {path} from a training run: give --labels or --do_train")
    return labels


def main(_):
    export_only = finetune.check_actions(FLAGS)
    if (FLAGS.do_train or FLAGS.do_eval) and not FLAGS.data_dir:
        raise app.UsageError("--do_train and --do_eval need --data_dir.")
    predict_file = FLAGS.predict_file or _split_file("test")
    # A bad file, flag or tag raises an error that names it; cli.run prints it
    # as one line.
    padding = finetune.padding_args(FLAGS)
    files = finetune.model_files_from_flags(FLAGS)
    stride = FLAGS.window_stride or max((FLAGS.max_seq_length - 2) // 2, 1)
    if not 0 < stride <= FLAGS.max_seq_length - 2:
        raise ValueError(f"--window_stride={stride} must be in 1.."
                         f"{FLAGS.max_seq_length - 2} (max_seq_length - 2)")
    strategy = finetune.setup(FLAGS, static_shapes=not FLAGS.dynamic_padding)
    # Every file this run needs is read and checked before training.
    splits = {}
    if FLAGS.do_train:
        splits["train"] = (_split_file("train"), conll.read_conll(_split_file("train")))
    if FLAGS.do_eval:
        splits["valid"] = (_split_file("valid"), conll.read_conll(_split_file("valid")))
    if FLAGS.do_predict:
        splits["predict"] = (predict_file, conll.read_conll(predict_file, has_tags=False))
    label_list = _label_list(splits.get("train", (None, None))[1])
    tokenizer = files.tokenizer()
    # Each split's windows, built once: the training set's number of windows
    # is the number of examples an epoch has (a long sentence counts as its
    # windows).
    windows = {}
    for name, (path, sentences) in splits.items():
        ids = ([[0] * len(s.words) for s in sentences] if name == "predict"
               else tagging_data.tag_ids(sentences, label_list, path))
        windows[name] = tagging_data.convert_sentences(sentences, ids, tokenizer,
                                                       FLAGS.max_seq_length, stride)
    num_train_steps, num_warmup_steps = 0, 0
    if FLAGS.do_train:
        num_train_steps, num_warmup_steps = finetune.train_steps(
            len(windows["train"]), FLAGS.train_batch_size, FLAGS.num_train_epochs,
            FLAGS.warmup_proportion)

    task = TaggingTask(label_list, FLAGS.max_seq_length)
    trainer = finetune.create_trainer(task, files, strategy, training.TrainingConfig.from_flags(
        FLAGS, max(num_train_steps, 1), num_warmup_steps, strategy), trained_required=export_only)
    if trainer.is_chief and FLAGS.do_train:
        with open(os.path.join(FLAGS.output_dir, _LABEL_FILE), "w", encoding="utf-8") as f:
            f.write("".join(f"{label}\n" for label in label_list))

    def input_fn(records_dir, name, batch_size, is_training):
        """Writes one split's windows; their input function for the trainer."""
        path = os.path.join(records_dir, f"{name}.tf_record")
        tagging_data.write_tfrecord(path, windows[name], FLAGS.max_seq_length,
                                    None if is_training else batch_size)
        return finetune.dataset_fn(input_pipeline.finetuning_dataset, path, batch_size,
                                   is_training, features=task.feature_specs(), **padding)

    with finetune.records_dir(trainer) as records_dir:
        if FLAGS.do_train:
            logging.info("Training on %d sentences (%d windows): %d steps, %d warmup.",
                         len(splits["train"][1]), len(windows["train"]), num_train_steps,
                         num_warmup_steps)
            micro_batch = FLAGS.train_batch_size // FLAGS.gradient_accumulation_steps
            trainer.train(input_fn(records_dir, "train", micro_batch, True), num_train_steps,
                          FLAGS.train_batch_size)
        predictions = None
        if FLAGS.do_eval:
            metrics, predictions = finetune.evaluate(
                trainer, input_fn(records_dir, "valid", FLAGS.eval_batch_size, False),
                TaggingReferences(splits["valid"][1]))
            finetune.write_eval_results(trainer, metrics)
        if FLAGS.do_predict:
            # Predicting the file just evaluated would run the model on it twice.
            if predictions is None or predict_file != splits["valid"][0]:
                predictions = finetune.predict(
                    trainer, input_fn(records_dir, "predict", FLAGS.predict_batch_size, False))
            finetune.write_outputs(trainer, predictions,
                                   TaggingReferences(splits["predict"][1], predict_file))
    if FLAGS.export_dir and trainer.is_chief:
        finetune.export_model(FLAGS.export_dir, trainer, files, FLAGS.max_seq_length,
                              FLAGS.export_shapes)


if __name__ == "__main__":
    cli.run(main)
