"""SQuAD question answering data: reading, windows, records, predictions and scores.

`read_squad_examples` turns a SQuAD v1.1 or v2.0 JSON file into
`SquadExample`s, as the original run_squad.py reads it, and checks it: a bad
file is a `SquadDataError` that names the file and the question id or JSON
location. `convert_examples_to_features` cuts each example into the
original's `[CLS] question [SEP] context span [SEP]` windows (`InputFeatures`),
tokenizing each distinct context and word once; `window_record` makes each
the record of `record_specs.question_answering_features`. `write_predictions` turns the
windows' start and end logits back into answer texts (by the rule of
answer_rule.py, which the raw-text export follows too), n-best lists and
null odds, in the original's files; `evaluate` and `evaluate_v1` score them with the
official SQuAD 2.0 and 1.1 metrics. `SquadData` gives finetune.run a run's
files as those records, and scores and writes their predictions;
`SquadSettings` is what the run's task and data share.

The modules, each importing only those above it:
  reading.py: JSON files -> SquadExample (SquadDataError), split_context, load_json;
  windows.py: SquadExample -> InputFeatures: doc spans, max context, answer positions;
  settings.py: SquadSettings, checked when built;
  answer_rule.py: the answer rule (the best valid span over a question's
    windows, the null score), which the raw-text export's graph follows too;
  outputs.py: logits -> predictions, n-best lists, null odds (get_final_text);
  scoring.py: the official exact match and F1, v2.0 and v1.1;
  records.py: InputFeatures -> records (window_record); SquadData and
    SquadReferences, for finetune.run.
"""

from bert_tf.data.squad.outputs import get_final_text, write_predictions
from bert_tf.data.squad.reading import SquadDataError, SquadExample, read_squad_examples
from bert_tf.data.squad.records import SquadData, SquadReferences, window_record
from bert_tf.data.squad.scoring import (
    answerable_questions,
    evaluate,
    evaluate_v1,
    exact_match_score,
    f1_score,
    gold_answers,
    normalize_answer,
)
from bert_tf.data.squad.settings import SquadSettings
from bert_tf.data.squad.windows import (
    DOC_STRIDE_MEANINGS,
    InputFeatures,
    check_doc_stride,
    check_is_max_context,
    check_window_lengths,
    convert_examples_to_features,
    improve_answer_span,
)

__all__ = [
    "DOC_STRIDE_MEANINGS",
    "InputFeatures",
    "SquadData",
    "SquadDataError",
    "SquadExample",
    "SquadReferences",
    "SquadSettings",
    "answerable_questions",
    "check_doc_stride",
    "check_is_max_context",
    "check_window_lengths",
    "convert_examples_to_features",
    "evaluate",
    "evaluate_v1",
    "exact_match_score",
    "f1_score",
    "get_final_text",
    "gold_answers",
    "improve_answer_span",
    "normalize_answer",
    "read_squad_examples",
    "window_record",
    "write_predictions",
]
