# EXTRA file for ../shared/bench-peers/run_all.sh: bert_tf's rows, measured right after the
# peers in every round. run(), $TF_PY and the working directory come from run_all.sh; the
# model comes from bench/peer_adapter.py, imported as bench.peer_adapter (PYTHONPATH=$PWD from
# the repository root). From the repository root:
#   PYTHONPATH=$PWD EXTRA=$PWD/bench/peer_candidates.sh ROUNDS=2 \
#     ONLY='matmul_tf|matmul_torch|train_base_(kerashub|hf_eager)|train_tiny_(kerashub|hf_eager)|cand_' \
#     OUT=$PWD/bench/results/peers.jsonl bash ../shared/bench-peers/run_all.sh
IMPL=bench.peer_adapter:build
run cand_train_base_graph 300 "$TF_PY" bench_keras.py --task train --config bert_base --mode graph --warmup 3 --steps 6 --impl "$IMPL" --library bert_tf
run cand_train_base_xla   300 "$TF_PY" bench_keras.py --task train --config bert_base --mode xla   --warmup 3 --steps 6 --impl "$IMPL" --library bert_tf
run cand_train_tiny_graph 180 "$TF_PY" bench_keras.py --task train --config bert_tiny --mode graph --warmup 5 --steps 20 --impl "$IMPL" --library bert_tf
run cand_train_tiny_xla   180 "$TF_PY" bench_keras.py --task train --config bert_tiny --mode xla   --warmup 5 --steps 20 --impl "$IMPL" --library bert_tf
