"""Hidden states of a pretrained BERT, per token, per word or pooled: extract_features.py.

Every step streams, so memory does not grow with the input file:
  read_examples()    input lines -> InputExample; "text", or "text_a ||| text_b"
  convert_example()  -> InputFeatures: word pieces and packed ids, as the
                     original; with word_level, each whitespace word's pieces
  LayerExtractor     a tf.function running BertModel on one padded batch and
                     returning the chosen layers, pooled or not
  example_output()   one example's rows: its tokens, its words, or one vector
  open_writer()      jsonl (the original's layout), npz or tfrecord, written
                     under a temporary name and renamed when complete
  extract()          all of the above, batch by batch, with a progress log

The modules, each importing only those above it:
  examples.py: --layers (LayerSpec), input lines (InputExample, with the
    file and line of a bad one named by ExtractionError), packing
    (InputFeatures), the input format;
  writers.py: JsonlWriter, NpzWriter, TFRecordWriter and open_writer, the
    output formats;
  extractor.py: LayerExtractor, example_output, model_files, build_model and
    extract.
"""

from bert_tf.feature_extraction.examples import (
    EMBEDDINGS,
    ExtractionError,
    InputExample,
    InputFeatures,
    LayerSpec,
    convert_example,
    count_examples,
    parse_layers,
    parse_line,
    read_examples,
)
from bert_tf.feature_extraction.extractor import (
    POOLINGS,
    WORD_POOLINGS,
    ExampleOutput,
    LayerExtractor,
    build_model,
    example_output,
    extract,
    model_files,
)
from bert_tf.feature_extraction.writers import (
    OUTPUT_FORMATS,
    JsonlWriter,
    NpzWriter,
    TFRecordWriter,
    open_writer,
)

__all__ = [
    "EMBEDDINGS",
    "OUTPUT_FORMATS",
    "POOLINGS",
    "WORD_POOLINGS",
    "ExampleOutput",
    "ExtractionError",
    "InputExample",
    "InputFeatures",
    "JsonlWriter",
    "LayerExtractor",
    "LayerSpec",
    "NpzWriter",
    "TFRecordWriter",
    "build_model",
    "convert_example",
    "count_examples",
    "example_output",
    "extract",
    "model_files",
    "open_writer",
    "parse_layers",
    "parse_line",
    "read_examples",
]
