"""Models by name: local_path() turns a name or a path into a folder on disk.

Wherever a checkpoint enters bert_tf (--init_checkpoint of every script,
convert_checkpoint.py --input, model_files.find() and the Python API), a
user may name a model instead of giving a folder:

- Google's released BERTs by the names the original README lists
  (uncased_L-12_H-768_A-12, uncased_L-2_H-128_A-2, wwm_cased_L-24_H-1024_A-16,
  ...; model_registry.py): the zip is fetched from Google's bucket
  ($BERT_TF_GOOGLE_URL moves it) and unpacked into the cache, with a
  tokenizer_config.json that records the model's casing, so a cased model
  is read cased. "NAME/bert_model.ckpt", the original's way to name the
  checkpoint in a folder, names the same model.
- Hugging Face Hub models by their id (bert-base-uncased,
  google-bert/bert-base-cased, allenai/scibert_scivocab_uncased): config.json,
  vocab.txt, tokenizer_config.json and model.safetensors of the main
  revision (or, for weights saved in shards, model.safetensors.index.json
  and every shard it names), from $HF_ENDPOINT (as huggingface_hub), with
  $HF_TOKEN for a gated or private repository. A repository with PyTorch
  weights alone (pytorch_model.bin) is refused: bert_tf reads safetensors,
  which cannot run code when loaded.
- keras-hub presets (bert_base_en_uncased, kaggle://..., hf://...) and TF
  Hub or Kaggle handles (https://tfhub.dev/..., https://www.kaggle.com/models/...,
  any URL of a SavedModel .tar.gz): resolved to a folder by keras-hub's and
  tensorflow-hub's own resolvers, in their own caches (KERAS_HOME,
  KAGGLEHUB_CACHE, HF_HOME; TFHUB_CACHE_DIR, by default under bert_tf's
  cache). They need the interop extra (keras-hub, tensorflow-hub).

A path that exists always wins over a name, and what looks like a path
(absolute, ./ or ../, ~, a remote gs:// path, more than one folder) is left
for the readers, which say when nothing is there. A name that resolves to
nothing is one error line with the nearest known names. Offline
($BERT_TF_OFFLINE or $HF_HUB_OFFLINE) no request is sent for any kind of
name: Google's and Hub ids come from bert_tf's cache, keras-hub presets
and kaggle:// handles from kagglehub's (a handle without a version takes
the newest version cached), hf:// handles from huggingface_hub's, TF Hub
URLs from tensorflow-hub's; a model missing from its cache is one line too.
Downloads and the cache are model_cache.py's; processes that share the
cache download each file once (the others wait).
"""

import contextlib
import dataclasses
import hashlib
import importlib
import json
import os
import re

from absl import logging

from bert_tf.checkpoints import model_cache, model_registry

GOOGLE_URL_ENV = "BERT_TF_GOOGLE_URL"
DEFAULT_GOOGLE_URL = "https://storage.googleapis.com/bert_models"
HF_ENDPOINT_ENV = "HF_ENDPOINT"
DEFAULT_HF_ENDPOINT = "https://huggingface.co"
HF_TOKEN_ENV = "HF_TOKEN"
HF_REVISION = "main"
TFHUB_CACHE_ENV = "TFHUB_CACHE_DIR"
_FLOAT32_BYTES = 4

# A Hugging Face folder's files that bert_tf reads; the weights are fetched
# last, so a folder that has them is complete.
HF_FILES = ("config.json", "vocab.txt")
HF_OPTIONAL_FILES = ("tokenizer_config.json",)
HF_WEIGHTS = "model.safetensors"
# Weights saved in shards: the index maps each tensor to its shard's file.
HF_WEIGHTS_INDEX = "model.safetensors.index.json"
HF_PYTORCH_WEIGHTS = "pytorch_model.bin"
# The files of a keras-hub preset that keras_hub.py reads.
KERAS_HUB_FILES = ("config.json", "model.weights.h5", "tokenizer.json",
                   "assets/tokenizer/vocabulary.txt")
# Google's folder's config, whose presence marks an unpacked release.
GOOGLE_CONFIG = "bert_config.json"
# Where a Google folder records its casing, as a Hugging Face folder does
# (checkpoints.find_do_lower_case reads it).
CASING_FILE = "tokenizer_config.json"
LIST_SCRIPT = "list_models.py"

# A Hugging Face repository id: an optional owner and a name, of word
# characters, dots and dashes (huggingface_hub's rule).
_HF_ID = re.compile(r"\w[\w.-]*(/\w[\w.-]*)?")
_KERAS_HUB_SCHEMES = ("kaggle", "hf")
_TF_HUB_SCHEMES = ("http", "https")


class ModelNameError(ValueError):
    """A name that resolves to no model, or that cannot be fetched; one line."""


@dataclasses.dataclass(frozen=True)
class ListedModel:
    """A model bert_tf knows by name, as convert_checkpoint.py --list_models shows it.

    Attributes:
      name: What to pass as --init_checkpoint or --input.
      source: Where it comes from: "google", "hf" or "keras-hub".
      parameters: The encoder's parameter count.
      description: What its publisher calls it.
      cached: Whether it is in bert_tf's cache already (keras-hub's presets
        are in keras-hub's cache, and shown as not).
    """

    name: str
    source: str
    parameters: int
    description: str
    cached: bool

    def weight_bytes(self):
        """The bytes of its float32 weights, about the size of its download.

        Returns:
          4 bytes per parameter.
        """
        return _FLOAT32_BYTES * self.parameters


def known_models():
    """The models bert_tf knows by name, Google's first.

    Any other Hugging Face id and any keras-hub, TF Hub or Kaggle handle is
    a name too; these are the ones bert_tf can list.

    Returns:
      A list of ListedModel: model_registry's, then keras-hub's BERT presets
      when keras-hub is installed.
    """
    listed = [ListedModel(model.name, model.source, model.parameters(), model.description,
                          _is_cached(model))
              for model in model_registry.KNOWN_MODELS.values()]
    for name, preset in _keras_hub_presets().items():
        metadata = preset.get("metadata", {})
        # keras-hub's descriptions run to several sentences: the first says what it is.
        description = metadata.get("description", "").split(". ")[0]
        listed.append(ListedModel(name, "keras-hub", metadata.get("params", 0), description,
                                  False))
    return listed


def _is_cached(model):
    """Whether a registry model is in bert_tf's cache already."""
    if model.source == model_registry.GOOGLE:
        return os.path.isdir(_google_cache_folder(model))
    return _has_all_weights(_hf_cache_folder(model.location))


def hf_weight_files(folder):
    """The safetensors files that hold a Hugging Face folder's weights.

    Args:
      folder: A Hugging Face folder.

    Returns:
      [HF_WEIGHTS] when the folder has it; else the shards its
      HF_WEIGHTS_INDEX names, each once, sorted; else [].

    Raises:
      ValueError: for an index that is not JSON, has no weight_map, or
        names a shard outside the folder; one line.
    """
    if os.path.exists(os.path.join(folder, HF_WEIGHTS)):
        return [HF_WEIGHTS]
    index = os.path.join(folder, HF_WEIGHTS_INDEX)
    if not os.path.exists(index):
        return []
    with open(index, encoding="utf-8") as f:
        try:
            contents = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{index}: not JSON ({e})") from None
    weight_map = contents.get("weight_map") if isinstance(contents, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise ValueError(f"{index}: has no weight_map of tensors to shards")
    shards = sorted(set(weight_map.values()))
    # A shard is a file beside the index: a name with a folder in it could
    # make a download write outside the cache.
    strays = [shard for shard in shards if os.path.basename(shard) != shard
              or not shard.endswith(".safetensors")]
    if strays:
        raise ValueError(f"{index}: names {strays[0]}, not a .safetensors file beside it")
    return shards


def _has_all_weights(folder):
    """Whether a Hugging Face folder holds its weights: the file, or every shard."""
    try:
        files = hf_weight_files(folder)
    except ValueError:
        return False
    return bool(files) and all(os.path.exists(os.path.join(folder, name)) for name in files)


def google_url():
    """The base URL of Google's released models ($BERT_TF_GOOGLE_URL moves it).

    Returns:
      The URL, without a trailing slash.
    """
    return (os.environ.get(GOOGLE_URL_ENV) or DEFAULT_GOOGLE_URL).rstrip("/")


def hf_endpoint():
    """The Hugging Face Hub's base URL ($HF_ENDPOINT moves it, as in huggingface_hub).

    Returns:
      The URL, without a trailing slash.
    """
    return (os.environ.get(HF_ENDPOINT_ENV) or DEFAULT_HF_ENDPOINT).rstrip("/")


def _looks_like_path(value):
    """Whether a value that does not exist is meant as a path, not as a name."""
    return (os.path.isabs(value) or value.startswith((".", "~"))
            or value.count("/") > 1 or value.endswith("/"))


def _scheme(value):
    return value.split("://", 1)[0].lower() if "://" in value else None


def local_path(name_or_path):
    """The local folder or file behind a name or a path; downloads a named model once.

    Args:
      name_or_path: A path (local or remote), a model name (see the module
        docstring), or None.

    Returns:
      The path as given when it exists or is meant as one (None stays
      None); else the model's folder in the cache (or, for
      "NAME/bert_model.ckpt", the prefix in it).

    Raises:
      ModelNameError: for a name that resolves to nothing (with the nearest
        known names), a model missing from the cache offline, a PyTorch-only
        repository, or a download that failed; each one line.
    """
    if not name_or_path or os.path.exists(name_or_path):
        return name_or_path
    scheme = _scheme(name_or_path)
    if scheme in _KERAS_HUB_SCHEMES:
        return _keras_hub_folder(name_or_path)
    if scheme in _TF_HUB_SCHEMES:
        return _tf_hub_folder(name_or_path)
    first, _, rest = name_or_path.partition("/")
    known = model_registry.find(name_or_path)
    if known is None and model_registry.find(first) is not None and \
            model_registry.find(first).source == model_registry.GOOGLE:
        # The original's --init_checkpoint=NAME/bert_model.ckpt.
        return os.path.join(_google_folder(model_registry.find(first)), rest)
    if scheme or _looks_like_path(name_or_path):
        return name_or_path
    if known is not None and known.source == model_registry.GOOGLE:
        return _google_folder(known)
    if known is None and _is_keras_hub_preset(name_or_path):
        return _keras_hub_folder(name_or_path)
    if _HF_ID.fullmatch(name_or_path):
        return _hugging_face_folder(known.location if known else name_or_path)
    raise _unknown(name_or_path)


def _unknown(name, reason=None):
    """The one-line error of a name that resolves to nothing."""
    nearest = model_registry.nearest(name, _keras_hub_presets())
    hint = (f"; nearest known names: {', '.join(nearest)}" if nearest
            else f"; {LIST_SCRIPT} lists the names bert_tf knows")
    because = f" ({reason})" if reason else ""
    return ModelNameError(f"{name}: no such file or folder, and no model of that name"
                          f"{because}{hint}")


def _offline_error(name, where):
    setting = model_cache.offline_setting()
    return ModelNameError(f"{name}: not in the cache ({where}) and {setting} is set, so "
                          f"nothing is downloaded: run once online, or unset {setting}")


def _google_cache_folder(model):
    """Where a Google release is unpacked in the cache."""
    return os.path.join(model_cache.cache_dir(), "google", model.name)


def _hf_cache_folder(repo_id):
    """Where a Hub repository's files are kept in the cache: one folder per revision."""
    return os.path.join(model_cache.cache_dir(), "hf", repo_id.replace("/", "--"), HF_REVISION)


def _google_folder(model):
    """The unpacked folder of a Google release, downloaded and unpacked once."""
    folder = _google_cache_folder(model)
    if os.path.isdir(folder):
        return folder
    if model_cache.is_offline():
        raise _offline_error(model.name, folder)
    # Locked from download to unpacking: another process waits, then finds the folder.
    with model_cache.locked(folder):
        if not os.path.isdir(folder):
            _download_google_release(model, folder)
    return folder


def _download_google_release(model, folder):
    """Downloads a Google release's zip, unpacks it into folder and deletes it."""
    archive = folder + ".zip"
    url = f"{google_url()}/{model.location}"
    try:
        model_cache.fetch(model_cache.probe(url), archive, url)
        model_cache.unpack_zip(archive, folder, GOOGLE_CONFIG, {
            CASING_FILE: json.dumps({"do_lower_case": model.do_lower_case}) + "\n"})
    except model_cache.DownloadError as e:
        raise ModelNameError(f"{model.name}: {e}") from None
    # The unpacked folder holds all of it; the zip would double the space.
    os.remove(archive)
    logging.info("%s is in %s", model.name, folder)


def _hf_headers():
    """The authorization huggingface_hub sends, when $HF_TOKEN is set."""
    token = os.environ.get(HF_TOKEN_ENV)
    return (("Authorization", f"Bearer {token}"),) if token else ()


def _hf_url(repo_id, file_name):
    """A file's resolve URL on the Hub, as huggingface_hub builds it."""
    return f"{hf_endpoint()}/{repo_id}/resolve/{HF_REVISION}/{file_name}"


def _hf_probe(repo_id, file_name):
    """model_cache.probe() of a file of a Hub repository, or None when it has none."""
    try:
        return model_cache.probe(_hf_url(repo_id, file_name), _hf_headers())
    except model_cache.NotFoundError:
        return None
    except model_cache.DownloadError as e:
        raise ModelNameError(f"{repo_id}: {e}") from None


def _hugging_face_folder(repo_id):
    """The folder of a Hub repository's files, each downloaded once."""
    folder = _hf_cache_folder(repo_id)
    if _has_all_weights(folder):
        return folder
    if model_cache.is_offline():
        raise _offline_error(repo_id, folder)
    weights_name, remote_weights = HF_WEIGHTS, _hf_probe(repo_id, HF_WEIGHTS)
    if remote_weights is None:
        weights_name, remote_weights = HF_WEIGHTS_INDEX, _hf_probe(repo_id, HF_WEIGHTS_INDEX)
    if remote_weights is None:
        if _hf_probe(repo_id, HF_PYTORCH_WEIGHTS) is not None:
            raise ModelNameError(
                f"{repo_id}: the repository has PyTorch weights only ({HF_PYTORCH_WEIGHTS}, "
                f"no {HF_WEIGHTS}); bert_tf reads safetensors: convert it with transformers "
                "(save_pretrained) and pass the folder")
        if _hf_probe(repo_id, HF_FILES[0]) is None:
            raise _unknown(repo_id, f"not found on {hf_endpoint()}")
        raise ModelNameError(f"{repo_id}: the repository has no {HF_WEIGHTS} (nor "
                             f"{HF_WEIGHTS_INDEX})")
    try:
        for file_name in HF_FILES + HF_OPTIONAL_FILES:
            remote = _hf_probe(repo_id, file_name)
            if remote is None and file_name in HF_FILES:
                raise ModelNameError(f"{repo_id}: the repository has no {file_name}, which "
                                     "bert_tf needs beside the weights")
            if remote is not None:
                model_cache.fetch(remote, os.path.join(folder, file_name),
                                  _hf_url(repo_id, file_name))
        model_cache.fetch(remote_weights, os.path.join(folder, weights_name),
                          _hf_url(repo_id, weights_name))
        if weights_name == HF_WEIGHTS_INDEX:
            _fetch_shards(repo_id, folder)
    except model_cache.DownloadError as e:
        raise ModelNameError(f"{repo_id}: {e}") from None
    logging.info("%s is in %s", repo_id, folder)
    return folder


def _fetch_shards(repo_id, folder):
    """Downloads every shard that the folder's HF_WEIGHTS_INDEX names, each once."""
    try:
        shards = hf_weight_files(folder)
    except ValueError as e:
        raise ModelNameError(f"{repo_id}: {e}") from None
    for shard in shards:
        remote = _hf_probe(repo_id, shard)
        if remote is None:
            raise ModelNameError(f"{repo_id}: {HF_WEIGHTS_INDEX} names {shard}, which the "
                                 "repository does not have")
        model_cache.fetch(remote, os.path.join(folder, shard), _hf_url(repo_id, shard))


def _interop_module(module, extra):
    """An optional library of the interop extra, or a one-line error naming it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ModelNameError(f"{extra} names need {extra}: pip install {extra}") from None


def _keras_hub_presets():
    """The BertBackbone presets keras-hub knows by name; none without keras-hub."""
    try:
        keras_hub = importlib.import_module("keras_hub")
    except ImportError:
        return {}
    return keras_hub.models.BertBackbone.presets


def _is_keras_hub_preset(name):
    """Whether a name is one of keras-hub's BERT presets (bert_base_en_uncased)."""
    # keras-hub's names are snake_case: a Hub id (bert-base-uncased) is not
    # worth importing keras-hub for.
    return "/" not in name and "-" not in name and name in _keras_hub_presets()


def _keras_hub_folder(handle):
    """The local preset folder of a keras-hub preset name or handle, by keras-hub.

    keras-hub's preset_utils.get_file is the resolver its from_preset uses:
    it fetches each file of a built-in name's Kaggle handle, a kaggle:// or
    an hf:// handle through kagglehub or huggingface_hub, into their caches.
    Offline, those caches alone answer (_cached_keras_hub_folder).
    """
    _interop_module("keras_hub", "keras-hub")
    if model_cache.is_offline():
        return _cached_keras_hub_folder(handle)
    preset_utils = importlib.import_module("keras_hub.src.utils.preset_utils")
    try:
        paths = [preset_utils.get_file(handle, file_name) for file_name in KERAS_HUB_FILES]
    except FileNotFoundError as e:
        raise ModelNameError(f"{handle}: not a keras-hub BERT preset ({e})") from None
    except (ValueError, OSError, ImportError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelNameError(f"{handle}: keras-hub cannot fetch it ({reason})") from None
    return os.path.dirname(paths[0])


def _cached_keras_hub_folder(handle):
    """A keras-hub preset's folder from its resolver's cache, with no request.

    keras-hub would ask Kaggle or the Hub even for a cached preset (an
    unversioned handle's newest version, an hf:// file's newest commit), and
    kagglehub has no offline mode; so offline, each library's own cache
    lookup is asked instead: huggingface_hub's try_to_load_from_cache (the
    main revision, as HF_HUB_OFFLINE takes it), and kagglehub's Cache for a
    Kaggle handle (for one without a version, the newest version cached).
    """
    presets = _keras_hub_presets()
    location = presets[handle]["kaggle_handle"] if handle in presets else handle
    scheme, _, rest = location.partition("://")
    if scheme.lower() == "hf":
        paths, where = _cached_hf_files(rest)
    else:
        paths, where = _cached_kaggle_files(handle, rest)
    if paths is None:
        raise _offline_error(handle, where)
    return os.path.dirname(paths[0])


def _cached_hf_files(repo_id):
    """(paths of KERAS_HUB_FILES in huggingface_hub's cache, or None; the cache)."""
    huggingface_hub = _interop_module("huggingface_hub", "huggingface_hub")
    # try_to_load_from_cache answers a path, None, or a marker of a file known missing.
    paths = [huggingface_hub.try_to_load_from_cache(repo_id, name) for name in KERAS_HUB_FILES]
    cached = all(isinstance(path, str) for path in paths)
    return (paths if cached else None), huggingface_hub.constants.HF_HUB_CACHE


def _cached_kaggle_files(handle, kaggle_handle):
    """(paths of KERAS_HUB_FILES in kagglehub's cache, or None; the cache)."""
    _interop_module("kagglehub", "kagglehub")
    cache = importlib.import_module("kagglehub.cache")
    config = importlib.import_module("kagglehub.config")
    try:
        model = importlib.import_module("kagglehub.handle").parse_model_handle(kaggle_handle)
    except ValueError as e:
        raise ModelNameError(f"{handle}: not a Kaggle model handle ({e})") from None
    if model.is_versioned():
        versions = [model.version]
    else:
        # kagglehub keeps a model's versions in numbered folders side by side.
        variation = os.path.dirname(cache.get_cached_path(model.with_version(1)))
        names = os.listdir(variation) if os.path.isdir(variation) else []
        versions = sorted((int(name) for name in names if name.isdigit()), reverse=True)
    for version in versions:
        versioned = model.with_version(version)
        paths = [cache.Cache().load_from_cache(versioned, name) for name in KERAS_HUB_FILES]
        if all(paths):
            return paths, config.get_cache_folder()
    return None, config.get_cache_folder()


@contextlib.contextmanager
def _tf_hub_cache():
    """Puts tensorflow-hub's cache under bert_tf's, unless TFHUB_CACHE_DIR says where.

    tensorflow-hub's own default is the system's temporary folder, which
    is emptied on reboot; the variable is restored afterwards.
    """
    if os.environ.get(TFHUB_CACHE_ENV):
        yield os.environ[TFHUB_CACHE_ENV]
        return
    os.environ[TFHUB_CACHE_ENV] = os.path.join(model_cache.cache_dir(), "tfhub")
    try:
        yield os.environ[TFHUB_CACHE_ENV]
    finally:
        del os.environ[TFHUB_CACHE_ENV]


def _tf_hub_folder(handle):
    """The local SavedModel folder of a TF Hub or Kaggle handle, by tensorflow-hub."""
    tensorflow_hub = _interop_module("tensorflow_hub", "tensorflow-hub")
    with _tf_hub_cache() as cache:
        if model_cache.is_offline():
            # tensorflow-hub keeps a handle's model in a folder named by the
            # sha1 of the handle.
            folder = os.path.join(cache, hashlib.sha1(handle.encode("utf8")).hexdigest())
            if not os.path.isdir(folder):
                raise _offline_error(handle, cache)
            return folder
        try:
            return tensorflow_hub.resolve(handle)
        except (OSError, ValueError) as e:
            reason = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise ModelNameError(f"{handle}: tensorflow-hub cannot fetch it ({reason})") \
                from None
