"""Entity-level precision, recall and F1 as conlleval computes them.

conlleval (the CoNLL-2000/2003 scorer) counts an entity as correct only when
its first token, its last token and its type all match. Its chunk rules are
lenient: an I- tag that follows "O", or a tag of another type, starts a new
entity instead of being an error, so IOB1 and sloppy IOB2 predictions are
scored too. `entity_spans` follows those rules exactly.

seqeval's default mode (f1_score, classification_report without mode="strict")
implements the same rules and gives the same numbers for B-/I-/O tags; the
tests check this. Where the two libraries part:
  - seqeval only warns about a malformed tag and reads E-/S- (IOBES) tags;
    here any tag other than "O", "B-TYPE" or "I-TYPE" is a ValueError;
  - seqeval's mode="strict" with scheme=IOB2 drops an entity that starts with
    I-; conlleval, and this module, do not;
  - conlleval prints percentages; these are fractions in [0, 1].

Pure Python: no numpy or TensorFlow.
"""

import collections

from bert_tf.data.conll.reading import TAG_PATTERN


def _split_tag(tag, position):
    """The prefix ("B", "I" or "O") and type ("" for "O") of a tag.

    Args:
      tag: A tag string.
      position: Its index, for the message.

    Returns:
      A (prefix, type) pair of str.

    Raises:
      ValueError: The tag is not "O", "B-TYPE" or "I-TYPE".
    """
    if tag == "O":
        return "O", ""
    if not isinstance(tag, str) or not TAG_PATTERN.fullmatch(tag):
        raise ValueError(f"tag {tag!r} at position {position} is not 'O', 'B-TYPE' or 'I-TYPE'")
    return tag[0], tag[2:]


def entity_spans(tags):
    """The entities of a tag sequence, by conlleval's rules.

    An entity starts at every B-X, and at an I-X that follows "O" or a tag of
    another type (conlleval's choice: such an I- is read as the start of an
    entity rather than ignored, which also makes IOB1 tags work). It ends
    before the next "O", the next B- tag or the next tag of another type, or
    at the end of the sequence. So "B-PER B-PER" is two entities, and
    "O I-PER I-PER" one.

    Args:
      tags: A sequence of tag strings.

    Returns:
      A list of (type, start, end) tuples, end exclusive, in order.

    Raises:
      ValueError: A tag is not "O", "B-TYPE" or "I-TYPE".
    """
    spans = []
    start = 0
    previous_prefix, previous_type = "O", ""
    # A final "O" closes an entity that runs to the end.
    for position, tag in enumerate([*tags, "O"]):
        prefix, type_ = _split_tag(tag, position)
        if previous_prefix != "O" and (prefix != "I" or type_ != previous_type):
            spans.append((previous_type, start, position))
        if prefix == "B" or (prefix == "I" and (previous_prefix == "O" or type_ != previous_type)):
            start = position
        previous_prefix, previous_type = prefix, type_
    return spans


def _ratio(numerator, denominator):
    """numerator / denominator as a float, 0.0 when the denominator is 0."""
    return numerator / denominator if denominator else 0.0


def _f1(precision, recall):
    """The harmonic mean of precision and recall, 0.0 when both are 0."""
    return _ratio(2 * precision * recall, precision + recall)


def entity_scores(true_sentences_tags, pred_sentences_tags):
    """Entity-level and token-level scores of predicted tags, as conlleval's.

    An entity is correct when a predicted entity has the same type, start and
    end as a true one. Counts are summed over all sentences (micro average);
    an entity never crosses a sentence boundary.

    Args:
      true_sentences_tags: One sequence of gold tags per sentence.
      pred_sentences_tags: One sequence of predicted tags per sentence, each
        as long as the gold one.

    Returns:
      A dict: the floats "precision", "recall" and "f1" over all entities;
      for every type in the gold or predicted tags, the floats
      "<TYPE>_precision", "<TYPE>_recall", "<TYPE>_f1" and the int
      "<TYPE>_support", the number of true entities of the type; and the float
      "token_accuracy", the fraction of tokens whose predicted tag equals the
      gold one. A ratio with nothing to divide by (no predicted entities, no
      tokens) is 0.0.

    Raises:
      ValueError: The numbers of sentences differ, a sentence's two sequences
        differ in length, or a tag is malformed (the message names the
        sentence index).
    """
    if len(true_sentences_tags) != len(pred_sentences_tags):
        raise ValueError(
            f"{len(true_sentences_tags)} true sentences but {len(pred_sentences_tags)} predicted"
        )
    true_counts = collections.Counter()
    pred_counts = collections.Counter()
    correct_counts = collections.Counter()
    tokens = correct_tokens = 0
    for index, (true_tags, pred_tags) in enumerate(
        zip(true_sentences_tags, pred_sentences_tags, strict=True)
    ):
        if len(true_tags) != len(pred_tags):
            raise ValueError(
                f"sentence {index}: {len(true_tags)} true tags but {len(pred_tags)} predicted"
            )
        try:
            true_spans = set(entity_spans(true_tags))
            pred_spans = set(entity_spans(pred_tags))
        except ValueError as error:
            raise ValueError(f"sentence {index}: {error}") from error
        true_counts.update(type_ for type_, _, _ in true_spans)
        pred_counts.update(type_ for type_, _, _ in pred_spans)
        correct_counts.update(type_ for type_, _, _ in true_spans & pred_spans)
        tokens += len(true_tags)
        correct_tokens += sum(t == p for t, p in zip(true_tags, pred_tags, strict=True))

    def add_scores(results, prefix, correct, true, predicted):
        precision = _ratio(correct, predicted)
        recall = _ratio(correct, true)
        results[prefix + "precision"] = precision
        results[prefix + "recall"] = recall
        results[prefix + "f1"] = _f1(precision, recall)

    results = {}
    add_scores(results, "", sum(correct_counts.values()), sum(true_counts.values()),
               sum(pred_counts.values()))
    for type_ in sorted(true_counts.keys() | pred_counts.keys()):
        add_scores(results, f"{type_}_", correct_counts[type_], true_counts[type_],
                   pred_counts[type_])
        results[f"{type_}_support"] = true_counts[type_]
    results["token_accuracy"] = _ratio(correct_tokens, tokens)
    return results
