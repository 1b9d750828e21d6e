"""Start and end logits -> answer texts, n-best lists and null odds, as the original's files.

Each question's answer is the one answer_rule.py chooses: the valid span of
highest start + end logit over all of its windows (and, for SQuAD 2.0, no
answer when the null score beats it by more than null_score_diff_threshold),
the rule that run_squad.py's raw-text export applies in its graph.

nbest_predictions.json keeps the original run_squad.py's n-best list: for
each window, its n_best_size best start and end positions are paired; a pair
is a candidate when both ends are context pieces, the window is the start
piece's max-context window, the end does not precede the start and the span
is at most max_answer_length pieces. The answer's span is a candidate too,
so it heads the list (the n-best pairs alone can miss it). Candidates are
ranked by start logit + end logit; the best n_best_size distinct texts form
the list, with softmax probabilities over their scores.

A candidate's text is found in the original context, not rebuilt from word
pieces: get_final_text aligns the de-tokenized pieces ("steve smith") with
the words they came from ("Steve Smith's") character by character and keeps
the matching part ("Steve Smith"), with its casing, accents and punctuation.

SQuAD 2.0 (version_2_with_negative): the null answer scores the smallest
start + end logit at [CLS] over the example's windows, and joins the n-best
list. The difference between the null score and the answer span's is
written to null_odds.json, which scoring.evaluate takes as na_probs to
find the best threshold.

One case where the original failed is handled: in SQuAD 2.0 mode, an example
without any valid span (the original raised AttributeError) gets "" and, as
its null odds, the null score against a 0.0 span score.
"""

import collections
import json
import math
import os

import numpy as np
from absl import logging

from bert_tf import io_utils
from bert_tf.data.squad import answer_rule
from bert_tf.text import tokenization

_PrelimPrediction = collections.namedtuple(
    "_PrelimPrediction", ["feature_index", "start_index", "end_index", "start_logit",
                          "end_logit"])
_NbestPrediction = collections.namedtuple(
    "_NbestPrediction", ["text", "start_logit", "end_logit"])


def _strip_spaces(text):
    """Returns text without spaces, and each of its characters' index in text."""
    kept = [(index, char) for index, char in enumerate(text) if char != " "]
    return "".join(char for _, char in kept), [index for index, _ in kept]


def get_final_text(pred_text, orig_text, do_lower_case, verbose_logging=False):
    """Projects a de-tokenized prediction back onto the original text.

    orig_text is basic-tokenized (lower-cased, accents stripped, punctuation
    split off, as the model saw it) and pred_text found in it. When the
    tokenized and original texts have the same characters apart from spaces,
    they are aligned one to one and the matching part of orig_text is
    returned. Otherwise (the alignment heuristic fails, e.g. a character that
    tokenization drops or decomposes) the whole orig_text is returned.

    Args:
      pred_text: the prediction's pieces, joined with "##" removed and
        whitespace normalized: "steve smith".
      orig_text: the original words the pieces came from, space-joined:
        "Steve Smith's".
      do_lower_case: the tokenizer's casing.
      verbose_logging: log why an alignment failed.

    Returns:
      The prediction's text as in the context: "Steve Smith".
    """
    tok_text = " ".join(tokenization.BasicTokenizer(do_lower_case=do_lower_case)
                        .tokenize(orig_text))
    start_position = tok_text.find(pred_text)
    if start_position == -1:
        if verbose_logging:
            logging.info("Unable to find text: '%s' in '%s'", pred_text, orig_text)
        return orig_text
    end_position = start_position + len(pred_text) - 1

    orig_ns_text, orig_ns_to_s = _strip_spaces(orig_text)
    tok_ns_text, tok_ns_to_s = _strip_spaces(tok_text)
    if len(orig_ns_text) != len(tok_ns_text):
        if verbose_logging:
            logging.info("Length not equal after stripping spaces: '%s' vs '%s'",
                         orig_ns_text, tok_ns_text)
        return orig_text

    # Both texts have the same characters, spaces aside: character i of the
    # space-free tokenized text stands for character i of the space-free
    # original. A match starting or ending on a space cannot be mapped.
    tok_s_to_ns = {s_index: ns_index for ns_index, s_index in enumerate(tok_ns_to_s)}
    if start_position not in tok_s_to_ns:
        if verbose_logging:
            logging.info("Couldn't map start position")
        return orig_text
    if end_position not in tok_s_to_ns:
        if verbose_logging:
            logging.info("Couldn't map end position")
        return orig_text
    orig_start = orig_ns_to_s[tok_s_to_ns[start_position]]
    orig_end = orig_ns_to_s[tok_s_to_ns[end_position]]
    return orig_text[orig_start:orig_end + 1]


def _best_indexes(logits, n_best_size):
    """The indexes of the n_best_size largest logits, best first (ties in index order)."""
    return sorted(range(len(logits)), key=logits.__getitem__, reverse=True)[:n_best_size]


def _softmax(scores):
    """Softmax probabilities of a list of scores, in Python floats."""
    if not scores:
        return []
    max_score = max(scores)
    exp_scores = [math.exp(score - max_score) for score in scores]
    total = sum(exp_scores)
    return [score / total for score in exp_scores]


def _logits(results, unique_id):
    """A window's (start_logits, end_logits) as lists of Python floats."""
    if unique_id not in results:
        raise ValueError(f"no result for window {unique_id}: every window of the "
                         "predicted examples needs its logits")
    start_logits, end_logits = results[unique_id]
    return list(map(float, start_logits)), list(map(float, end_logits))


def _candidate_text(example, feature, start_index, end_index, do_lower_case, verbose_logging):
    """The text of a span of a window's pieces, as it is in the example's context."""
    tok_tokens = feature.tokens[start_index:end_index + 1]
    orig_doc_start = feature.token_to_orig_map[start_index]
    orig_doc_end = feature.token_to_orig_map[end_index]
    orig_text = " ".join(example.doc_tokens[orig_doc_start:orig_doc_end + 1])
    # Join the pieces back into words, then normalize whitespace.
    tok_text = " ".join(tok_tokens).replace(" ##", "").replace("##", "")
    tok_text = " ".join(tok_text.split())
    return get_final_text(tok_text, orig_text, do_lower_case, verbose_logging)


def _window_layout(features, seq):
    """answer_rule.best_span's context_start, context_length and start_allowed of windows.

    Args:
      features: One example's windows.InputFeatures.
      seq: The logits' length.

    Returns:
      (context_start, context_length, start_allowed): int [windows] twice
      and bool [windows, seq].
    """
    context_start = np.array([min(f.token_to_orig_map) for f in features], np.int64)
    context_length = np.array([len(f.token_to_orig_map) for f in features], np.int64)
    start_allowed = np.zeros([len(features), seq], bool)
    for row, feature in enumerate(features):
        for position, is_max_context in feature.token_is_max_context.items():
            start_allowed[row, position] = is_max_context
    return context_start, context_length, start_allowed


def _score(prediction):
    """A candidate's score as answer_rule.py adds it: start + end logit in float32."""
    return np.float32(prediction.start_logit) + np.float32(prediction.end_logit)


def _predict_example(example, features, results, settings):
    """The answer, the n-best list and the null score of one example.

    Args:
      example: a reading.SquadExample.
      features: its windows.InputFeatures.
      results: {unique_id: (start_logits, end_logits)}.
      settings: (n_best_size, max_answer_length, do_lower_case,
        version_2_with_negative, verbose_logging).

    Returns:
      (nbest, answer, null): the list of _NbestPrediction, best first; the
      _NbestPrediction of answer_rule.best_span's span (None when no span
      is valid); and the _NbestPrediction of the null answer (None without
      version 2).
    """
    n_best_size, max_answer_length, do_lower_case, version_2, verbose_logging = settings
    logits = [_logits(results, feature.unique_id) for feature in features]
    prelim_predictions = []
    answer = None
    if features:
        start_logits = np.array([start for start, _ in logits], np.float32)
        end_logits = np.array([end for _, end in logits], np.float32)
        span = answer_rule.best_span(start_logits, end_logits,
                                     *_window_layout(features, start_logits.shape[1]),
                                     max_answer_length)
        if span is not None:
            # First among the candidates: on a tie in score, sorting keeps it ahead.
            answer = _PrelimPrediction(span.window, span.start, span.end,
                                       logits[span.window][0][span.start],
                                       logits[span.window][1][span.end])
            prelim_predictions.append(answer)
    null = None
    null_feature_index = 0
    for feature_index, (feature, (start_logits, end_logits)) in enumerate(
            zip(features, logits, strict=True)):
        if version_2:
            # The null answer is scored where it is least likely: the window
            # whose [CLS] start + end logit is smallest.
            null_score = start_logits[0] + end_logits[0]
            if null is None or null_score < null.start_logit + null.end_logit:
                null = _NbestPrediction("", start_logits[0], end_logits[0])
                null_feature_index = feature_index
        end_indexes = _best_indexes(end_logits, n_best_size)
        for start_index in _best_indexes(start_logits, n_best_size):
            for end_index in end_indexes:
                # The model can point into the question, at padding or at a
                # piece scored in another window: those pairs are no answer.
                if (start_index >= len(feature.tokens) or end_index >= len(feature.tokens)
                        or start_index not in feature.token_to_orig_map
                        or end_index not in feature.token_to_orig_map
                        or not feature.token_is_max_context.get(start_index, False)
                        or end_index < start_index
                        or end_index - start_index + 1 > max_answer_length):
                    continue
                prelim_predictions.append(_PrelimPrediction(
                    feature_index, start_index, end_index, start_logits[start_index],
                    end_logits[end_index]))
    if version_2:
        if null is None:
            # No window at all: the original's starting values.
            null = _NbestPrediction("", 0.0, 0.0)
        prelim_predictions.append(_PrelimPrediction(
            null_feature_index, 0, 0, null.start_logit, null.end_logit))
    # sorted is stable: equal scores keep the order in which they were found.
    prelim_predictions.sort(key=_score, reverse=True)

    seen = set()
    nbest = []
    for prediction in prelim_predictions:
        if len(nbest) >= n_best_size:
            break
        if prediction.start_index > 0:
            text = _candidate_text(example, features[prediction.feature_index],
                                   prediction.start_index, prediction.end_index,
                                   do_lower_case, verbose_logging)
            if text in seen:
                continue
        else:
            text = ""
        seen.add(text)
        nbest.append(_NbestPrediction(text, prediction.start_logit, prediction.end_logit))
    if version_2 and "" not in seen:
        nbest.append(null)
    if not nbest:
        # No valid span at all (a tiny max_answer_length, say): a placeholder
        # answer, as in the original, so that every question gets one.
        nbest.append(_NbestPrediction("empty", 0.0, 0.0))
    if answer is not None:
        answer = _NbestPrediction(
            _candidate_text(example, features[answer.feature_index], answer.start_index,
                            answer.end_index, do_lower_case, verbose_logging),
            answer.start_logit, answer.end_logit)
    return nbest, answer, null


def _write_json(path, value):
    """Writes value as the original did: JSON indented by 4, a final newline."""
    with io_utils.atomic_write(path) as f:
        f.write(json.dumps(value, indent=4) + "\n")


def write_predictions(examples, features, results, n_best_size, max_answer_length,
                      do_lower_case, version_2_with_negative=False,
                      null_score_diff_threshold=0.0, verbose_logging=False, output_dir=None):
    """Turns the windows' logits into each question's answer text and n-best list.

    Args:
      examples: the reading.SquadExample list that was converted.
      features: the windows.InputFeatures of those examples.
      results: {unique_id: (start_logits, end_logits)}, sequences of
        max_seq_length floats (lists or numpy arrays) for every window.
      n_best_size: start and end positions tried per window, and the length
        of each n-best list.
      max_answer_length: the longest answer, in word pieces.
      do_lower_case: the tokenizer's casing, for get_final_text.
      version_2_with_negative: whether a question may have no answer.
      null_score_diff_threshold: predict "" when the null score exceeds the
        best answer's by more than this.
      verbose_logging: log the alignments get_final_text fails to make.
      output_dir: when given, predictions.json, nbest_predictions.json and
        (version 2) null_odds.json are written there, each atomically.

    Returns:
      (predictions, nbest, null_odds): {qas_id: answer text}; {qas_id: list
      of {"text", "probability", "start_logit", "end_logit"}, best first};
      {qas_id: null score - best non-null score} in version 2, else {}.
      Each dict is in example order.

    Raises:
      ValueError: when a window has no result.
    """
    features_by_example = collections.defaultdict(list)
    for feature in features:
        features_by_example[feature.example_index].append(feature)
    settings = (n_best_size, max_answer_length, do_lower_case, version_2_with_negative,
                verbose_logging)
    predictions, all_nbest, null_odds = {}, {}, {}
    for example_index, example in enumerate(examples):
        nbest, answer, null = _predict_example(
            example, features_by_example[example_index], results, settings)
        probabilities = _softmax([entry.start_logit + entry.end_logit for entry in nbest])
        all_nbest[example.qas_id] = [
            {"text": entry.text, "probability": probability,
             "start_logit": entry.start_logit, "end_logit": entry.end_logit}
            for entry, probability in zip(nbest, probabilities, strict=True)]
        if not version_2_with_negative:
            predictions[example.qas_id] = nbest[0].text if answer is None else answer.text
            continue
        # The window of the lowest [CLS] score: answer_rule.null_score's.
        null_score = _score(null)
        if answer is None:
            null_odds[example.qas_id] = float(null_score)
            predictions[example.qas_id] = ""
            continue
        span_score = _score(answer)
        null_odds[example.qas_id] = float(null_score - span_score)
        predictions[example.qas_id] = (
            "" if answer_rule.abstains(null_score, span_score, null_score_diff_threshold)
            else answer.text)

    if output_dir is not None:
        _write_json(os.path.join(output_dir, "predictions.json"), predictions)
        _write_json(os.path.join(output_dir, "nbest_predictions.json"), all_nbest)
        if version_2_with_negative:
            _write_json(os.path.join(output_dir, "null_odds.json"), null_odds)
        logging.info("Wrote the predictions of %d questions to %s", len(predictions),
                     output_dir)
    return predictions, all_nbest, null_odds
