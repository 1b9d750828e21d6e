# EXTRA file for ../shared/bench-peers/run_all.sh: the bfloat16 comparison of docs/benchmarks.md
# ("bfloat16 on a CPU"). Every round: TensorFlow's bfloat16 matmul peak, the peers in bfloat16
# (keras-hub under mixed_bfloat16 in graph and XLA mode, HF eager under bf16 autocast), then
# bert_tf in float32 and mixed_bfloat16, graph and XLA, at BERT-Base (batch 8) and BERT-Tiny
# (batch 32). The float32 peers come from run_all.sh itself (ONLY below). The model and the
# matmul script are imported from the repository root on PYTHONPATH, as bench.peer_adapter and
# bench.matmul_bfloat16. From the repository root:
#   PYTHONPATH=$PWD EXTRA=$PWD/bench/peer_bfloat16.sh ROUNDS=2 \
#     ONLY='matmul_tf|train_base_(kerashub_(graph|xla)|hf_eager)$|train_tiny_(kerashub_(graph|xla)|hf_eager)$|bf16|cand_' \
#     OUT=$PWD/bench/results/peers-bfloat16.jsonl bash ../shared/bench-peers/run_all.sh
IMPL=bench.peer_adapter:build
run matmul_tf_bf16 120 "$TF_PY" -m bench.matmul_bfloat16
BF16=(--precision mixed_bfloat16)
run train_base_kerashub_graph_bf16 300 "$TF_PY" bench_keras.py --task train --config bert_base --mode graph --warmup 3 --steps 6 "${BF16[@]}"
run train_base_kerashub_xla_bf16   300 "$TF_PY" bench_keras.py --task train --config bert_base --mode xla   --warmup 3 --steps 6 "${BF16[@]}"
run train_base_hf_eager_bf16       300 "$TORCH_PY" bench_torch_hf.py --task train --config bert_base --mode eager --warmup 3 --steps 6 --precision bf16_autocast
run train_tiny_kerashub_graph_bf16 180 "$TF_PY" bench_keras.py --task train --config bert_tiny --mode graph --warmup 5 --steps 20 "${BF16[@]}"
run train_tiny_kerashub_xla_bf16   180 "$TF_PY" bench_keras.py --task train --config bert_tiny --mode xla   --warmup 5 --steps 20 "${BF16[@]}"
run train_tiny_hf_eager_bf16       180 "$TORCH_PY" bench_torch_hf.py --task train --config bert_tiny --mode eager --warmup 3 --steps 10 --precision bf16_autocast
for precision in float32 mixed_bfloat16; do
  run "cand_train_base_graph_$precision" 300 "$TF_PY" bench_keras.py --task train --config bert_base --mode graph --warmup 3 --steps 6 --precision "$precision" --impl "$IMPL" --library bert_tf
  run "cand_train_base_xla_$precision"   300 "$TF_PY" bench_keras.py --task train --config bert_base --mode xla   --warmup 3 --steps 6 --precision "$precision" --impl "$IMPL" --library bert_tf
  run "cand_train_tiny_graph_$precision" 180 "$TF_PY" bench_keras.py --task train --config bert_tiny --mode graph --warmup 5 --steps 20 --precision "$precision" --impl "$IMPL" --library bert_tf
  run "cand_train_tiny_xla_$precision"   180 "$TF_PY" bench_keras.py --task train --config bert_tiny --mode xla   --warmup 5 --steps 20 --precision "$precision" --impl "$IMPL" --library bert_tf
done
