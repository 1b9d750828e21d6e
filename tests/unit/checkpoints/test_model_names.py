"""Models by name, fetched from a local HTTP server laid out as each publisher lays them out.

A real http.server in a thread serves a tiny BERT as Google's zips (a
folder inside, or the files at the top level), as Hugging Face Hub
repositories (resolve URLs; the weights redirect to storage with their
sha256 and size, as the Hub's LFS files do), as a keras-hub preset on the
Hub (hf://, through keras-hub and huggingface_hub) and as a TF Hub
SavedModel .tar.gz (through tensorflow-hub). The base URLs are the
settings' (BERT_TF_GOOGLE_URL, HF_ENDPOINT), so the code that downloads,
resumes, checks and unpacks runs for real. A server that drops the
connection half way stands for an interrupted download.
"""

import base64
import hashlib
import http.server
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import urllib.parse
import zipfile

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from bert_tf.checkpoints import (
    checkpoints,
    keras_hub,
    model_cache,
    model_files,
    model_names,
    model_registry,
    tf_hub,
)
from bert_tf.feature_extraction import extractor
from bert_tf.model.modeling import BertModel
from tests import helpers
from tests.helpers.tiny_models import tiny_google_checkpoint

GOOGLE_PATH = "/bert_models"
SMALL = "uncased_L-2_H-128_A-2"  # A small BERT: its zip holds the files at the top level.
CASED = "cased_L-12_H-768_A-12"  # A 2018 release: its zip holds a folder.
COMMIT = "0123456789abcdef0123456789abcdef01234567"


class Route:
    """What the server answers for a path: a body, or a redirect, with headers."""

    def __init__(self, body=None, headers=None, status=200):
        self.body, self.headers, self.status = body, dict(headers or {}), status


class Server(http.server.ThreadingHTTPServer):
    """Serves routes; records each request; drops the connection half way through the
    bodies of the paths in `dropping`; holds the body of a path in `held` back, once it
    has said so (held[path][0], an Event), until the test lets it go (held[path][1]).

    It also answers Kaggle's model API (POST /api/v1/models.ModelApiService/...) for
    the models in `kaggle`: {(owner, model, framework, variation): {version: {file:
    storage path}}}. kagglesdk's endpoints are fixed hosts (KAGGLE_API_ENVIRONMENT), so
    the test makes this server their HTTP proxy, and it takes absolute URLs as paths.
    """

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.routes, self.requests, self.dropping, self.held = {}, [], set(), {}
        self.kaggle = {}

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self._answer(send_body=False)

    def do_GET(self):
        self._answer(send_body=True)

    def do_POST(self):
        """Kaggle's API: a model instance's newest version, or a redirect to the storage
        of one file of a version; a JSON 404 for anything else, as Kaggle answers."""
        path = urllib.parse.urlsplit(self.path).path
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.server.requests.append(("POST", path, request.get("path")))
        key = tuple(request.get(field) for field in
                    ("ownerSlug", "modelSlug", "framework", "instanceSlug"))
        versions = self.server.kaggle.get(key, {})
        files = versions.get(request.get("versionNumber"), {})
        if versions and path.endswith("/models.ModelApiService/GetModelInstance"):
            self._send(200, {"Content-Type": "application/json"},
                       json.dumps({"versionNumber": max(versions)}).encode())
        elif request.get("path") in files and \
                path.endswith("/models.ModelApiService/DownloadModelInstanceVersion"):
            self._send(302, {"Location": self.server.url + files[request["path"]]}, b"")
        else:
            self._send(404, {"Content-Type": "application/json"},
                       json.dumps({"code": 404, "message": "Not found"}).encode())

    def _send(self, status, headers, body):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _answer(self, send_body):
        path = urllib.parse.urlsplit(self.path).path
        self.server.requests.append((self.command, path, self.headers.get("Range")))
        route = self.server.routes.get(path)
        if route is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if route.body is None:  # A redirect.
            self.send_response(route.status)
            for name, value in route.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body, start = route.body, 0
        ranged = self.headers.get("Range")
        if ranged and send_body:
            start = int(ranged.removeprefix("bytes=").rstrip("-"))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        for name, value in route.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        if not send_body:
            return
        if path in self.server.held:
            arrived, release = self.server.held[path]
            arrived.set()
            release.wait()
        end = len(body)
        if path in self.server.dropping:
            end = max(start, len(body) // 2)
        self.wfile.write(body[start:end])
        if end < len(body):
            self.wfile.flush()
            self.close_connection = True


@pytest.fixture(scope="module")
def server():
    served = Server()
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()


@pytest.fixture(autouse=True)
def settings(server, tmp_path, monkeypatch):
    """A fresh cache, the publishers' base URLs on the local server, online; the
    server's routes and records emptied."""
    server.routes.clear()
    server.requests.clear()
    server.dropping.clear()
    server.held.clear()
    server.kaggle.clear()
    monkeypatch.setenv(model_cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(model_names.GOOGLE_URL_ENV, server.url + GOOGLE_PATH)
    monkeypatch.setenv(model_names.HF_ENDPOINT_ENV, server.url)
    for name in (*model_cache.OFFLINE_ENVS, model_names.HF_TOKEN_ENV,
                 model_names.TFHUB_CACHE_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny BERT in Google's release layout: (folder, its files' bytes by name)."""
    folder = str(tmp_path_factory.mktemp("tiny"))
    tiny_google_checkpoint(folder)
    files = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            files[name] = f.read()
    return folder, files


@pytest.fixture(scope="module")
def tiny_hf(tiny, tmp_path_factory):
    """The tiny BERT as a Hugging Face folder: (folder, its files' bytes by name)."""
    folder = str(tmp_path_factory.mktemp("tiny_hf"))
    checkpoints.convert(tiny[0], folder, "hf", [])
    return folder, {name: open(os.path.join(folder, name), "rb").read()
                    for name in ("config.json", "vocab.txt", "tokenizer_config.json",
                                 "model.safetensors")}


def _outputs(init_checkpoint):
    """The sequence output of a model found by model_files.find, on fixed ids."""
    files = model_files.find(init_checkpoint)
    model = BertModel(files.bert_config)
    checkpoints.load_weights(files.init_checkpoint, model)
    ids = np.array([[2, 40, 41, 42, 3, 50, 51, 3]], np.int32)
    return model({"input_ids": ids, "input_mask": np.ones_like(ids),
                  "segment_ids": np.array([[0] * 5 + [1] * 3], np.int32)},
                 training=False)["sequence_output"].numpy()


def _zip(files, folder=None):
    """A zip of {name: bytes}, inside folder when given."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(f"{folder}/{name}" if folder else name, data)
    return buffer.getvalue()


def _md5_header(data):
    return {"x-goog-hash": "crc32c=AAAAAA==,md5="
            + base64.b64encode(hashlib.md5(data).digest()).decode()}


def publish_google(server, name, files, inside_folder, md5_of=None):
    """Serves a Google release zip at its registry URL, with GCS's md5 header."""
    data = _zip(files, name if inside_folder else None)
    location = model_registry.find(name).location
    server.routes[f"{GOOGLE_PATH}/{location}"] = Route(data, _md5_header(md5_of or data))
    return f"{GOOGLE_PATH}/{location}"


def publish_hf(server, repo_id, files, lfs=("model.safetensors",), sha256_of=None):
    """Serves a Hub repository: resolve URLs; an LFS file redirects to storage, with its
    sha256 (X-Linked-Etag) and size on the redirect, as the Hub does."""
    for name, data in files.items():
        sha256 = hashlib.sha256(sha256_of or data).hexdigest() if name in lfs else None
        resolve = f"/{repo_id}/resolve/main/{name}"
        common = {"X-Repo-Commit": COMMIT}
        if sha256:
            storage = f"/storage/{hashlib.sha256(data).hexdigest()}"
            linked = {**common, "ETag": f'"{sha256}"', "X-Linked-Etag": f'"{sha256}"',
                      "X-Linked-Size": str(len(data))}
            server.routes[storage] = Route(data, linked)
            server.routes[resolve] = Route(None, {**linked, "Location": server.url + storage},
                                           status=302)
        else:
            server.routes[resolve] = Route(
                data, {**common, "ETag": f'"{hashlib.sha1(data).hexdigest()}"'})


# Each kind of name loads the model the local folder holds.

def test_a_google_name_downloads_once_and_gives_the_local_folders_outputs(server, tiny):
    publish_google(server, SMALL, tiny[1], inside_folder=False)
    expected = _outputs(tiny[0])
    np.testing.assert_allclose(_outputs(SMALL), expected, rtol=1e-6)
    fetched = [request for request in server.requests if request[0] == "GET"]
    assert len(fetched) == 1
    # Fetched once: the second time the cache answers, with no request.
    server.requests.clear()
    folder = model_names.local_path(SMALL)
    assert server.requests == []
    assert folder == os.path.join(model_cache.cache_dir(), "google", SMALL)
    # The zip is unpacked and gone; the original's NAME/bert_model.ckpt names the same.
    assert not any(name.endswith(".zip") for name in os.listdir(os.path.dirname(folder)))
    assert model_names.local_path(f"{SMALL}/bert_model.ckpt") == \
        os.path.join(folder, "bert_model.ckpt")
    # The feature extraction's way in takes the name too.
    assert extractor.model_files(SMALL).init_checkpoint == folder


def test_a_named_cased_model_is_read_cased(server, tiny):
    publish_google(server, CASED, tiny[1], inside_folder=True)
    files = model_files.find(CASED)
    assert files.do_lower_case is False
    with pytest.raises(model_files.ModelFilesError, match="contradicts"):
        model_files.find(CASED, do_lower_case=True)
    np.testing.assert_allclose(_outputs(CASED), _outputs(tiny[0]), rtol=1e-6)


def test_hugging_face_ids_download_safetensors_and_give_the_local_folders_outputs(
        server, tiny_hf):
    publish_hf(server, "allenai/scibert_scivocab_uncased", tiny_hf[1])
    expected = _outputs(tiny_hf[0])
    np.testing.assert_allclose(_outputs("allenai/scibert_scivocab_uncased"), expected,
                               rtol=1e-6)
    # A legacy id without an owner: the Hub redirects it to its repository.
    publish_hf(server, "google-bert/bert-base-cased", tiny_hf[1])
    server.routes["/bert-base-cased/resolve/main/config.json"] = Route(
        None, {"Location": "/google-bert/bert-base-cased/resolve/main/config.json"}, 307)
    np.testing.assert_allclose(_outputs("bert-base-cased"), expected, rtol=1e-6)
    folder = model_names.local_path("bert-base-cased")
    assert sorted(os.listdir(folder)) == sorted(tiny_hf[1])


def _sharded(files, folder):
    """A Hugging Face folder's files with its weights split across two shards and an index,
    as transformers' save_pretrained writes a large model; the shards are written to folder
    too. Returns {name: bytes}."""
    weights_file = os.path.join(folder, "unsharded.safetensors")
    with open(weights_file, "wb") as f:
        f.write(files["model.safetensors"])
    tensors = load_file(weights_file)
    os.remove(weights_file)
    names = sorted(tensors)
    shards = {"model-00001-of-00002.safetensors": names[:len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    sharded = {name: data for name, data in files.items() if name != "model.safetensors"}
    for shard, shard_names in shards.items():
        save_file({name: tensors[name] for name in shard_names}, os.path.join(folder, shard))
        with open(os.path.join(folder, shard), "rb") as f:
            sharded[shard] = f.read()
    index = {"metadata": {"total_size": sum(value.nbytes for value in tensors.values())},
             "weight_map": {name: shard for shard, shard_names in shards.items()
                            for name in shard_names}}
    sharded[model_names.HF_WEIGHTS_INDEX] = json.dumps(index).encode()
    for name in ("config.json", "vocab.txt", "tokenizer_config.json",
                 model_names.HF_WEIGHTS_INDEX):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(sharded[name])
    return sharded


def test_sharded_safetensors_download_every_shard_and_give_the_unsharded_outputs(
        server, tiny_hf, tmp_path):
    sharded = _sharded(tiny_hf[1], str(tmp_path))
    shards = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    publish_hf(server, "someone/sharded", sharded, lfs=shards)
    expected = _outputs(tiny_hf[0])
    # A sharded folder on disk reads as the unsharded one.
    np.testing.assert_allclose(_outputs(str(tmp_path)), expected, rtol=1e-6)
    np.testing.assert_allclose(_outputs("someone/sharded"), expected, rtol=1e-6)
    folder = model_names.local_path("someone/sharded")
    assert sorted(os.listdir(folder)) == sorted(sharded)
    assert model_names.hf_weight_files(folder) == list(shards)
    # An index that names a file outside the folder is refused before any download of it.
    index = json.loads(sharded[model_names.HF_WEIGHTS_INDEX])
    index["weight_map"]["pooler.dense.bias"] = "../../elsewhere.safetensors"
    publish_hf(server, "someone/stray", {**sharded,
                                         model_names.HF_WEIGHTS_INDEX: json.dumps(index).encode()},
               lfs=shards)
    # An index that is no JSON is one line naming it.
    (tmp_path / model_names.HF_WEIGHTS_INDEX).write_text("{")
    with pytest.raises(ValueError, match=r"/model.safetensors.index.json: not JSON \(.*\)$"):
        model_names.hf_weight_files(str(tmp_path))
    with pytest.raises(model_names.ModelNameError,
                       match=r"^someone/stray: .*model.safetensors.index.json: names "
                             r"\.\./\.\./elsewhere.safetensors, not a .safetensors file beside "
                             "it$"):
        model_names.local_path("someone/stray")


def test_a_pytorch_only_repository_is_refused_in_one_line(server, tiny_hf):
    publish_hf(server, "someone/pt-only", {"config.json": tiny_hf[1]["config.json"],
                                           "pytorch_model.bin": b"pickle"},
               lfs=("pytorch_model.bin",))
    with pytest.raises(model_names.ModelNameError) as raised:
        model_names.local_path("someone/pt-only")
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("someone/pt-only: the repository has PyTorch weights only")
    assert not os.path.exists(model_cache.cache_dir())


@pytest.fixture(scope="module")
def tiny_preset(tiny, tmp_path_factory):
    """The tiny BERT as a keras-hub preset folder: (folder, its files' bytes by path)."""
    pytest.importorskip("keras_hub")
    folder = str(tmp_path_factory.mktemp("tiny_preset"))
    checkpoints.convert(tiny[0], folder, "keras_hub", [])
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, folder)] = f.read()
    return folder, files


@pytest.fixture
def hf_hub(server, tmp_path, monkeypatch):
    """huggingface_hub on the local server, with its cache in tmp_path; the cache."""
    constants = pytest.importorskip("huggingface_hub.constants")
    # huggingface_hub reads HF_ENDPOINT and its cache folder when imported.
    monkeypatch.setattr(constants, "ENDPOINT", server.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        server.url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    return str(tmp_path / "hf")


@pytest.fixture
def kaggle_api(server, tmp_path, monkeypatch):
    """kagglehub on the local server's Kaggle API, with its cache in tmp_path; the cache.

    kagglesdk takes its endpoint from KAGGLE_API_ENVIRONMENT, a choice of fixed hosts
    (TEST is http://localhost:7777), and sends its requests with requests, which takes
    an HTTP proxy from $HTTP_PROXY: the local server is that proxy."""
    pytest.importorskip("kagglehub")
    monkeypatch.setenv("KAGGLE_API_ENVIRONMENT", "TEST")
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, server.url)
    for name in ("NO_PROXY", "no_proxy", "KAGGLE_API_TOKEN", "KAGGLE_USERNAME", "KAGGLE_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "kaggle_config"))
    monkeypatch.setenv("KAGGLEHUB_CACHE", str(tmp_path / "kagglehub"))
    return str(tmp_path / "kagglehub")


def publish_kaggle(server, handle, version, files):
    """Serves a Kaggle model version (handle: owner/model/framework/variation) by Kaggle's
    API: each file a redirect to storage, with its md5 as Google Cloud Storage gives it."""
    owner, model, framework, variation = handle.split("/")
    key = (owner, model, f"MODEL_FRAMEWORK_{framework.upper()}", variation)
    stored = server.kaggle.setdefault(key, {}).setdefault(version, {})
    for name, data in files.items():
        stored[name] = f"/kaggle-storage/{hashlib.sha256(data).hexdigest()}"
        server.routes[stored[name]] = Route(data, _md5_header(data))


def test_a_keras_hub_hf_handle_resolves_through_keras_hub(server, tiny_preset, hf_hub):
    publish_hf(server, "someone/tiny_bert", tiny_preset[1], lfs=(keras_hub.WEIGHTS_FILE,))
    folder = model_names.local_path("hf://someone/tiny_bert")
    assert keras_hub.is_preset(folder) and folder.startswith(hf_hub)
    np.testing.assert_allclose(_outputs("hf://someone/tiny_bert"), _outputs(tiny_preset[0]),
                               rtol=1e-6)


def _builtin_kaggle_handle(preset):
    """keras-hub's Kaggle handle of a built-in preset, without kaggle:// and the version:
    (handle, version)."""
    keras_hub_library = pytest.importorskip("keras_hub")
    handle = keras_hub_library.models.BertBackbone.presets[preset]["kaggle_handle"]
    handle, _, version = handle.removeprefix("kaggle://").rpartition("/")
    return handle, int(version)


def test_a_keras_hub_preset_name_and_a_kaggle_handle_resolve_through_kagglehub(
        server, tiny_preset, kaggle_api):
    expected = _outputs(tiny_preset[0])
    # A built-in name is keras-hub's versioned Kaggle handle.
    handle, version = _builtin_kaggle_handle("bert_tiny_en_uncased")
    publish_kaggle(server, handle, version, tiny_preset[1])
    np.testing.assert_allclose(_outputs("bert_tiny_en_uncased"), expected, rtol=1e-6)
    folder = model_names.local_path("bert_tiny_en_uncased")
    assert keras_hub.is_preset(folder)
    assert folder == os.path.join(kaggle_api, "models", handle, str(version))
    # Cached: kagglehub asks nothing more for a versioned handle.
    server.requests.clear()
    assert model_names.local_path("bert_tiny_en_uncased") == folder
    assert server.requests == []
    # A handle without a version: Kaggle's API says which is the newest.
    publish_kaggle(server, "someone/tiny-bert/keras/tiny", 1, {"config.json": b"{}"})
    publish_kaggle(server, "someone/tiny-bert/keras/tiny", 2, tiny_preset[1])
    np.testing.assert_allclose(_outputs("kaggle://someone/tiny-bert/keras/tiny"), expected,
                               rtol=1e-6)
    assert model_names.local_path("kaggle://someone/tiny-bert/keras/tiny") == \
        os.path.join(kaggle_api, "models", "someone", "tiny-bert", "keras", "tiny", "2")
    with pytest.raises(model_names.ModelNameError,
                       match="^kaggle://someone/missing/keras/tiny/1: not a keras-hub BERT "
                             "preset"):
        model_names.local_path("kaggle://someone/missing/keras/tiny/1")


def publish_tf_hub(server, tiny, folder):
    """Serves the tiny BERT's encoder SavedModel as a .tar.gz, as TF Hub serves a model:
    (its URL, the encoder's folder)."""
    checkpoints.convert(tiny[0], os.path.join(folder, "hub"), "tf_hub", [])
    encoder = os.path.join(folder, "hub", "encoder")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(encoder, arcname=".")
    server.routes["/tfhub/tiny_bert/1"] = Route(buffer.getvalue())
    return f"{server.url}/tfhub/tiny_bert/1", encoder


def test_a_tf_hub_url_resolves_through_tensorflow_hub(server, tiny, tmp_path):
    handle, encoder = publish_tf_hub(server, tiny, str(tmp_path))
    folder = model_names.local_path(handle)
    # tensorflow-hub's cache is under bert_tf's unless TFHUB_CACHE_DIR says otherwise.
    assert tf_hub.is_saved_model(folder)
    assert folder.startswith(os.path.join(model_cache.cache_dir(), "tfhub"))
    assert model_names.TFHUB_CACHE_ENV not in os.environ
    np.testing.assert_allclose(_outputs(handle), _outputs(encoder), rtol=1e-5)


def test_convert_takes_a_name(server, tiny, tmp_path):
    publish_google(server, SMALL, tiny[1], inside_folder=False)
    output = str(tmp_path / "hf")
    checkpoints.convert(SMALL, output, "hf", [])
    np.testing.assert_allclose(_outputs(output), _outputs(tiny[0]), rtol=1e-6)


# Downloads that fail are never loaded.

def test_an_interrupted_download_is_never_loaded_and_the_rerun_resumes_it(server, tiny):
    path = publish_google(server, SMALL, tiny[1], inside_folder=False)
    size = len(server.routes[path].body)
    server.dropping.add(path)
    with pytest.raises(model_files.ModelFilesError,
                       match=f"^{SMALL}: http://.*/{SMALL}.zip: download interrupted at "
                             f"{size // 2} of "
                             f"{size} bytes; run again to resume it$"):
        model_files.find(SMALL)
    google = os.path.join(model_cache.cache_dir(), "google")
    assert os.listdir(google) == [f"{SMALL}.zip{model_cache.INCOMPLETE_SUFFIX}"]
    assert os.path.getsize(os.path.join(google, os.listdir(google)[0])) == size // 2
    server.dropping.clear()
    server.requests.clear()
    np.testing.assert_allclose(_outputs(SMALL), _outputs(tiny[0]), rtol=1e-6)
    assert ("GET", path, f"bytes={size // 2}-") in server.requests
    assert os.listdir(google) == [SMALL]


def test_a_download_killed_after_its_last_byte_is_checked_and_used(server, tiny):
    path = publish_google(server, SMALL, tiny[1], inside_folder=False)
    google = os.path.join(model_cache.cache_dir(), "google")
    os.makedirs(google)
    with open(os.path.join(google, f"{SMALL}.zip.incomplete"), "wb") as f:
        f.write(server.routes[path].body)
    assert os.path.isdir(model_names.local_path(SMALL))
    assert [request for request in server.requests if request[0] == "GET"] == []


def test_a_corrupt_download_is_refused_deleted_and_refetched(server, tiny_hf):
    publish_hf(server, "someone/bert", tiny_hf[1], sha256_of=b"other bytes")
    with pytest.raises(model_names.ModelNameError,
                       match=r"^someone/bert: http://.*/someone/bert/resolve/main/"
                             r"model.safetensors: the download is "
                             r"corrupt \(its sha256 is not the server's [0-9a-f]{64}\) and was "
                             "deleted; run again to download it anew$"):
        model_names.local_path("someone/bert")
    folder = os.path.join(model_cache.cache_dir(), "hf", "someone--bert", "main")
    assert "model.safetensors" not in os.listdir(folder)
    assert not any(name.endswith(model_cache.INCOMPLETE_SUFFIX) for name in os.listdir(folder))
    publish_hf(server, "someone/bert", tiny_hf[1])
    np.testing.assert_allclose(_outputs("someone/bert"), _outputs(tiny_hf[0]), rtol=1e-6)


def test_a_resumed_download_that_fails_its_check_is_fetched_anew(server, tiny):
    path = publish_google(server, SMALL, tiny[1], inside_folder=False)
    google = os.path.join(model_cache.cache_dir(), "google")
    os.makedirs(google)
    with open(os.path.join(google, f"{SMALL}.zip.incomplete"), "wb") as f:
        f.write(b"x" * 100)  # Not this file's first bytes.
    np.testing.assert_allclose(_outputs(SMALL), _outputs(tiny[0]), rtol=1e-6)
    gets = [request[2] for request in server.requests if request[0] == "GET"]
    assert gets == ["bytes=100-", None]
    assert ("GET", path, None) in server.requests


def test_a_wrong_md5_from_google_is_refused(server, tiny):
    publish_google(server, SMALL, tiny[1], inside_folder=False, md5_of=b"other bytes")
    with pytest.raises(model_names.ModelNameError, match="its md5 is not the server's"):
        model_names.local_path(SMALL)
    assert os.listdir(os.path.join(model_cache.cache_dir(), "google")) == []


# Processes that want the same file share one download.

# A process that fetches a file into the cache, saying (at INFO) when it waits.
FETCH_SCRIPT = """\
import sys

from absl import logging

from bert_tf.checkpoints import model_cache

logging.set_verbosity(logging.INFO)
url, path = sys.argv[1:]
model_cache.fetch(model_cache.RemoteFile(url), path, url)
"""


def test_a_second_process_waits_for_the_first_ones_download_and_fetches_nothing(
        server, tmp_path):
    data = bytes(range(256)) * 64
    server.routes["/files/model.bin"] = Route(data)
    arrived, release = threading.Event(), threading.Event()
    server.held["/files/model.bin"] = (arrived, release)
    path = tmp_path / "cache" / "model.bin"
    command = [sys.executable, "-c", FETCH_SCRIPT, f"{server.url}/files/model.bin", str(path)]
    env = {**os.environ, "PYTHONPATH": helpers.ROOT}
    first = subprocess.Popen(command, cwd=helpers.ROOT, env=env, stderr=subprocess.PIPE,
                             text=True)
    second = None
    try:
        # The first process holds the lock and waits for the body the server holds back.
        assert arrived.wait(timeout=300)
        second = subprocess.Popen(command, cwd=helpers.ROOT, env=env,
                                  stderr=subprocess.PIPE, text=True)
        # Read up to the line that says it waits (the second process blocks there until
        # the first one is done), or to its end when it never waits.
        waited = next((line for line in second.stderr
                       if "Waiting for another process's download of" in line), None)
    finally:
        release.set()
    assert first.wait(timeout=300) == 0, first.stderr.read()
    assert second.wait(timeout=300) == 0, second.stderr.read()
    assert waited is not None
    assert [request for request in server.requests if request[0] == "GET"] == [
        ("GET", "/files/model.bin", None)]
    assert path.read_bytes() == data
    # Neither the lock file nor a partial download is left.
    assert os.listdir(path.parent) == ["model.bin"]


# Offline, unknown names: one line each.

def _assert_refused_offline(name, variable):
    """local_path(name) is one line saying the model is not cached and variable is set."""
    with pytest.raises(model_names.ModelNameError) as raised:
        model_names.local_path(name)
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"{name}: not in the cache (")
    assert message.endswith(f"and {variable} is set, so nothing is downloaded: run once "
                            f"online, or unset {variable}")


@pytest.mark.parametrize("variable", model_cache.OFFLINE_ENVS)
def test_offline_a_missing_model_is_one_line_and_a_cached_one_is_used(
        server, tiny, tiny_hf, monkeypatch, variable):
    publish_google(server, SMALL, tiny[1], inside_folder=False)
    folder = model_names.local_path(SMALL)
    monkeypatch.setenv(variable, "1")
    server.requests.clear()
    assert model_names.local_path(SMALL) == folder
    for name in ("uncased_L-4_H-256_A-4", "someone/bert"):
        _assert_refused_offline(name, variable)
    assert server.requests == []


@pytest.mark.parametrize("variable", model_cache.OFFLINE_ENVS)
def test_offline_keras_hub_kaggle_hf_and_tf_hub_names_use_their_caches_alone(
        server, tiny, tiny_preset, hf_hub, kaggle_api, tmp_path, monkeypatch, variable):
    handle, version = _builtin_kaggle_handle("bert_tiny_en_uncased")
    publish_kaggle(server, handle, version, tiny_preset[1])
    publish_kaggle(server, "someone/tiny-bert/keras/tiny", 2, tiny_preset[1])
    publish_hf(server, "someone/tiny_bert", tiny_preset[1], lfs=(keras_hub.WEIGHTS_FILE,))
    tf_hub_url, encoder = publish_tf_hub(server, tiny, str(tmp_path))
    names = ("bert_tiny_en_uncased", "kaggle://someone/tiny-bert/keras/tiny",
             "hf://someone/tiny_bert", tf_hub_url)
    # Not cached: refused in one line, with no request to any server.
    monkeypatch.setenv(variable, "1")
    for name in names:
        _assert_refused_offline(name, variable)
    assert server.requests == []
    # Cached online once: used offline, with no request either.
    monkeypatch.delenv(variable)
    folders = {name: model_names.local_path(name) for name in names}
    monkeypatch.setenv(variable, "1")
    server.requests.clear()
    assert {name: model_names.local_path(name) for name in names} == folders
    np.testing.assert_allclose(_outputs("kaggle://someone/tiny-bert/keras/tiny"),
                               _outputs(tiny_preset[0]), rtol=1e-6)
    np.testing.assert_allclose(_outputs("hf://someone/tiny_bert"), _outputs(tiny_preset[0]),
                               rtol=1e-6)
    np.testing.assert_allclose(_outputs(tf_hub_url), _outputs(encoder), rtol=1e-5)
    assert server.requests == []


def test_an_unknown_name_is_one_line_with_the_nearest_known_names(server):
    with pytest.raises(model_names.ModelNameError) as raised:
        model_names.local_path("uncased_L-12_H-768_A-13")
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("uncased_L-12_H-768_A-13: no such file or folder, and no model "
                              f"of that name (not found on {server.url}); nearest known "
                              "names: uncased_L-12_H-768_A-12")
    with pytest.raises(model_names.ModelNameError,
                       match="; nearest known names: bert-base-uncased, "):
        model_names.local_path("bert base uncased")


def test_paths_win_over_names_and_what_looks_like_a_path_is_left_alone(tmp_path, server,
                                                                       monkeypatch):
    folder = tmp_path / SMALL
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    assert model_names.local_path(SMALL) == SMALL
    for path in ("/no/such/folder", "./missing", "../missing", "a/b/c", "gs://bucket/ckpt"):
        assert model_names.local_path(path) == path
    assert model_names.local_path(None) is None
    assert server.requests == []


def test_the_script_says_an_unknown_name_in_one_line(server, tmp_path):
    env = {**os.environ, "PYTHONPATH": helpers.ROOT}
    done = subprocess.run(
        [sys.executable, "convert_checkpoint.py", "--input=bert-base-uncasedd",
         f"--output={tmp_path / 'out'}", "--output_format=hf"],
        cwd=helpers.ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("convert_checkpoint.py: error: bert-base-uncasedd: no such file "
                           "or folder, and no model of that name")
    assert "; nearest known names: bert-base-uncased, " in last
    assert "Traceback" not in done.stderr


def test_list_models_names_each_with_its_size():
    listed = {model.name: model for model in model_names.known_models()}
    assert listed["uncased_L-12_H-768_A-12"].parameters == 109_482_240
    assert listed[SMALL].source == "google" and not listed[SMALL].cached
    assert listed["google-bert/bert-base-uncased"].weight_bytes() == 4 * 109_482_240
    assert len([m for m in listed.values() if m.source == "google"]) == 9 + 23
    # keras-hub's own count of its tiny BERT is the same as bert_tf's.
    if "bert_tiny_en_uncased" in listed:
        assert listed["bert_tiny_en_uncased"].parameters == listed[SMALL].parameters
