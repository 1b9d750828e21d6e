"""CoNLL-2003 token tagging (NER) data: reading, scoring and writing predictions.

`read_conll` turns a CoNLL token file ("word TAG", "word TAG 0" or
"word POS chunk TAG"; blank lines between sentences, "-DOCSTART-" lines
between documents) into `Sentence`s that remember each word's line, and
checks it: a bad line is a `ConllDataError` that gives `path:line`.
`label_list` orders the tags for a model's label ids. `entity_scores` scores
predicted tags with conlleval's entity-level precision, recall and F1, and
`write_conll` writes the input file back with a predicted tag column.
`ConllData` gives finetune.run a run's files as the records of their
sentences' windows (`convert_sentences`), and scores and writes their
predictions.

The modules, each importing only those above it:
  reading.py: files -> Sentence (ConllDataError), label_list;
  scoring.py: entity_spans and entity_scores, conlleval's rules;
  outputs.py: write_conll, through bert_tf.io_utils.atomic_write;
  settings.py: ConllSettings (the window stride), checked when built;
  records.py: sentences -> word pieces -> windows -> tagging records;
    ConllData and ConllReferences: scores and the predicted file, each
    word's tag from its window (word_predictions).
"""

from bert_tf.data.conll.outputs import write_conll
from bert_tf.data.conll.reading import ConllDataError, Sentence, label_list, read_conll
from bert_tf.data.conll.records import (
    LABEL_FILE,
    ConllData,
    ConllReferences,
    convert_sentence,
    convert_sentences,
    tag_ids,
    windows,
    word_pieces,
    word_predictions,
)
from bert_tf.data.conll.scoring import entity_scores, entity_spans
from bert_tf.data.conll.settings import ConllSettings, default_window_stride

__all__ = [
    "LABEL_FILE",
    "ConllData",
    "ConllDataError",
    "ConllReferences",
    "ConllSettings",
    "Sentence",
    "convert_sentence",
    "convert_sentences",
    "default_window_stride",
    "entity_scores",
    "entity_spans",
    "label_list",
    "read_conll",
    "tag_ids",
    "windows",
    "word_pieces",
    "word_predictions",
    "write_conll",
]

