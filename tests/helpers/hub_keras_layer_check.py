"""What a TF Hub user does with bert_tf's exported encoder and preprocessor; run by test_tf_hub.py.

hub.KerasLayer is a tf-keras (Keras 2) layer, so this runs in its own
process with TF_USE_LEGACY_KERAS=1, as TensorFlow's BERT tutorials do, and
imports nothing of bert_tf (whose Keras is Keras 3). It reads the reference
inputs and outputs that bert_tf computed, and prints one JSON line of what
it found.

Usage: python hub_keras_layer_check.py EXPORT_FOLDER REFERENCE.npz
"""

import json
import os
import sys

os.environ["TF_USE_LEGACY_KERAS"] = "1"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_hub as hub  # noqa: E402
import tensorflow_text  # noqa: E402,F401  (the preprocessor's ops)


def main(folder, reference_file):
    reference = np.load(reference_file)
    texts = [text.decode() for text in reference["texts"]]
    found = {"keras": tf.keras.__name__}

    preprocessor = hub.KerasLayer(os.path.join(folder, "preprocessor"))
    encoder = hub.KerasLayer(os.path.join(folder, "encoder"), trainable=True)
    inputs = preprocessor(tf.constant(texts))
    found["input_keys"] = sorted(inputs)
    found["input_word_ids"] = inputs["input_word_ids"].numpy().tolist()
    found["input_mask"] = inputs["input_mask"].numpy().tolist()
    outputs = encoder(inputs)
    found["output_keys"] = sorted(outputs)
    found["num_encoder_outputs"] = len(outputs["encoder_outputs"])
    found["pooled_error"] = float(np.abs(outputs["pooled_output"] - reference["pooled"]).max())
    found["sequence_error"] = float(
        np.abs(outputs["sequence_output"] - reference["sequence"]).max())
    found["default_is_pooled"] = bool(
        np.array_equal(outputs["default"], outputs["pooled_output"]))

    # Sentence pairs, as the tutorials build them.
    loaded = hub.load(os.path.join(folder, "preprocessor"))
    tokenize = hub.KerasLayer(loaded.tokenize)
    pack = hub.KerasLayer(loaded.bert_pack_inputs, arguments={"seq_length": 16})
    pair = pack([tokenize(tf.constant(texts[:1])), tokenize(tf.constant(texts[1:2]))])
    found["pair_input_word_ids"] = pair["input_word_ids"].numpy().tolist()
    found["pair_input_type_ids"] = pair["input_type_ids"].numpy().tolist()

    # A classifier on top, trained as in "Classify text with BERT".
    sentences = tf.keras.layers.Input(shape=(), dtype=tf.string)
    pooled = encoder(preprocessor(sentences))["pooled_output"]
    logits = tf.keras.layers.Dense(2)(pooled)
    model = tf.keras.Model(sentences, logits)
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = [variable.numpy() for variable in encoder.trainable_weights]
    labels = np.arange(len(texts)) % 2
    # The loss without dropout before and after 20 steps on the one batch: a
    # trained model fits it, whatever dropout drew during a single step.
    tf.keras.utils.set_random_seed(0)
    found["loss_before"] = model.evaluate(tf.constant(texts), labels, verbose=0)
    model.fit(tf.constant(texts), labels, epochs=20, batch_size=len(texts), verbose=0)
    found["loss_after"] = model.evaluate(tf.constant(texts), labels, verbose=0)
    found["encoder_trainable_weights"] = len(encoder.trainable_weights)
    found["encoder_weights_changed"] = sum(
        not np.array_equal(old, new.numpy())
        for old, new in zip(before, encoder.trainable_weights, strict=True))
    found["predictions_shape"] = list(model.predict(tf.constant(texts), verbose=0).shape)
    print(json.dumps(found))


if __name__ == "__main__":
    main(*sys.argv[1:])
