"""TFRecord readers: tf.data pipelines for pretraining and the fine-tuning tasks.

The records' features are the contracts of `bert_tf.records.record_specs`, which the
writers share; `parsing_spec` turns a contract into TensorFlow's parsing spec.
"""

import tensorflow as tf

from bert_tf.records.record_specs import pretraining_features


def parsing_spec(features):
    """Maps FeatureSpecs to the tf.io.FixedLenFeature dict that parses them.

    Args:
      features: an iterable of FeatureSpec.

    Returns:
      A dict from feature name to tf.io.FixedLenFeature.
    """
    return {f.name: tf.io.FixedLenFeature(list(f.shape), tf.as_dtype(f.dtype))
            for f in features}


def expand_patterns(input_patterns):
    """Lists the files that comma-separated patterns or a list of them match.

    Args:
      input_patterns: a string of comma-separated file patterns, or a list of
        patterns; globs and any filesystem tf.io.gfile knows (gs://...) work.

    Returns:
      The sorted, de-duplicated list of matching files.

    Raises:
      ValueError: if a pattern matches nothing.
    """
    if isinstance(input_patterns, str):
        input_patterns = input_patterns.split(",")
    files = set()
    for pattern in (p.strip() for p in input_patterns):
        if not pattern:
            continue
        matches = tf.io.gfile.glob(pattern)
        if not matches:
            raise ValueError(f"no input file matches {pattern!r}")
        files.update(matches)
    if not files:
        raise ValueError("no input files given")
    return sorted(files)


def count_records(input_patterns):
    """Reads every record of the files once, checking their framing and checksums.

    A truncated or corrupt file would otherwise fail mid-training, with a
    DataLossError that names no file. Reading the records without parsing
    them is fast (hundreds of MB/s), so the whole input is checked at start.

    Args:
      input_patterns: comma-separated file patterns, or a list of patterns.

    Returns:
      The number of records in all the files.

    Raises:
      ValueError: naming the file, and the last good record, of the first
        corrupt or truncated one (or a pattern that matches nothing).
    """
    total = 0
    for path in expand_patterns(input_patterns):
        count = 0
        try:
            # Batches of serialized records: one Python step per 4096 records.
            for batch in tf.data.TFRecordDataset(path).batch(4096):
                count += int(batch.shape[0])
        except tf.errors.DataLossError as e:
            reason = e.message.splitlines()[0]
            raise ValueError(f"{path}: corrupt or truncated after its first {count} good "
                             f"records, or near them ({reason}); write it again") from None
        total += count
    return total


def _records(files, is_training, input_context, num_parallel_reads, seed):
    """Reads serialized records once (one epoch), sharded across input pipelines.

    The callers shuffle the records and then repeat, so that each epoch ends
    before the next begins.

    Args:
      files: the TFRecord files.
      is_training: read the files in a shuffled order, interleaved without
        keeping their order; otherwise read each file in order.
      input_context: a tf.distribute.InputContext, or None.
      num_parallel_reads: how many files training interleaves at once.
      seed: an optional seed for the file shuffle.

    Returns:
      A tf.data.Dataset of scalar strings.
    """
    num_pipelines = input_context.num_input_pipelines if input_context else 1
    pipeline_id = input_context.input_pipeline_id if input_context else 0
    if len(files) < num_pipelines:
        # Too few files to give each pipeline its own: every pipeline reads
        # them all in the same order and keeps every num_pipelines-th record,
        # so that together they still see each record once per epoch.
        return tf.data.TFRecordDataset(files).shard(num_pipelines, pipeline_id)
    dataset = tf.data.Dataset.from_tensor_slices(files).shard(num_pipelines, pipeline_id)
    if not is_training:
        return dataset.flat_map(tf.data.TFRecordDataset)
    # Shuffled anew on each pass: the caller's repeat() reads the files again.
    return dataset.shuffle(len(files), seed=seed).interleave(
        tf.data.TFRecordDataset, cycle_length=min(num_parallel_reads, len(files)),
        num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)


def check_pretraining_records(input_patterns, max_seq_length, max_predictions_per_seq):
    """Checks that pretraining files hold records of the lengths given.

    A missing, truncated or corrupt file, or lengths other than the files
    were written with, would otherwise fail only once the model is built,
    in the middle of training.

    Args:
      input_patterns: comma-separated file patterns, or a list of patterns.
      max_seq_length: the max_seq_length to read the files with.
      max_predictions_per_seq: the max_predictions_per_seq to read them with.

    Raises:
      ValueError: naming the file, or the patterns.
    """
    if not count_records(input_patterns):
        raise ValueError(f"{input_patterns}: the files hold no records")
    _check_pretraining_features(input_patterns, max_seq_length, max_predictions_per_seq)
    try:
        next(iter(pretraining_dataset(input_patterns, 1, max_seq_length,
                                      max_predictions_per_seq, is_training=False)))
    except tf.errors.InvalidArgumentError:
        raise ValueError(
            f"{input_patterns}: the records do not hold {max_seq_length} input_ids and "
            f"{max_predictions_per_seq} masked_lm_positions; give the --max_seq_length and "
            "--max_predictions_per_seq that create_pretraining_data.py was run with") from None


def largest_token_id(input_patterns, max_seq_length, max_predictions_per_seq,
                     num_records=10_000):
    """The largest token id among the first records of each file.

    An id at or past the model's vocab_size fails on a CPU only inside the
    first step's embedding lookup, and on a GPU reads zeros without a word;
    records made with another vocab show such ids in their first records.
    Only a sample is read, so that the check costs the same on any corpus.

    Args:
      input_patterns: comma-separated file patterns, or a list of patterns.
      max_seq_length: the max_seq_length the files were written with.
      max_predictions_per_seq: the max_predictions_per_seq they were written with.
      num_records: how many records of each file to read.

    Returns:
      (largest id, path of a file that holds it): of input_ids and
      masked_lm_ids together.
    """
    features = pretraining_features(max_seq_length, max_predictions_per_seq)
    spec = parsing_spec(f for f in features if f.name in ("input_ids", "masked_lm_ids"))
    largest, largest_path = -1, None
    for path in expand_patterns(input_patterns):
        records = tf.data.TFRecordDataset(path).take(num_records).batch(4096)
        for batch in records:
            parsed = tf.io.parse_example(batch, spec)
            batch_largest = max(int(tf.reduce_max(ids)) for ids in parsed.values())
            if batch_largest > largest:
                largest, largest_path = batch_largest, path
    return largest, largest_path


def _check_pretraining_features(input_patterns, max_seq_length, max_predictions_per_seq):
    """Checks that each file's first record has the pretraining features.

    A fine-tuning script's records (run_classifier.py's train.tf_record) have
    input_ids too, but no masked_lm_ids: their parse would fail on the
    lengths, which is not the cause.

    Raises:
      ValueError: naming the file and the features it lacks and has.
    """
    wanted = [spec.name for spec in pretraining_features(max_seq_length,
                                                         max_predictions_per_seq)]
    for path in expand_patterns(input_patterns):
        for record in tf.data.TFRecordDataset(path).take(1):
            example = tf.train.Example.FromString(record.numpy())
            features = sorted(example.features.feature)
            missing = [name for name in wanted if name not in features]
            if missing:
                raise ValueError(
                    f"{path}: not pretraining records: they have no {', '.join(missing)} "
                    f"(their features: {', '.join(features) or 'none'}); give the output of "
                    "create_pretraining_data.py")


def pretraining_dataset(input_patterns, batch_size, max_seq_length,
                        max_predictions_per_seq, is_training, input_context=None,
                        num_parallel_reads=4, shuffle_buffer_size=100, seed=None,
                        dynamic_masking=None):
    """Reads masked-LM/next-sentence TFRecords into batches of int32 features.

    Training reads the files epoch by epoch, forever: each epoch reads every
    record once, in a file order shuffled anew, interleaving
    `num_parallel_reads` files at a time without keeping their order, and
    shuffles records in a small buffer (the data generator already shuffled
    them). The next epoch begins only when this one has ended: repeating the
    files before the interleave and the buffer, as the original does, lets
    the next epoch's records in while this one's are still being read, so
    that some records come twice before others come once. Evaluation reads
    every file once, in order.

    Every batch has exactly `batch_size` records (drop_remainder), since TPUs
    need static shapes; evaluation may therefore skip up to batch_size - 1
    trailing records. int64 features are cast to int32, the type TPUs support.

    With `dynamic_masking`, each batch's stored masks are undone and new ones
    drawn (see bert_tf/records/dynamic_masking.py), anew on every pass over the files;
    the features keep their shapes and dtypes. Any pretraining file works: the
    stored masks tell the original tokens.

    Args:
      input_patterns: comma-separated file patterns, or a list of patterns.
      batch_size: records per batch of this pipeline; under
        `tf.distribute.Strategy.distribute_datasets_from_function`, pass
        `input_context.get_per_replica_batch_size(global_batch_size)`.
      max_seq_length: the max_seq_length the files were written with.
      max_predictions_per_seq: the max_predictions_per_seq the files were
        written with.
      is_training: whether to repeat and shuffle.
      input_context: an optional tf.distribute.InputContext; each input
        pipeline then reads its own share of the files, or of the records
        when there are fewer files than pipelines.
      num_parallel_reads: how many files training interleaves at once.
      shuffle_buffer_size: records in the training shuffle buffer.
      seed: an optional seed for the shuffles and for dynamic masking.
      dynamic_masking: an optional `dynamic_masking.DynamicMaskingConfig`:
        mask in the pipeline rather than use the stored masks.

    Returns:
      A tf.data.Dataset of dicts from feature name to a [batch_size, length]
      tensor: int32 for the int64 features, float32 for masked_lm_weights.
    """
    dataset = _records(expand_patterns(input_patterns), is_training, input_context,
                       num_parallel_reads, seed)
    if is_training:
        # Shuffled, then repeated: one epoch's records at a time in the buffer.
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed).repeat()
    dataset = _batch_and_parse(
        dataset, pretraining_features(max_seq_length, max_predictions_per_seq), batch_size)
    if dynamic_masking is not None:
        # Imported here: dynamic_masking needs tensorflow_text, whose libraries
        # hold about 116 MB of resident memory, and fine-tuning reads its
        # records through this module without ever masking.
        from bert_tf.records.dynamic_masking import mask_batches

        dataset = mask_batches(
            dataset, dynamic_masking, max_predictions_per_seq, seed,
            input_context.input_pipeline_id if input_context else 0)
    return prefetched(dataset)


def finetuning_dataset(input_patterns, batch_size, is_training, features, input_context=None,
                       shuffle_buffer_size=10000, seed=None, trim_to_multiple_of=None,
                       length_group_batches=None):
    """Reads a fine-tuning task's TFRecords into batches for training or prediction.

    Training shuffles and repeats, epoch by epoch: each pass over the records
    is shuffled on its own and then the next begins, as Hugging Face's
    sampler draws a permutation per epoch. (Shuffling a repeated stream
    instead would mix the epochs in the buffer: on SQuAD, where the buffer
    holds two epochs, 2 epochs of updates never saw some windows and saw
    others three times or more; docs/benchmarks.md, "SQuAD fine-tuning
    quality", has the counts. The original's buffer of 100 records avoided that by
    keeping nearly the file order.) With more records than the buffer holds,
    each epoch is shuffled within the buffer's reach. Evaluation and
    prediction read the records once, in order, so that predictions line up
    with the examples. Batches are
    full (drop_remainder): the task's writer pads eval and predict files to a
    multiple of the batch size with is_real_example = 0 records.

    Args:
      input_patterns: comma-separated file patterns, or a list of patterns.
      batch_size: records per batch of this pipeline.
      is_training: whether to shuffle and repeat.
      features: the task's FeatureSpecs (task.feature_specs()); those as long
        as input_ids are its sequence features.
      input_context: an optional tf.distribute.InputContext.
      shuffle_buffer_size: records in the training shuffle buffer.
      seed: an optional seed for the shuffle.
      trim_to_multiple_of: if set, cut each batch's padding down to its
        longest example, rounded up to this multiple (see trim_padding).
      length_group_batches: training only: if set, sort each group of this
        many batches' worth of shuffled records by length before batching
        them (see _group_by_length).

    Returns:
      A tf.data.Dataset of dicts from feature name to a [batch_size, length]
      tensor, int32 for the int64 features.
    """
    dataset = _records(expand_patterns(input_patterns), is_training, input_context,
                       num_parallel_reads=1, seed=seed)
    if is_training:
        # Shuffled, then repeated: one epoch's records at a time in the buffer.
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed).repeat()
    if is_training and length_group_batches:
        dataset = _group_by_length(dataset, features, batch_size, length_group_batches, seed)
    else:
        dataset = _batch_and_parse(dataset, features, batch_size)
    if trim_to_multiple_of:
        seq_length = next(f.length for f in features if f.name == "input_ids")
        names = tuple(f.name for f in features if f.length == seq_length)
        dataset = dataset.map(lambda batch: trim_padding(batch, trim_to_multiple_of, names),
                              num_parallel_calls=tf.data.AUTOTUNE)
    return prefetched(dataset)


# Batches each pipeline keeps ready ahead of the step (prefetched).
PREFETCH_BATCHES = 2


def prefetched(dataset):
    """The last stage of every bert_tf input: batches prefetched, tf.data's autotuning off.

    tf.data's autotuning runs in a thread that sleeps up to a minute between
    rounds, and deleting an iterator waits for that sleep to end (TensorFlow
    2.20 and 2.21): the training iterator of a run of a few minutes held the
    process for 20 to 60 seconds after its last output was written, and each
    long prediction's iterator did the same. bert_tf's input stages are cheap
    beside a training or prediction step, so fixed settings lose nothing:
    parallel maps keep the parallelism autotuning starts from (the threads of
    tf.data's pool, at most 16), and PREFETCH_BATCHES batches wait ready.

    Args:
      dataset: A tf.data.Dataset of batches.

    Returns:
      The dataset, prefetching, with autotuning turned off for the whole
      pipeline.
    """
    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.prefetch(PREFETCH_BATCHES).with_options(options)


def _group_by_length(records, features, batch_size, group_batches, seed):
    """Batches shuffled records so that each batch holds examples of similar length.

    Takes group_batches * batch_size records at a time, sorts them by length
    and cuts them into group_batches batches, then shuffles the batches (as
    Hugging Face's group_by_length does). With trim_padding, short batches
    then cost little (SST-2's figures: docs/benchmarks.md, "Fine-tuning
    quality: GLUE dev sets").
    Which examples share a batch is no longer uniformly random, so results
    can differ a little from the original's recipe.

    Args:
      records: a shuffled tf.data.Dataset of serialized tf.train.Example.
      features: the FeatureSpecs of the records (with input_mask).
      batch_size: records per batch.
      group_batches: batches per sorted group.
      seed: an optional seed for the batch shuffle.

    Returns:
      A tf.data.Dataset of parsed batches of batch_size.
    """
    def sort_by_length(group):
        order = tf.argsort(longest_sequences(group["input_mask"]), stable=True)
        return {name: tf.gather(t, order) for name, t in group.items()}

    groups = _batch_and_parse(records, features, batch_size * group_batches)
    return (groups.map(sort_by_length, num_parallel_calls=tf.data.AUTOTUNE)
            .unbatch()
            .batch(batch_size, drop_remainder=True)
            .shuffle(group_batches, seed=seed))


# The length granularity of trimmed batches (--dynamic_padding, and the
# dynamic-shape SavedModels of served_model.py): an XLA-compiled step or model
# meets at most max_seq_length / 16 lengths, each compiled once.
LENGTH_MULTIPLE = 16


def longest_sequences(input_mask):
    """Each record's longest sequence, in tokens.

    Args:
      input_mask: int [batch, seq], or [batch, ..., seq] for records of
        several sequences (a multiple-choice record's [choices, seq]).

    Returns:
      int [batch].
    """
    lengths = tf.reduce_sum(input_mask, axis=-1)
    return tf.reduce_max(tf.reshape(lengths, [tf.shape(lengths)[0], -1]), axis=1)


def trim_padding(batch, multiple,
                 sequence_features=("input_ids", "input_mask", "segment_ids")):
    """Cuts a batch's sequences to its longest example, rounded up to `multiple`.

    Fine-tuning sets are mostly short: on SST-2 the median example has 10
    word pieces, yet every record is padded to max_seq_length. Attention
    masks out padded positions (their scores get -10000, so exp() makes them
    0), so removing padding does not change any output, only the work. The
    length is rounded up so that an XLA-compiled step sees at most
    max_seq_length / multiple distinct shapes, each compiled once. TPUs need
    one static shape, so this is for CPUs and GPUs.

    Args:
      batch: a dict with input_ids, input_mask, segment_ids [batch, seq]
        (or [batch, ..., seq], e.g. [batch, choices, seq]: the last axis is
        cut, the same for every choice).
      multiple: the length granularity, e.g. 16.
      sequence_features: the names of the sequence features to cut (a
        tagging task's labels too).

    Returns:
      The same dict, its sequence features cut to length on their last
      axis, where length >= 1 covers every real token.
    """
    max_seq_length = tf.shape(batch["input_ids"])[-1]
    longest = tf.maximum(tf.reduce_max(longest_sequences(batch["input_mask"])), 1)
    length = tf.minimum((longest + multiple - 1) // multiple * multiple, max_seq_length)
    trimmed = dict(batch)
    for name in sequence_features:
        trimmed[name] = batch[name][..., :length]
    return trimmed


def _batch_and_parse(records, features, batch_size):
    """Batches serialized records (full batches only) and parses them.

    Parsing a whole batch at once is much faster than record by record.
    int64 features become int32, the integer type TPUs support. Every
    feature keeps its [batch, length] shape, single values included.

    Args:
      records: a tf.data.Dataset of serialized tf.train.Example.
      features: the FeatureSpecs of the records.
      batch_size: records per batch.

    Returns:
      A tf.data.Dataset of dicts of tensors.
    """
    spec = parsing_spec(features)

    def parse(batch):
        parsed = tf.io.parse_example(batch, spec)
        return {name: tf.cast(t, tf.int32) if t.dtype == tf.int64 else t
                for name, t in parsed.items()}

    dataset = records.batch(batch_size, drop_remainder=True)
    return dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE)
