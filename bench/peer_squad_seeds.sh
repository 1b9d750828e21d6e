# Many seeds of the Hugging Face SQuAD peer at once on one GPU (bench/peers/hf_squad_finetune.py
# with --device=cuda, float32, TF32 off), for the seed spreads and swaps of docs/benchmarks.md's
# SQuAD sections. Each argument is one process, NAME:SEEDS[:FLAGS] (seeds and extra peer flags
# comma-separated); the processes share the GPU. From the repository root, with a python that
# has torch and transformers:
#   MODEL=<all-MiniLM-L6-v2 folder> TRAIN=train-v2.0-first10.json DEV=dev.json OUT=/tmp/peer \
#     bash bench/peer_squad_seeds.sh hf:1,2,3,4 hf:5,6,7,8 \
#     hf_bt_windows:1,2,3,4:--train_windows=bt.npz
# Writes $OUT/peer_squad_seeds.jsonl (one line per run, as the peer prints them) and
# $OUT/predictions.tar.gz (NAME_seedN.json, run_squad.py's predictions.json layout, and each
# process's log), for bench/squad_articles.py.
set -u
: "${MODEL:?}" "${TRAIN:?}" "${DEV:?}" "${OUT:?}"
PYTHON=${PYTHON:-python3}
# Each process stops here, so that the predictions written so far still come back.
LIMIT_S=${LIMIT_S:-3600}
work=$(mktemp -d)
mkdir -p "$OUT"
for spec in "$@"; do
  IFS=: read -r name seeds flags <<<"$spec"
  IFS=, read -ra extra <<<"${flags:-}"
  timeout "$LIMIT_S" "$PYTHON" -m bench.peers.hf_squad_finetune --device=cuda \
    --train_file="$TRAIN" --predict_file="$DEV" --model_dir="$MODEL" --seeds="$seeds" \
    --predictions_out="$work/${name}_seed{seed}.json" --out="$OUT/peer_squad_seeds.jsonl" \
    "${extra[@]}" >"$work/${name}_${seeds//,/-}.log" 2>&1 &
done
wait
tar -czf "$OUT/predictions.tar.gz" -C "$work" .
tail -n 3 "$work"/*.log
