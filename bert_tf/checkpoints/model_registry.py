"""The pretrained BERTs bert_tf knows by name: Google's releases and the original BERTs on
the Hugging Face Hub.

Google's names are the ones the original repository's README lists, each
the folder its zip unpacks to (uncased_L-12_H-768_A-12, ...): BERT-Base and
BERT-Large, cased and uncased, whole word masking, the multilingual and
Chinese models, and the 24 small BERTs of 2020 (BERT-Tiny to BERT-Base; the
one of them that is BERT-Base's size shares its name with the 2018
BERT-Base, which the name means). Hugging Face ids are open-ended: any
repository id is tried (model_names.py); the ones listed here are Google's
models as Hugging Face publishes them, so that a list and a misspelt name
can point at them.

Each model's size is its parameter count, computed from its architecture.
Nothing here reads the network or the disk.
"""

import dataclasses
import difflib

# Hidden size per attention head in every released BERT (A = H / 64).
_HEAD_SIZE = 64
# Every released BERT has 512 positions and 2 token types.
_POSITIONS = 512
_TOKEN_TYPES = 2

# Vocab sizes of the released vocabularies.
_UNCASED_VOCAB = 30522
_CASED_VOCAB = 28996
_MULTI_CASED_VOCAB = 119547
_MULTI_UNCASED_VOCAB = 105879
_CHINESE_VOCAB = 21128

GOOGLE = "google"
HUGGING_FACE = "hf"


@dataclasses.dataclass(frozen=True)
class KnownModel:
    """A pretrained BERT that bert_tf can fetch by name.

    Attributes:
      name: What a user types: Google's folder name or a Hugging Face id.
      source: GOOGLE (a zip of the original's checkpoint folder) or
        HUGGING_FACE (a Hub repository with model.safetensors).
      location: Where the source keeps it: the zip's path under Google's
        base URL, or the Hub repository id.
      description: What the original's README calls it.
      do_lower_case: Whether its tokenizer lower-cases (uncased models).
      num_layers: Its transformer layers (L).
      hidden_size: Its hidden size (H); it has H / 64 attention heads (A).
      vocab_size: Its word pieces.
    """

    name: str
    source: str
    location: str
    description: str
    do_lower_case: bool
    num_layers: int
    hidden_size: int
    vocab_size: int

    def parameters(self):
        """The encoder's parameters, as BertModel holds them.

        Returns:
          The count: embeddings, layers and pooler (not the pretraining heads).
        """
        hidden, intermediate = self.hidden_size, 4 * self.hidden_size
        layer_norm = 2 * hidden
        embeddings = (self.vocab_size + _POSITIONS + _TOKEN_TYPES) * hidden + layer_norm
        attention = 4 * (hidden * hidden + hidden) + layer_norm
        feed_forward = (hidden * intermediate + intermediate
                        + intermediate * hidden + hidden + layer_norm)
        pooler = hidden * hidden + hidden
        return embeddings + self.num_layers * (attention + feed_forward) + pooler


def _google(date, name, description, do_lower_case, num_layers, hidden_size, vocab_size):
    """A KnownModel of Google's bucket, whose zip is date/name.zip."""
    return KnownModel(name, GOOGLE, f"{date}/{name}.zip", description, do_lower_case,
                      num_layers, hidden_size, vocab_size)


def _small_berts():
    """The 24 small BERTs of 2020, uncased: L in 2..12, H in 128..768."""
    sizes = {(2, 128): "BERT-Tiny", (4, 256): "BERT-Mini", (4, 512): "BERT-Small",
             (8, 512): "BERT-Medium", (12, 768): "BERT-Base"}
    models = []
    for num_layers in (2, 4, 6, 8, 10, 12):
        for hidden_size in (128, 256, 512, 768):
            name = f"uncased_L-{num_layers}_H-{hidden_size}_A-{hidden_size // _HEAD_SIZE}"
            description = f"Small BERT, L-{num_layers} H-{hidden_size}"
            if (num_layers, hidden_size) in sizes:
                description += f" ({sizes[num_layers, hidden_size]})"
            models.append(_google("2020_02_20", name, description, True, num_layers,
                                  hidden_size, _UNCASED_VOCAB))
    return models


def _hugging_face(repo_id, description, do_lower_case, num_layers, hidden_size, vocab_size):
    """A KnownModel of the Hugging Face Hub."""
    return KnownModel(repo_id, HUGGING_FACE, repo_id, description, do_lower_case,
                      num_layers, hidden_size, vocab_size)


_GOOGLE_MODELS = [
    _google("2018_10_18", "uncased_L-12_H-768_A-12", "BERT-Base, Uncased", True, 12, 768,
            _UNCASED_VOCAB),
    _google("2018_10_18", "uncased_L-24_H-1024_A-16", "BERT-Large, Uncased", True, 24, 1024,
            _UNCASED_VOCAB),
    _google("2018_10_18", "cased_L-12_H-768_A-12", "BERT-Base, Cased", False, 12, 768,
            _CASED_VOCAB),
    _google("2018_10_18", "cased_L-24_H-1024_A-16", "BERT-Large, Cased", False, 24, 1024,
            _CASED_VOCAB),
    _google("2019_05_30", "wwm_uncased_L-24_H-1024_A-16",
            "BERT-Large, Uncased (Whole Word Masking)", True, 24, 1024, _UNCASED_VOCAB),
    _google("2019_05_30", "wwm_cased_L-24_H-1024_A-16",
            "BERT-Large, Cased (Whole Word Masking)", False, 24, 1024, _CASED_VOCAB),
    _google("2018_11_23", "multi_cased_L-12_H-768_A-12", "BERT-Base, Multilingual Cased",
            False, 12, 768, _MULTI_CASED_VOCAB),
    _google("2018_11_03", "multilingual_L-12_H-768_A-12",
            "BERT-Base, Multilingual Uncased (not recommended: use multi_cased)", True, 12, 768,
            _MULTI_UNCASED_VOCAB),
    _google("2018_11_03", "chinese_L-12_H-768_A-12", "BERT-Base, Chinese", True, 12, 768,
            _CHINESE_VOCAB),
    # The small BERT of BERT-Base's size, retrained in 2020, is left out:
    # its name is the 2018 BERT-Base's.
    *[model for model in _small_berts() if model.name != "uncased_L-12_H-768_A-12"],
]

_HUGGING_FACE_MODELS = [
    _hugging_face("google-bert/bert-base-uncased", "BERT-Base, Uncased", True, 12, 768,
                  _UNCASED_VOCAB),
    _hugging_face("google-bert/bert-base-cased", "BERT-Base, Cased", False, 12, 768,
                  _CASED_VOCAB),
    _hugging_face("google-bert/bert-large-uncased", "BERT-Large, Uncased", True, 24, 1024,
                  _UNCASED_VOCAB),
    _hugging_face("google-bert/bert-large-cased", "BERT-Large, Cased", False, 24, 1024,
                  _CASED_VOCAB),
    _hugging_face("google-bert/bert-base-multilingual-cased",
                  "BERT-Base, Multilingual Cased", False, 12, 768, _MULTI_CASED_VOCAB),
    _hugging_face("google-bert/bert-base-chinese", "BERT-Base, Chinese", True, 12, 768,
                  _CHINESE_VOCAB),
]

KNOWN_MODELS = {model.name: model for model in _GOOGLE_MODELS + _HUGGING_FACE_MODELS}
# The Hub serves Google's repositories under their legacy ids too.
_LEGACY_OWNER = "google-bert/"


def find(name):
    """The KnownModel of a name, or None.

    Args:
      name: A Google model name or a listed Hugging Face id; Hugging Face's
        legacy ids without an owner (bert-base-uncased) name the same model.

    Returns:
      The KnownModel, or None for a name not listed here.
    """
    if name in KNOWN_MODELS:
        return KNOWN_MODELS[name]
    return KNOWN_MODELS.get(f"{_LEGACY_OWNER}{name}")


def nearest(name, candidates=(), count=3):
    """The known names nearest to a name that resolves to nothing, nearest first.

    Args:
      name: The name given.
      candidates: More names to consider (keras-hub's presets).
      count: How many to return at most.

    Returns:
      A list of names; empty when none is close.
    """
    legacy = [name.removeprefix(_LEGACY_OWNER) for name in KNOWN_MODELS
              if name.startswith(_LEGACY_OWNER)]
    names = [*KNOWN_MODELS, *legacy, *candidates]
    return difflib.get_close_matches(name, names, n=count, cutoff=0.5)
