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
        # 2.20 is the newest TPU build (tensorflow-tpu); 2.21 the newest release. CI runs
        # the suite on both. On a TPU, install with install_tpu.sh instead: pip
        # cannot satisfy "tensorflow" with the tensorflow-tpu distribution.
        "tensorflow>=2.20,<2.22",
        "tensorflow-text>=2.20,<2.22",
        "tensorflow-datasets",
        # tensorflow-datasets imports it to prepare any data set (dataset_builder.py) but
        # declares it for Python < 3.9 only: without it, --tfds_name fails on a data set
        # not yet prepared.
        "importlib_resources",
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
        # pytest-xdist runs the suite on two processes, one per core of CI's 2.
        # keras-hub, tensorflow-hub and tf-keras: the TF Hub and keras-hub round trips
        # (tests/unit/checkpoints/test_tf_hub.py, test_keras_hub.py); hub.KerasLayer is a
        # tf-keras layer. pip picks the tf-keras of the installed TensorFlow (2.20.1 for 2.20).
        "test": ["pytest", "pytest-xdist", "ruff", "nbclient", "nbformat", "ipykernel",
                 "matplotlib", "keras-hub", "tensorflow-hub", "tf-keras"],
        # Writing and reading keras-hub presets (convert_checkpoint.py
        # --output_format=keras_hub, --init_checkpoint=<preset>), and using the TF Hub
        # export with hub.KerasLayer. Writing and reading the TF Hub export needs neither.
        "interop": ["keras-hub", "tensorflow-hub", "tf-keras"],
    },
)
