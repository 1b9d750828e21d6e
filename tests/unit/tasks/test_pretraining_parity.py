"""One pretraining step against Hugging Face BertForPreTraining and the papers' optimizers.

The reference comes from tools/make_pretraining_parity_fixture.py: a tiny
random transformers BertForPreTraining runs the original run_pretraining.py's
recipe on one batch (in float64, from float32 weights), and numpy applies
three first updates to its gradients: AdamW with bias correction, the
original's AdamW without it, and LAMB. This test needs neither torch nor
transformers: it loads the same weights into bert_tf through
checkpoints.load_weights and reads every gradient and updated weight back
under Hugging Face's names through checkpoints.save_hf_folder.

Tolerances, per tensor, with the reference's own scale as the yardstick (a
tensor that differs anywhere by more than 1e-5 of its largest value fails):
  * logits, losses, gradients: max|ours - ref| <= TOLERANCE * max|ref|
    (the key biases, whose exact gradient is 0, against their layer's key
    weights' gradient instead);
  * an update: |ours - ref| <= TOLERANCE * max|ref - initial| + one float32
    spacing of the weight, elementwise: 1e-5 of the largest step, plus the one
    rounding that storing a float32 weight makes (a step of 1e-3 on a
    LayerNorm weight near 1 is resolved to about 1e-4 of itself).
"""

import json
import os

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import load_file, save_file

from bert_tf.checkpoints import checkpoints
from bert_tf.model.heads import MaskedLMHead
from bert_tf.model.modeling import BertModel
from bert_tf.tasks.pretraining import PretrainingTask
from bert_tf.training.optimization import create_optimizer
from tests import helpers

FIXTURE = os.path.join(helpers.FIXTURES, "parity_pretraining.npz")
TOLERANCE = 1e-5
FEATURES = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions",
            "masked_lm_ids", "masked_lm_weights", "next_sentence_labels")
# The fixture's prefix of each update: create_optimizer's optimizer_type, bias_correction.
OPTIMIZERS = {"adamw": ("adamw", True), "adamw_original": ("adamw", False),
              "lamb": ("lamb", True)}


@pytest.fixture(scope="module")
def reference():
    return dict(np.load(FIXTURE))


def _prefixed(reference, prefix):
    """{Hugging Face name: array} of the fixture's tensors under `prefix`/."""
    return {key[len(prefix) + 1:]: value for key, value in reference.items()
            if key.startswith(prefix + "/")}


def _hf_folder(folder, reference, tensors):
    """Writes tensors as a Hugging Face folder with the fixture's config.json."""
    os.makedirs(folder, exist_ok=True)
    save_file(tensors, os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        f.write(str(reference["config"]))
    return folder


def _load(folder):
    """A BertModel and the pretraining heads, loaded from a Hugging Face folder.

    Returns:
      (task, encoder, heads, variables, load report); variables are the
      trainable ones in training.Trainer's order (encoder, then heads by key).
    """
    task = PretrainingTask()
    encoder = BertModel(checkpoints.find_config(folder))
    heads = task.create_heads(encoder)
    report = checkpoints.load_weights(folder, encoder, heads)
    variables = list(encoder.trainable_variables)
    for key in sorted(heads):
        variables += heads[key].trainable_variables
    return task, encoder, heads, variables, report


def _hf_tensors(folder, encoder, heads):
    """The model's weights under Hugging Face's names, without the tied copies."""
    checkpoints.save_hf_folder(folder, encoder, heads)
    tensors = load_file(os.path.join(folder, "model.safetensors"))
    for copy in MaskedLMHead.hf_copies:
        del tensors[copy]
    return tensors


@pytest.fixture(scope="module")
def weights_folder(reference, tmp_path_factory):
    return _hf_folder(str(tmp_path_factory.mktemp("initial")), reference,
                      _prefixed(reference, "init"))


@pytest.fixture(scope="module")
def step(reference, weights_folder, tmp_path_factory):
    """bert_tf's forward pass, losses and gradients on the fixture's batch.

    Returns:
      {"outputs", "losses", "grads" ({Hugging Face name: gradient}), "report"}.
    """
    task, encoder, heads, variables, report = _load(weights_folder)
    features = {key: tf.constant(reference[key]) for key in FEATURES}
    # As training.Trainer computes gradients: training=True, which with the
    # fixture's dropout probabilities of 0 is deterministic.
    with tf.GradientTape() as tape:
        outputs = task.forward(encoder, heads, features, training=True)
        losses = task.losses(features, outputs)
    grads = tape.gradient(losses["loss"], variables)
    # A second model holds the gradients in place of the weights, so that
    # save_hf_folder names and lays them out as Hugging Face does.
    _, grad_encoder, grad_heads, grad_variables, _ = _load(weights_folder)
    for variable, grad in zip(grad_variables, grads, strict=True):
        variable.assign(tf.convert_to_tensor(grad))
    folder = str(tmp_path_factory.mktemp("gradients"))
    return {"outputs": outputs, "losses": losses, "report": report,
            "grads": _hf_tensors(folder, grad_encoder, grad_heads)}


def _relative_error(ours, ref):
    """max|ours - ref| / max|ref|, the error in units of the tensor's scale."""
    ours, ref = np.asarray(ours, np.float64), np.asarray(ref, np.float64)
    assert ours.shape == ref.shape
    return float(np.max(np.abs(ours - ref)) / np.max(np.abs(ref)))


def test_fixture_covers_the_recipe(reference):
    weights = reference["masked_lm_weights"]
    padded = weights == 0
    # Rows with unused prediction slots, written as the original writes them,
    # and rows with every slot used.
    assert padded.any() and (~padded).all(axis=1).any()
    assert (reference["masked_lm_positions"][padded] == 0).all()
    assert (reference["masked_lm_ids"][padded] == 0).all()
    assert set(np.unique(weights).tolist()) == {0.0, 1.0}
    assert set(reference["next_sentence_labels"][:, 0].tolist()) == {0, 1}
    lengths = reference["input_mask"].sum(axis=1)
    assert lengths.min() < reference["input_mask"].shape[1] and len(set(lengths)) > 4
    assert reference["segment_ids"].max() == 1
    # Clipping changes the update only when the norm exceeds the clip norm.
    clip_norm = json.loads(str(reference["optimizer"]))["clip_norm"]
    assert reference["gradient_norm"] > 2 * clip_norm
    grads = _prefixed(reference, "grad")
    norm = np.sqrt(sum(np.sum(np.square(g.astype(np.float64))) for g in grads.values()))
    np.testing.assert_allclose(norm, reference["gradient_norm"], rtol=1e-12)
    initial = _prefixed(reference, "init")
    # Biases and LayerNorm weights are random, so that a wrongly decayed or
    # misplaced one shows.
    for name, value in initial.items():
        if name.endswith("bias"):
            assert np.abs(value).min() > 0, name
        elif name.endswith("LayerNorm.weight"):
            assert np.abs(value - 1).max() > 0.1, name
    for prefix in OPTIMIZERS:
        assert set(_prefixed(reference, prefix)) == set(grads)


def test_loads_every_weight(reference, step):
    report = step["report"]
    assert report.format == "hf" and report.initialized == []
    # Hugging Face's tied copies of the decoder are not loaded: the MLM head
    # reads the word embeddings and its own bias.
    assert set(report.skipped) == {"cls.predictions.decoder.weight",
                                   "cls.predictions.decoder.bias"}
    # Encoder names without BertForPreTraining's "bert." prefix.
    assert set(report.loaded) == {name.removeprefix("bert.")
                                  for name in _prefixed(reference, "grad")}


def test_logits_match(reference, step):
    for key in ("mlm_logits", "nsp_logits"):
        error = _relative_error(step["outputs"][key].numpy(), reference[key])
        assert error <= TOLERANCE, f"{key}: relative error {error:.2e}"


def test_losses_match(reference, step):
    for key in ("loss", "masked_lm_loss", "next_sentence_loss"):
        error = _relative_error(step["losses"][key].numpy(), reference[key])
        assert error <= TOLERANCE, f"{key}: relative error {error:.2e}"


def test_masked_lm_loss_without_predictions_is_zero(reference, step):
    """The original's + 1e-5 in the denominator: 0 / 1e-5, not 0 / 0."""
    features = {key: tf.constant(reference[key]) for key in FEATURES}
    features["masked_lm_weights"] = tf.zeros_like(features["masked_lm_weights"])
    losses = PretrainingTask().losses(features, step["outputs"])
    assert losses["masked_lm_loss"].numpy() == 0.0


def test_gradients_match(reference, step):
    expected = _prefixed(reference, "grad")
    grads = step["grads"]
    assert set(grads) == set(expected)
    for name, ref in expected.items():
        if name.endswith("attention.self.key.bias"):
            # Adding the key bias adds q . b to every score of a query's row,
            # which the softmax ignores: its gradient is 0 (float64 rounding
            # in the reference), ours float32 rounding. Measured against the
            # same layer's key weight gradient.
            scale = np.abs(expected[name.replace(".bias", ".weight")]).max()
            assert np.abs(ref).max() <= 1e-12 * scale, name
            assert np.abs(grads[name]).max() <= TOLERANCE * scale, name
            continue
        error = _relative_error(grads[name], ref)
        assert error <= TOLERANCE, f"{name}: relative error {error:.2e}"


@pytest.mark.parametrize("prefix", sorted(OPTIMIZERS))
def test_first_update_matches(reference, weights_folder, tmp_path, prefix):
    """create_optimizer's first update from the fixture's own gradients."""
    settings = json.loads(str(reference["optimizer"]))
    optimizer_type, bias_correction = OPTIMIZERS[prefix]
    _, encoder, heads, variables, _ = _load(weights_folder)
    # The fixture's gradients, in the variables' layout: loaded as weights.
    grad_folder = _hf_folder(str(tmp_path / "grads"), reference, _prefixed(reference, "grad"))
    *_, grad_variables, _ = _load(grad_folder)
    optimizer = create_optimizer(
        settings["learning_rate"], num_train_steps=10, num_warmup_steps=0,
        optimizer_type=optimizer_type, weight_decay_rate=settings["weight_decay_rate"],
        beta_1=settings["beta_1"], beta_2=settings["beta_2"], epsilon=settings["epsilon"],
        clip_norm=settings["clip_norm"], bias_correction=bias_correction)
    # Without warmup the first update runs at the peak rate.
    assert optimizer.learning_rate.numpy() == np.float32(settings["learning_rate"])
    optimizer.apply([tf.convert_to_tensor(v) for v in grad_variables], variables)
    updated = _hf_tensors(str(tmp_path / "updated"), encoder, heads)
    expected = _prefixed(reference, prefix)
    initial = _prefixed(reference, "init")
    assert set(updated) == set(expected)
    for name, ref in expected.items():
        ref64 = ref.astype(np.float64)
        step_scale = np.abs(ref64 - initial[name]).max()
        allowed = TOLERANCE * step_scale + np.spacing(np.abs(ref))
        error = np.abs(updated[name].astype(np.float64) - ref64)
        assert (error <= allowed).all(), (
            f"{prefix} {name}: max error {error.max():.2e}, "
            f"{error.max() / step_scale:.2e} of the largest step")
