"""A pretrained model's files, found and checked together: ModelFiles and find().

A model is its config, its vocab, its casing and its weights. Users name as
few of them as they can: Google's released folders hold bert_config.json and
vocab.txt beside the weights, Hugging Face folders config.json, vocab.txt and
tokenizer_config.json (with the casing); TF Hub encoders and keras-hub
presets hold all three inside. find() fills in what is not given
from beside the checkpoint, with checkpoints.py's readers (find_config,
find_vocab, find_do_lower_case), and checks that the pieces fit each other:
the casing against the folder's record and the vocab, the vocab's size
against the config, max_seq_length against max_position_embeddings.
Fine-tuning, feature extraction and the tools all find a model here.
"""

import dataclasses

import tensorflow as tf

from bert_tf import messages
from bert_tf.checkpoints import checkpoints, model_names
from bert_tf.model.config import BertConfig
from bert_tf.text import tokenization


class ModelFilesError(ValueError):
    """A model's files that are missing or do not fit; the message names the flag or file."""


@dataclasses.dataclass(frozen=True)
class ModelFiles:
    """What fine-tuning and feature extraction need to know of the pretrained model.

    Attributes:
      bert_config: The encoder's BertConfig.
      vocab_file: The vocab.txt it was pretrained with.
      do_lower_case: Whether its input is lower-cased (uncased models).
      init_checkpoint: Its weights (any checkpoints.py format), or None for
        random weights.
    """

    bert_config: BertConfig
    vocab_file: str
    do_lower_case: bool
    init_checkpoint: str | None

    def tokenizer(self):
        """A tokenization.FullTokenizer for this model."""
        return tokenization.FullTokenizer(self.vocab_file, self.do_lower_case)


def find(init_checkpoint, bert_config_file=None, vocab_file=None, do_lower_case=None,
         max_seq_length=None):
    """Finds a pretrained model's config, vocab and casing, and checks that they fit.

    What is not given is looked for beside the checkpoint (see the module
    docstring).

    Args:
      init_checkpoint: The pretrained weights, or None: a path, or a model's
        name (model_names.local_path), which is downloaded once.
      bert_config_file: An explicit config, which wins.
      vocab_file: An explicit vocab, which wins.
      do_lower_case: The casing, or None to take the folder's record (else True).
      max_seq_length: If given, checked against max_position_embeddings.

    Returns:
      A ModelFiles, whose init_checkpoint is the local path of a named model.

    Raises:
      ModelFilesError: naming the flag, when something is missing or does not
        fit: a --do_lower_case that contradicts the checkpoint's recorded
        casing included, and, where nothing records it, --do_lower_case=False
        with an uncased vocab (tokenization.check_case_fits_vocab; True with
        a cased vocab is a warning).
    """
    if not (init_checkpoint or bert_config_file):
        raise ModelFilesError("Give --bert_config_file (or an --init_checkpoint beside which "
                              "one is found).")
    try:
        init_checkpoint = model_names.local_path(init_checkpoint)
        vocab_file = checkpoints.find_vocab(init_checkpoint, vocab_file)
        recorded_case = checkpoints.find_do_lower_case(init_checkpoint, None)
        if do_lower_case is None:
            do_lower_case = True if recorded_case is None else recorded_case
        elif recorded_case is not None and recorded_case != do_lower_case:
            raise ModelFilesError(
                f"--do_lower_case={do_lower_case} contradicts --init_checkpoint="
                f"{init_checkpoint}, whose tokenizer_config.json says do_lower_case="
                f"{recorded_case}: drop the flag (the folder's casing is the default)")
        tokenization.validate_case_matches_checkpoint(do_lower_case, init_checkpoint)
        config = checkpoints.find_config(init_checkpoint, bert_config_file)
        vocab = tokenization.load_vocab(vocab_file)
    except (ValueError, OSError, tf.errors.OpError) as e:
        # ConfigError, CheckpointError, ModelNameError, an unreadable file: all
        # name the file or the model.
        raise ModelFilesError(str(e)) from None
    # A checkpoint that records its casing nowhere: its vocab still tells.
    if recorded_case is None:
        try:
            tokenization.check_case_fits_vocab(do_lower_case, vocab, vocab_file)
        except tokenization.CasingError as e:
            raise ModelFilesError(str(e)) from None
        mismatch = tokenization.case_mismatch_with_vocab(do_lower_case, vocab, vocab_file)
        if mismatch:
            messages.warn(mismatch)
    if max_seq_length is not None:
        try:
            config.check_max_seq_length(max_seq_length)
        except ValueError as e:
            raise ModelFilesError(str(e)) from None
    try:
        config.check_vocab_size(len(vocab), vocab_file)
    except ValueError as e:
        raise ModelFilesError(f"{e}: the checkpoint was trained with another vocab") from None
    return ModelFiles(config, vocab_file, do_lower_case, init_checkpoint)
