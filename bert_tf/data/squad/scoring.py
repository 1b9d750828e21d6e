"""SQuAD's official metrics: exact match and F1 (evaluate-v1.1.py and evaluate-v2.0.py).

Both official scripts normalize an answer the same way (lower case, no
punctuation, no articles "a", "an", "the", whitespace collapsed), score a
prediction against each gold answer and keep the best score, and report
percentages.

  evaluate: the v2.0 script. "exact", "f1" and "total" over every question;
    "HasAns_*" over the answerable ones and "NoAns_*" over the unanswerable
    ones, each when there are any (an unanswerable question's only gold answer
    is "", and a prediction is "" for "no answer"); with na_probs (the null
    odds write_predictions returns, or probabilities) a question whose value
    exceeds na_prob_thresh counts as predicted unanswerable, and
    "best_exact", "best_f1" and their "_thresh" give the best scores over all
    thresholds, the threshold to pass as --null_score_diff_threshold.
  evaluate_v1: the v1.1 script, "exact_match" and "f1". It differs from
    evaluate's "exact" and "f1" only for an empty prediction of an empty
    gold answer, which v1.1 gives F1 0.

A question without a prediction scores 0 in every figure, as v1.1 scores
it, with a warning (the v2.0 script would stop on it).

How run_squad.py uses them:
  SQuAD 2.0 (--version_2_with_negative):
    evaluate(predict_file, predictions, na_probs=null_odds).
  SQuAD 1.1 mode: reading skips unanswerable questions, so score against the
    answerable ones only (a v1.1 file has no other):
    evaluate_v1(answerable_questions(predict_file), predictions).
"""

import collections
import os
import re
import string

from absl import logging

from bert_tf.data.squad import reading

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(s):
    """Lower-cases, and removes punctuation, articles and extra whitespace, officially.

    Args:
      s: an answer text.

    Returns:
      The normalized text.
    """
    text = "".join(char for char in s.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match_score(prediction, ground_truth):
    """1 when both texts are equal once normalized, else 0.

    Args:
      prediction: the predicted answer.
      ground_truth: one gold answer.

    Returns:
      1 or 0.
    """
    return int(normalize_answer(prediction) == normalize_answer(ground_truth))


def f1_score(prediction, ground_truth):
    """The F1 of the normalized words of a prediction against one gold answer (v2.0).

    When either normalizes to no word ("" for "no answer"), F1 is 1 if both
    do and 0 otherwise.

    Args:
      prediction: the predicted answer.
      ground_truth: one gold answer.

    Returns:
      A float in [0, 1].
    """
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    if not prediction_tokens or not ground_truth_tokens:
        return float(prediction_tokens == ground_truth_tokens)
    common = collections.Counter(prediction_tokens) & collections.Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(prediction_tokens)
    recall = num_same / len(ground_truth_tokens)
    return 2 * precision * recall / (precision + recall)


def _f1_score_v1(prediction, ground_truth):
    """evaluate-v1.1.py's F1: no shared word (two empty answers included) is 0."""
    if not normalize_answer(prediction) and not normalize_answer(ground_truth):
        return 0.0
    return f1_score(prediction, ground_truth)


def _articles(dataset_json_or_path):
    """The list of articles of a dataset given as a path, its JSON, or its "data"."""
    if isinstance(dataset_json_or_path, (str, os.PathLike)):
        dataset_json_or_path = reading.load_json(dataset_json_or_path)
    if isinstance(dataset_json_or_path, dict):
        if "data" not in dataset_json_or_path:
            raise reading.SquadDataError("the dataset has no 'data'")
        return dataset_json_or_path["data"]
    return dataset_json_or_path


def _questions(articles):
    """{question id: its gold answer texts}, in dataset order.

    Raises:
      SquadDataError: for a question without an id or without answers.
    """
    gold = {}
    for article_index, article in enumerate(articles):
        for paragraph_index, paragraph in enumerate(article["paragraphs"]):
            for qa_index, qa in enumerate(paragraph["qas"]):
                where = f"data[{article_index}].paragraphs[{paragraph_index}].qas[{qa_index}]"
                if "id" not in qa:
                    raise reading.SquadDataError(f"{where} has no 'id'")
                if "answers" not in qa:
                    raise reading.SquadDataError(
                        f"question {qa['id']!r} ({where}) has no 'answers' to score against")
                gold[qa["id"]] = [answer["text"] for answer in qa["answers"]]
    if not gold:
        raise reading.SquadDataError("the dataset has no question to score")
    return gold


def gold_answers(dataset_json_or_path):
    """{question id: its gold answer texts} of a dataset, checked as scoring checks it.

    Args:
      dataset_json_or_path: A SQuAD file's path, its JSON, or its "data".

    Returns:
      A dict, in dataset order.

    Raises:
      SquadDataError: a question without answers, or no question at all.
    """
    return _questions(_articles(dataset_json_or_path))


def _warn_missing(gold, predictions):
    """Logs the questions without a prediction, which score 0."""
    missing = [qid for qid in gold if qid not in predictions]
    if missing:
        logging.warning("%d of %d questions have no prediction and score 0, e.g. %s",
                        len(missing), len(gold), ", ".join(missing[:5]))


def answerable_questions(dataset_json_or_path):
    """The dataset with its unanswerable questions left out, for SQuAD 1.1 mode.

    Args:
      dataset_json_or_path: a SQuAD file's path, its parsed JSON or its
        "data" list.

    Returns:
      A new "data" list of articles whose paragraphs keep only the questions
      with answers that are not marked is_impossible; the input is unchanged.
    """
    return [
        {**article, "paragraphs": [
            {**paragraph, "qas": [qa for qa in paragraph["qas"]
                                  if qa.get("answers") and not qa.get("is_impossible", False)]}
            for paragraph in article["paragraphs"]]}
        for article in _articles(dataset_json_or_path)]


def evaluate_v1(dataset_json_or_path, predictions):
    """Scores predictions as evaluate-v1.1.py does.

    Args:
      dataset_json_or_path: a SQuAD file's path, its parsed JSON or its
        "data" list; every question must have answers (see
        answerable_questions).
      predictions: {question id: predicted text}.

    Returns:
      {"exact_match": percentage, "f1": percentage} over every question of
      the dataset.

    Raises:
      SquadDataError: for a question without a gold answer.
    """
    gold = _questions(_articles(dataset_json_or_path))
    _warn_missing(gold, predictions)
    exact_match = f1 = 0.0
    for qid, ground_truths in gold.items():
        if not ground_truths:
            raise reading.SquadDataError(
                f"question {qid!r} has no gold answer, which v1.1 cannot score: evaluate "
                "answerable_questions(dataset) instead")
        if qid in predictions:
            prediction = predictions[qid]
            exact_match += max(exact_match_score(prediction, g) for g in ground_truths)
            f1 += max(_f1_score_v1(prediction, g) for g in ground_truths)
    return {"exact_match": 100.0 * exact_match / len(gold), "f1": 100.0 * f1 / len(gold)}


def _best_threshold(predictions, scores, na_probs, has_answer):
    """The best total score over no-answer thresholds, and its threshold (v2.0).

    Questions are taken in increasing na_probs order; a threshold just at a
    question's value predicts "no answer" for every later one.

    Returns:
      (percentage of all questions, threshold).
    """
    # Below every value, every question is predicted unanswerable: right for
    # exactly the unanswerable ones that can be thresholded.
    current = sum(1 for qid, has in has_answer.items()
                  if not has and qid in predictions and qid in na_probs)
    best_score, best_threshold = current, 0.0
    for qid in sorted(na_probs, key=na_probs.__getitem__):
        if qid not in scores or qid not in predictions:
            continue
        if has_answer[qid]:
            current += scores[qid]
        elif predictions[qid]:
            current -= 1
        if current > best_score:
            best_score, best_threshold = current, na_probs[qid]
    return 100.0 * best_score / len(scores), best_threshold


def _totals(exact, f1, qids):
    """The exact, f1 and total figures over some questions."""
    return {"exact": 100.0 * sum(exact[q] for q in qids) / len(qids),
            "f1": 100.0 * sum(f1[q] for q in qids) / len(qids),
            "total": len(qids)}


def evaluate(dataset_json_or_path, predictions, na_probs=None, na_prob_thresh=1.0):
    """Scores predictions as evaluate-v2.0.py does.

    Args:
      dataset_json_or_path: a SQuAD file's path, its parsed JSON or its
        "data" list.
      predictions: {question id: predicted text, "" for no answer}.
      na_probs: {question id: no-answer score}, e.g. write_predictions'
        null_odds; optional.
      na_prob_thresh: a question whose na_probs value exceeds this counts as
        predicted unanswerable.

    Returns:
      A dict of percentages (and counts): "exact", "f1", "total"; when there
      are answerable questions "HasAns_exact", "HasAns_f1", "HasAns_total";
      when there are unanswerable ones "NoAns_exact", "NoAns_f1",
      "NoAns_total"; with na_probs, "best_exact", "best_exact_thresh",
      "best_f1", "best_f1_thresh".
    """
    gold = _questions(_articles(dataset_json_or_path))
    _warn_missing(gold, predictions)
    has_answer = {qid: bool(answers) for qid, answers in gold.items()}
    exact_raw, f1_raw = {}, {}
    for qid, answers in gold.items():
        # An answer that normalizes to nothing cannot be matched: for an
        # unanswerable question the only right answer is "".
        ground_truths = [a for a in answers if normalize_answer(a)] or [""]
        prediction = predictions.get(qid)
        if prediction is None:
            exact_raw[qid], f1_raw[qid] = 0, 0.0
            continue
        exact_raw[qid] = max(exact_match_score(prediction, g) for g in ground_truths)
        f1_raw[qid] = max(f1_score(prediction, g) for g in ground_truths)

    exact, f1 = dict(exact_raw), dict(f1_raw)
    for qid in gold:
        if qid in predictions and na_probs is not None and na_probs.get(qid, 0.0) > na_prob_thresh:
            exact[qid] = f1[qid] = float(not has_answer[qid])
    results = _totals(exact, f1, list(gold))
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        qids = [qid for qid, has in has_answer.items() if has == wanted]
        if qids:
            results.update({f"{prefix}_{k}": v for k, v in _totals(exact, f1, qids).items()})
    if na_probs is not None:
        results["best_exact"], results["best_exact_thresh"] = _best_threshold(
            predictions, exact_raw, na_probs, has_answer)
        results["best_f1"], results["best_f1_thresh"] = _best_threshold(
            predictions, f1_raw, na_probs, has_answer)
    return results
