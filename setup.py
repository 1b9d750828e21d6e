"""Installs bert_tf: Google's BERT on TensorFlow 2 and Keras."""

from setuptools import find_packages, setup

setup(
    name="bert_tf",
    version="0.1.0",
    description=(
        "BERT pretraining, fine-tuning and checkpoint compatibility on "
        "TensorFlow 2 / Keras, for TPU, GPU and CPU."
    ),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["bert_tf", "bert_tf.*"]),
    install_requires=[
        "tensorflow==2.21.*",
        "tensorflow-text==2.21.*",
        "tensorflow-datasets",
        "absl-py",
        "numpy",
        # Reads Hugging Face model.safetensors without torch or pickle.
        "safetensors",
        # tf.summary needs it to write the training curves; TF 2.21 no longer
        # installs it.
        "tensorboard",
    ],
    extras_require={
        # nbclient, nbformat, ipykernel and matplotlib execute and check the notebook.
        # seqeval is the reference for the entity-F1 test (tests/test_conll_metrics.py).
        "test": ["pytest", "ruff", "nbclient", "nbformat", "ipykernel", "matplotlib",
                 "seqeval"],
    },
)
