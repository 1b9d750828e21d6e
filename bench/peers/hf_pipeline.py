"""The Hugging Face peer of predict_text.py and predict_entities.py: transformers' pipeline.

Reads one sentence a line from --input_file and runs transformers'
`pipeline` on them, --batch_size at a time, as a user would:
"text-classification" (every class's score) for a classifier folder,
"token-classification" with aggregation_strategy="simple" (whole entities,
with their offsets) for a tagger folder. Inputs are truncated at
--max_seq_length, as the bert_tf exports cut them.

With --output_file, it writes one line per sentence (the scores) or per
entity (sentence number, type, offsets, score, text), as the bert_tf scripts
do, and that is all: bench/batch_prediction.py times the whole process, start
to end. With --passes=N it instead runs the file N times in one process and
prints one JSON line with the seconds of loading and of each pass, so that the
first pass and the steady state are told apart.

  /tmp/hfvenv/bin/python -m bench.peers.hf_pipeline --task=text-classification \\
      --model_dir=FOLDER --input_file=sentences.txt --output_file=labels.tsv
"""

import argparse
import json
import time

TASKS = ("text-classification", "token-classification")


def load(task, model_dir, max_seq_length):
    """The pipeline for task on the folder's model and vocab.txt."""
    import transformers

    tokenizer = transformers.BertTokenizerFast(f"{model_dir}/vocab.txt", do_lower_case=True,
                                               model_max_length=max_seq_length)
    if task == "text-classification":
        model = transformers.BertForSequenceClassification.from_pretrained(model_dir)
        return transformers.pipeline(task, model=model.eval(), tokenizer=tokenizer,
                                     device="cpu", top_k=None)
    model = transformers.BertForTokenClassification.from_pretrained(model_dir)
    return transformers.pipeline(task, model=model.eval(), tokenizer=tokenizer, device="cpu",
                                 aggregation_strategy="simple")


def run(pipe, task, sentences, batch_size):
    """The pipeline's outputs for every sentence, in input order."""
    if task == "text-classification":
        return pipe(sentences, batch_size=batch_size, truncation=True)
    return pipe(sentences, batch_size=batch_size)


def write(path, task, outputs):
    """One line per sentence (its scores) or per entity, as the bert_tf scripts write."""
    with open(path, "w", encoding="utf-8") as out:
        for number, output in enumerate(outputs):
            if task == "text-classification":
                scores = sorted(output, key=lambda item: item["label"])
                out.write(" ".join(f"{item['score']:.3f}" for item in scores) + "\n")
                continue
            for entity in output:
                out.write(f"{number}\t{entity['entity_group']}\t{entity['start']}\t"
                          f"{entity['end']}\t{entity['score']:.3f}\t{entity['word']}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=TASKS, required=True)
    parser.add_argument("--model_dir", required=True,
                        help="A transformers folder with vocab.txt (bench/serving.py writes one).")
    parser.add_argument("--input_file", required=True, help="One sentence a line.")
    parser.add_argument("--output_file", default=None, help="Write the predictions here.")
    parser.add_argument("--passes", type=int, default=None,
                        help="Time this many passes over the file instead; print a JSON line.")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_seq_length", type=int, default=128)
    args = parser.parse_args()

    begin = time.perf_counter()
    pipe = load(args.task, args.model_dir, args.max_seq_length)
    load_s = time.perf_counter() - begin
    with open(args.input_file, encoding="utf-8") as f:
        sentences = [line.rstrip("\n") for line in f]
    if args.passes is None:
        write(args.output_file, args.task, run(pipe, args.task, sentences, args.batch_size))
        return
    passes = []
    for _ in range(args.passes):
        begin = time.perf_counter()
        run(pipe, args.task, sentences, args.batch_size)
        passes.append(time.perf_counter() - begin)
    print(json.dumps({"load_s": load_s, "pass_s": passes}))


if __name__ == "__main__":
    main()
