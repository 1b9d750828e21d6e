"""Builds data/sample_corpus.txt: a small pretraining corpus from standard library docstrings.

The corpus is in the input format of create_pretraining_data.py (and of Google's
original BERT repo): one sentence per line, a blank line between documents. Its
text is the English prose in the docstrings of a fixed list of pure-Python standard
library modules, which ships with every Python installation (Copyright Python
Software Foundation, PSF License).

Modules are read with ``ast`` from their source files and never imported, so no
module code runs. The output is deterministic for a given Python version: the
module list is fixed and sorted, documents come in source order, and nothing is
random. Each module gives up to three kinds of documents: its module docstring,
one document per public class (the class docstring followed by its public
methods' docstrings) and one document for its public top-level functions.

  python -m tools.make_sample_corpus
  python -m tools.make_sample_corpus --output /tmp/corpus.txt --max_bytes 200000
"""

import argparse
import ast
import os
import re
import sysconfig

# 100 pure-Python standard library modules, present from Python 3.10 on, chosen for
# the amount of prose in their docstrings. A module without a source file in the
# running Python's standard library directory is skipped.
MODULES = sorted([
    "argparse", "ast", "asyncio.base_events", "asyncio.events", "asyncio.futures",
    "asyncio.locks", "asyncio.queues", "asyncio.streams", "asyncio.tasks", "base64",
    "bdb", "bz2", "calendar", "cmd", "code", "codecs", "collections", "configparser",
    "dataclasses", "datetime", "difflib", "dis", "doctest", "email.charset",
    "email.feedparser", "email.header", "email.message", "email.parser", "email.policy",
    "email.utils", "fileinput", "ftplib", "functools", "getopt", "graphlib", "gzip",
    "http.client", "http.cookiejar", "http.cookies", "http.server", "imaplib",
    "importlib.abc", "importlib.metadata", "importlib.util", "inspect", "ipaddress",
    "locale", "logging", "logging.config", "logging.handlers", "lzma", "mailbox",
    "mimetypes", "optparse", "os", "pathlib", "pdb", "pickletools", "pkgutil",
    "platform", "pstats", "pyclbr", "pydoc", "queue", "random", "re", "sched", "shelve",
    "shutil", "site", "smtplib", "socket", "socketserver", "ssl", "statistics",
    "subprocess", "symtable", "sysconfig", "tarfile", "tempfile", "textwrap",
    "threading", "timeit", "tokenize", "traceback", "typing", "unittest.case",
    "unittest.loader", "unittest.mock", "urllib.parse", "urllib.request", "weakref",
    "wsgiref.handlers", "xml.dom.minidom", "xml.etree.ElementTree", "xml.sax.handler",
    "xmlrpc.client", "xmlrpc.server", "zipfile", "zipimport",
])

MIN_WORDS = 5
MIN_LETTER_FRACTION = 0.85
MIN_SENTENCES_PER_DOCUMENT = 2
CODE_MARKERS = (">>>", "::", "{", "}", "=", "`", "\\", "->", "[", "]", "|", "#", "...")
SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
ABBREVIATION_END = re.compile(r"\b(?:e\.g|i\.e|a\.k\.a|etc|vs|cf|Mr|Dr|No)\.$")


def module_source(name):
    """Reads the source code of a standard library module without importing it.

    Args:
        name: dotted module name, for example "http.client".

    Returns:
        The source text, or None when the module has no Python source file in the
        standard library directory of the running Python.
    """
    base = os.path.join(sysconfig.get_paths()["stdlib"], *name.split("."))
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return f.read()
    return None


def paragraphs(docstring):
    """Splits a docstring into prose paragraphs, each joined onto one line.

    Indented blocks (code samples, argument tables) and lines ending in a colon
    (headings such as "Args:") are dropped.

    Args:
        docstring: a cleaned docstring, as returned by ast.get_docstring.

    Returns:
        A list of paragraph strings.
    """
    result = []
    current = []
    for line in docstring.splitlines() + [""]:
        stripped = line.strip()
        if not stripped or line.startswith((" ", "\t")) or stripped.endswith(":"):
            if current:
                result.append(" ".join(" ".join(current).split()))
                current = []
            continue
        current.append(stripped)
    return result


def split_sentences(paragraph):
    """Splits a paragraph at '. ', '? ' or '! ' followed by an upper-case letter.

    Args:
        paragraph: one line of prose.

    Returns:
        A list of sentences; a split after a common abbreviation is undone.
    """
    sentences = []
    for piece in SENTENCE_END.split(paragraph):
        if sentences and ABBREVIATION_END.search(sentences[-1]):
            sentences[-1] += " " + piece
        else:
            sentences.append(piece)
    return sentences


def is_prose(sentence):
    """Tells whether a sentence looks like English prose rather than code.

    Args:
        sentence: one candidate sentence.

    Returns:
        True when it has at least MIN_WORDS words, starts with an upper-case
        letter, ends with '.', '?' or '!', contains no code marker, has at most
        one '(' and is mostly letters.
    """
    if len(sentence.split()) < MIN_WORDS or not sentence[0].isupper():
        return False
    if not sentence.endswith((".", "?", "!")):
        return False
    if any(marker in sentence for marker in CODE_MARKERS) or sentence.count("(") > 1:
        return False
    visible = [c for c in sentence if not c.isspace()]
    letters = sum(c.isalpha() for c in visible)
    return letters >= MIN_LETTER_FRACTION * len(visible)


def prose_sentences(docstrings):
    """Turns docstrings into the list of prose sentences they contain.

    Args:
        docstrings: docstrings (None entries are skipped), in document order.

    Returns:
        A list of sentences, each on one line.
    """
    sentences = []
    for docstring in docstrings:
        if not docstring:
            continue
        for paragraph in paragraphs(docstring):
            sentences.extend(s for s in split_sentences(paragraph) if is_prose(s))
    return sentences


def is_public(node):
    """Tells whether a class or function definition has a public name.

    Args:
        node: an ast.ClassDef, ast.FunctionDef or ast.AsyncFunctionDef.

    Returns:
        True when the name does not start with an underscore.
    """
    return not node.name.startswith("_")


def module_documents(source):
    """Collects the documents of one module.

    Args:
        source: the module's source text.

    Returns:
        A list of documents, each a list of at least MIN_SENTENCES_PER_DOCUMENT
        sentences: the module docstring, then one per public class (its docstring
        and its public methods' docstrings), then one for the public functions.
    """
    tree = ast.parse(source)
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef)
    groups = [[ast.get_docstring(tree)]]
    functions = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and is_public(node):
            methods = [ast.get_docstring(child) for child in node.body
                       if isinstance(child, definitions) and is_public(child)]
            groups.append([ast.get_docstring(node)] + methods)
        elif isinstance(node, definitions) and is_public(node):
            functions.append(ast.get_docstring(node))
    groups.append(functions)
    documents = [prose_sentences(group) for group in groups]
    return [d for d in documents if len(d) >= MIN_SENTENCES_PER_DOCUMENT]


def build_corpus(max_bytes):
    """Builds the corpus text from the docstrings of MODULES.

    Args:
        max_bytes: upper bound on the UTF-8 size of the result; documents are
            added in order until the next one would not fit.

    Returns:
        The corpus text: one sentence per line, documents separated by a blank line.
    """
    blocks = []
    size = 0
    for name in MODULES:
        source = module_source(name)
        if source is None:
            continue
        for document in module_documents(source):
            block = "\n".join(document) + "\n"
            cost = len(block.encode("utf-8")) + (1 if blocks else 0)
            if size + cost > max_bytes:
                return "\n".join(blocks)
            blocks.append(block)
            size += cost
    return "\n".join(blocks)


def main():
    """Parses the flags, builds the corpus and writes it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join("data", "sample_corpus.txt"),
                        help="Path of the corpus file to write.")
    parser.add_argument("--max_bytes", type=int, default=600_000,
                        help="Stop adding documents before the file would exceed this size.")
    args = parser.parse_args()
    text = build_corpus(args.max_bytes)
    directory = os.path.dirname(args.output)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    documents = text.count("\n\n") + 1 if text else 0
    sentences = sum(1 for line in text.splitlines() if line)
    print(f"Wrote {args.output}: {len(text.encode('utf-8'))} bytes, "
          f"{documents} documents, {sentences} sentences.")


if __name__ == "__main__":
    main()
