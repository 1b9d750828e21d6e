"""A tiny TensorFlow Datasets data set written offline, for the tests of TFDS input."""

import numpy as np
import tensorflow as tf
import tensorflow_datasets as tfds

# The examples' texts: each a document; the empty one has no text to read.
TEXTS = ("The dog ran to the river. It was cold! Was the water deep? Nobody knew.",
         "A man found a book in the house.\nHe read it at night.",
         "",
         "The city has a school. People go there.")


def write_text_dataset(data_dir, name="tiny_documents", texts=TEXTS):
    """Writes a prepared TFDS data set of texts, as if TFDS had downloaded and prepared it.

    The records are serialized by TFDS's own features and described by its
    metadata (tfds.folder_dataset.write_metadata), the layout of a data set
    prepared elsewhere and copied into a data folder, so that tfds.builder()
    finds it by name without the network.

    Args:
      data_dir: The TFDS data folder (a pathlib.Path) to write it in.
      name: The data set's name.
      texts: The examples' "text" feature, in order; each example's "stars"
        feature is its number.

    Returns:
      data_dir, as a str.
    """
    folder = data_dir / name / "1.0.0"
    folder.mkdir(parents=True)
    features = tfds.features.FeaturesDict({
        "text": tfds.features.Text(), "stars": tfds.features.Scalar(dtype=np.int64)})
    with tf.io.TFRecordWriter(str(folder / f"{name}-train.tfrecord-00000-of-00001")) as f:
        for stars, text in enumerate(texts):
            f.write(features.serialize_example({"text": text, "stars": stars}))
    tfds.folder_dataset.write_metadata(data_dir=str(folder), features=features,
                                       split_infos=None, check_data=True)
    return str(data_dir)
