"""How a raw-text SavedModel runs its encoder: on each batch's own length, or on one shape.

Every task's serving module (task_serving.py) tokenizes and packs raw
text in the graph, runs the encoder and its heads through a ServedModel, and
turns their outputs into answers. The export's shapes (--export_shapes)
decide the shapes the ServedModel runs at:

  dynamic (the default): each batch is cut to its longest input, rounded up
    to a multiple of input_pipeline.LENGTH_MULTIPLE. A batch of short
    sentences then costs what its tokens cost, not what max_seq_length
    would. The outputs are the padded computation's: attention never looks
    at padding.
  static: every input is padded to max_seq_length: the single fixed shape
    that TPU serving, or a server that needs fixed shapes, wants. (The
    exports of earlier bert_tf versions were these.)

Either runs on TensorFlow's own kernels unless the export asks for XLA
(jit_compile, from --jit_compile=true). XLA fuses the elementwise work around
the matmuls and serves a shape it has compiled faster, but it compiles anew
for each (batch size, length) a serving process meets, 1 to 3 seconds each
for MiniLM on a CPU. With dynamic shapes that is a pause at nearly every
batch of a first pass over a file, which costs more than XLA saves there:
hence no XLA by default. A long-running server that meets few shapes may
want it.
"""

import tensorflow as tf

from bert_tf.records.input_pipeline import LENGTH_MULTIPLE, trim_padding

SHAPES = ("dynamic", "static")


class ServedModel:
    """A trained encoder and its heads, run at an export's shapes."""

    def __init__(self, model_function, shapes, jit_compile=False):
        """Wraps the model's forward pass.

        Args:
          model_function: {input_ids, input_mask, segment_ids} int32 [batch,
            seq] -> a dict of the encoder's and heads' outputs, computed
            without dropout. It must accept any seq up to max_seq_length.
          shapes: One of SHAPES.
          jit_compile: Run model_function XLA-compiled, once per input shape.

        Raises:
          ValueError: for shapes not in SHAPES.
        """
        if shapes not in SHAPES:
            raise ValueError(f"unknown export shapes {shapes!r}; known: {', '.join(SHAPES)}")
        self.shapes = shapes
        self.jit_compile = bool(jit_compile)
        self._model_function = tf.function(model_function, jit_compile=self.jit_compile)

    def __call__(self, packed):
        """Runs the model on a packed batch.

        Args:
          packed: text_ops.BertPacker's int32 [batch, max_seq_length] inputs.

        Returns:
          model_function's outputs. Dynamic shapes cut their sequence axis to
          the batch's length (at most max_seq_length); every real token is
          within it.
        """
        if self.shapes == "dynamic":
            packed = trim_padding(packed, LENGTH_MULTIPLE)
        return self._model_function(packed)

    def describe(self, max_seq_length):
        """One line on the export's shapes, for the log and the export's info file."""
        if self.shapes == "static":
            line = f"static shapes: every input padded to max_seq_length={max_seq_length}"
        else:
            line = (f"dynamic shapes: each batch padded to its longest input, in steps of "
                    f"{LENGTH_MULTIPLE} up to max_seq_length={max_seq_length}")
        if self.jit_compile:
            return line + "; XLA-compiled once per (batch size, length)"
        return line + "; TensorFlow's kernels, no XLA"
