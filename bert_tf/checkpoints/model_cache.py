"""The cache of downloaded models, and the downloader that fills it.

One folder holds every model bert_tf fetched by name: $BERT_TF_CACHE, else
~/.cache/bert_tf. Each file is fetched once, as huggingface_hub fetches
its own: the bytes go to NAME.incomplete beside the final file; an
interrupted download (a dropped connection, a killed process) leaves that
file, and the next fetch resumes it with an HTTP Range request; a complete
one is checked, its size and, where the publisher gives one, its checksum
(the Hub's sha256, Google Cloud Storage's md5), and only then renamed to
NAME. So a file under its final name is always whole and checked, and a
model is never loaded from a partial or corrupt download. An archive is
unpacked into a temporary folder beside its final one and renamed, so a
folder under its final name is always complete too.

Processes share the cache: a download holds NAME.lock beside it (an flock,
as huggingface_hub's filelock), so a second process that wants the same
file waits for the first, then finds it complete and fetches nothing.

Offline ($BERT_TF_OFFLINE, or Hugging Face's own HF_HUB_OFFLINE), nothing
is downloaded: model_names.py uses what the cache holds and says when a
model is missing.

HTTP is the standard library's urllib: no dependency for a few GET and
HEAD requests. Nothing here imports TensorFlow.
"""

import base64
import contextlib
import dataclasses
import fcntl
import hashlib
import http.client
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile

from absl import logging

CACHE_ENV = "BERT_TF_CACHE"
OFFLINE_ENVS = ("BERT_TF_OFFLINE", "HF_HUB_OFFLINE")
DEFAULT_CACHE = os.path.join("~", ".cache", "bert_tf")
INCOMPLETE_SUFFIX = ".incomplete"
LOCK_SUFFIX = ".lock"

# A stalled connection fails after this long, and the download is resumed.
_TIMEOUT_SECONDS = 60
# A dropped connection is resumed this many times in one fetch before the
# user is told to run again.
_ATTEMPTS = 3
_CHUNK_BYTES = 1 << 20
# One progress line per this many seconds: visible, never a flood.
_PROGRESS_SECONDS = 10
_TRUE_VALUES = ("1", "true", "yes", "on")


class DownloadError(ValueError):
    """A download that failed or was refused; one line naming the model or file."""


class NotFoundError(DownloadError):
    """The server has no such file (HTTP 401, 403 or 404)."""


def cache_dir():
    """The folder downloaded models are kept in.

    Returns:
      $BERT_TF_CACHE, else ~/.cache/bert_tf, with "~" expanded.
    """
    return os.path.expanduser(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


def is_offline():
    """Whether downloads are off: $BERT_TF_OFFLINE or $HF_HUB_OFFLINE is 1/true/yes/on.

    Returns:
      A bool.
    """
    return any(os.environ.get(name, "").strip().lower() in _TRUE_VALUES
               for name in OFFLINE_ENVS)


def offline_setting():
    """The variable that turned downloads off, for messages.

    Returns:
      The first of OFFLINE_ENVS that is set to a true value, or None.
    """
    return next((name for name in OFFLINE_ENVS
                 if os.environ.get(name, "").strip().lower() in _TRUE_VALUES), None)


@dataclasses.dataclass(frozen=True)
class RemoteFile:
    """A file to download and what its publisher says of it.

    Attributes:
      url: Where its bytes are (after the publisher's redirects).
      size: Its bytes, or None when not given.
      sha256: Its sha256 in hex, or None.
      md5: Its md5 in hex, or None.
      headers: Request headers the download needs (authorization).
    """

    url: str
    size: int | None = None
    sha256: str | None = None
    md5: str | None = None
    headers: tuple = ()


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Hands a redirect back to the caller: the Hub puts an LFS file's sha256 and size
    on the redirect itself, not on the file it redirects to."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _describe(error):
    """An exception as a short phrase for a one-line message."""
    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError):
        return str(error.reason)
    return str(error) or type(error).__name__


def _hash_headers(headers):
    """(sha256, md5) in hex from a response's headers, each None when not given.

    The Hub gives an LFS file's sha256 as X-Linked-Etag (a git blob's etag
    is a sha1, and is no checksum of the bytes); Google Cloud Storage gives
    an object's md5, in base64, in x-goog-hash.
    """
    sha256 = (headers.get("X-Linked-Etag") or "").strip('"').removeprefix("W/").strip('"')
    if len(sha256) != 64:
        sha256 = None
    md5 = None
    for part in (headers.get("x-goog-hash") or "").split(","):
        key, _, value = part.strip().partition("=")
        if key == "md5" and value:
            md5 = base64.b64decode(value + "=" * (-len(value) % 4)).hex()
    return sha256, md5


def probe(url, headers=()):
    """Asks the server what a file is, without downloading it (an HTTP HEAD).

    A redirect to the same server (a renamed Hub repository, a legacy id)
    is followed; one to another server (the Hub's storage) is where the
    bytes are, and its own headers give their sha256 and size.

    Args:
      url: The file's URL.
      headers: (name, value) pairs to send (authorization).

    Returns:
      A RemoteFile.

    Raises:
      NotFoundError: for HTTP 401, 403 or 404.
      DownloadError: when the server cannot be reached or answers otherwise.
    """
    opener = urllib.request.build_opener(_NoRedirects)
    for _ in range(5):
        request = urllib.request.Request(url, method="HEAD", headers=dict(headers))
        try:
            response = opener.open(request, timeout=_TIMEOUT_SECONDS)
            response.close()
            redirect = None
        except urllib.error.HTTPError as e:
            if e.code in (401, 403, 404):
                raise NotFoundError(f"{url}: {_describe(e)}") from None
            if e.code not in (301, 302, 303, 307, 308) or not e.headers.get("Location"):
                raise DownloadError(f"{url}: {_describe(e)}") from None
            response, redirect = e, urllib.parse.urljoin(url, e.headers["Location"])
        except (OSError, http.client.HTTPException) as e:
            raise DownloadError(f"cannot reach {url}: {_describe(e)}") from None
        sha256, md5 = _hash_headers(response.headers)
        size = response.headers.get("X-Linked-Size") or (
            None if redirect else response.headers.get("Content-Length"))
        same_server = (redirect and urllib.parse.urlsplit(redirect).netloc
                       == urllib.parse.urlsplit(url).netloc)
        if same_server and not sha256:
            url = redirect
            continue
        return RemoteFile(redirect or url, int(size) if size else None, sha256, md5,
                          tuple(headers) if not redirect else ())
    raise DownloadError(f"{url}: too many redirects")


def _mb(size):
    return f"{size / 1e6:,.1f} MB"


class _Progress:
    """Logs a long download's progress, one line per _PROGRESS_SECONDS."""

    def __init__(self, label, done, total):
        self.label, self.done, self.total = label, done, total
        self.last = time.monotonic()

    def add(self, count):
        self.done += count
        now = time.monotonic()
        if now - self.last >= _PROGRESS_SECONDS:
            self.last = now
            of = f" of {_mb(self.total)} ({100 * self.done / self.total:.0f}%)" \
                if self.total else ""
            logging.info("Downloading %s: %s%s", self.label, _mb(self.done), of)


def _file_size(path):
    return os.path.getsize(path) if os.path.exists(path) else 0


def _transfer(remote, partial, label):
    """Appends the bytes partial lacks, from the server; starts over when the server
    cannot send a part (HTTP 200 to a Range request, or 416)."""
    offset = _file_size(partial)
    headers = dict(remote.headers)
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(remote.url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=_TIMEOUT_SECONDS)
    except urllib.error.HTTPError as e:
        if e.code == 416:  # The part asked for is past the end: not this file's prefix.
            os.remove(partial)
            return
        if e.code in (401, 403, 404):
            raise NotFoundError(f"{remote.url}: {_describe(e)}") from None
        raise DownloadError(f"{label}: {remote.url}: {_describe(e)}") from None
    with response:
        if offset and response.status != 206:
            offset = 0
        if offset:
            logging.info("Resuming %s at %s", label, _mb(offset))
        progress = _Progress(label, offset, remote.size)
        with open(partial, "ab" if offset else "wb") as f:
            while chunk := response.read(_CHUNK_BYTES):
                f.write(chunk)
                progress.add(len(chunk))


def _digest(path, algorithm):
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _corruption(remote, partial):
    """What is wrong with a downloaded file whose size is complete, or None."""
    size = _file_size(partial)
    if remote.size is not None and size != remote.size:
        return f"{size} bytes, not the {remote.size} the server announced"
    for algorithm in ("sha256", "md5"):
        expected = getattr(remote, algorithm)
        if expected and _digest(partial, algorithm) != expected.lower():
            return f"its {algorithm} is not the server's {expected}"
    return None


def _holds(lock_file, lock_path):
    """Whether an open lock file is still the one at lock_path (not unlinked by its
    previous holder)."""
    try:
        return os.fstat(lock_file.fileno()).st_ino == os.stat(lock_path).st_ino
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def locked(path):
    """Holds path's lock (path + LOCK_SUFFIX) against other processes while it runs.

    The lock is an flock on a file beside path: the kernel frees it when
    its process ends, killed or not, so a crash never leaves it held. The
    holder deletes the file before it lets go, to leave no litter in the
    model's folder; a process that was waiting on the deleted file sees so
    and locks the new one.

    Args:
      path: The file or folder to download or unpack.

    Yields:
      None, with the lock held.
    """
    lock_path = path + LOCK_SUFFIX
    os.makedirs(os.path.dirname(lock_path), exist_ok=True)
    while True:
        lock_file = open(lock_path, "a")
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # Said, so that a process that seems to hang says what it waits for.
            logging.info("Waiting for another process's download of %s", path)
            fcntl.flock(lock_file, fcntl.LOCK_EX)
        if _holds(lock_file, lock_path):
            break
        lock_file.close()
    try:
        yield
    finally:
        os.remove(lock_path)
        lock_file.close()


def fetch(remote, path, label):
    """Downloads a file to path, once: resumed when interrupted, checked, then renamed.

    Another process that fetches the same path meanwhile waits for this one
    (locked()), then finds the file complete.

    Args:
      remote: The RemoteFile (probe()'s, or one with just a url).
      path: Its final place; nothing is done when it exists.
      label: The file's URL as the user would know it, for messages.

    Returns:
      path.

    Raises:
      DownloadError: when the download fails or stays incomplete after
        _ATTEMPTS tries (what it has is kept, and the next fetch resumes
        it), or when a fresh download fails its check (it is deleted).
    """
    if os.path.exists(path):
        return path
    with locked(path):
        # Another process may have completed it while this one waited.
        if os.path.exists(path):
            return path
        return _fetch_unlocked(remote, path, label)


def _fetch_unlocked(remote, path, label):
    """fetch()'s download, with the lock held."""
    partial = path + INCOMPLETE_SUFFIX
    if os.path.exists(partial):
        logging.info("Found an incomplete download of %s (%s): resuming it", label,
                     _mb(_file_size(partial)))
    else:
        logging.info("Downloading %s%s", label, f" ({_mb(remote.size)})" if remote.size else "")
    problem = None
    for _ in range(_ATTEMPTS):
        resumed = _file_size(partial) > 0
        # A file killed after its last byte and before its rename needs no request.
        if not (resumed and remote.size is not None and _file_size(partial) >= remote.size):
            try:
                _transfer(remote, partial, label)
            except (OSError, http.client.HTTPException) as e:
                problem = f"download interrupted ({_describe(e)})"
                continue
        if remote.size is not None and _file_size(partial) < remote.size:
            problem = (f"download interrupted at {_file_size(partial)} of {remote.size} "
                       "bytes")
            continue
        corruption = _corruption(remote, partial)
        if corruption is None:
            os.replace(partial, path)
            return path
        os.remove(partial)
        problem = f"download is corrupt ({corruption})"
        if not resumed:
            raise DownloadError(f"{label}: the {problem} and was deleted; run again to "
                                "download it anew")
        logging.warning("%s: the resumed %s; downloading it anew", label, problem)
    raise DownloadError(f"{label}: {problem}; run again to resume it")


def unpack_zip(archive, folder, marker, extra_files=None):
    """Unpacks a zip into folder, whole or not at all.

    The files go to a temporary folder beside folder; the folder within it
    that holds marker (the zip's top folder, or the zip's top level) is
    renamed to folder.

    Args:
      archive: The zip file.
      folder: The final folder; it must not exist.
      marker: A file name the unpacked folder must hold (bert_config.json).
      extra_files: {name: text} to write into the folder before it is
        renamed, or None.

    Returns:
      folder.

    Raises:
      DownloadError: for a zip that cannot be read or lacks marker.
    """
    parent = os.path.dirname(folder)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(folder)}.", dir=parent)
    try:
        try:
            with zipfile.ZipFile(archive) as f:
                f.extractall(staging)
        except (zipfile.BadZipFile, OSError) as e:
            raise DownloadError(f"{archive}: cannot be unpacked ({_describe(e)}); delete it "
                                "and run again") from None
        found = next((root for root, _, files in os.walk(staging) if marker in files), None)
        if found is None:
            raise DownloadError(f"{archive}: holds no {marker}; delete it and run again")
        for name, text in (extra_files or {}).items():
            with open(os.path.join(found, name), "w", encoding="utf-8") as f:
                f.write(text)
        os.replace(found, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder
