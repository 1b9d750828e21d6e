"""bert_tf models in the formats TensorFlow and Keras users plug BERT in with, both ways.

tf_hub.py: TF Hub's BERT interface. A BertModel becomes an encoder
SavedModel (input_word_ids, input_mask, input_type_ids in; pooled_output,
sequence_output, encoder_outputs out; reusable, so hub.KerasLayer fine-tunes
it) and a preprocessor SavedModel (strings in, the encoder's inputs out, with
tokenize and bert_pack_inputs for sentence pairs); an encoder that bert_tf
exported, or one of TF Hub's published BERT encoders, is read back.

keras_hub.py: keras-hub presets. A BertModel and its vocab become a preset
folder that keras_hub.models.BertBackbone.from_preset and
BertTokenizer.from_preset load; a BertBackbone preset folder is read back.

Only these two modules know the formats. checkpoints.py calls them: for
--init_checkpoint, which takes either folder as it takes a checkpoint, and
for convert_checkpoint.py's --output_format=tf_hub and keras_hub. They
import nothing from checkpoints.py.
"""
