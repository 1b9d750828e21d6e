"""The character classes of BERT's basic tokenization, from Python's unicodedata.

`char_class_ranges()` lists each class (removed, whitespace, accent,
punctuation, CJK, split) as code point ranges, following the original's
definitions. `tokenization` compiles them into `re` patterns
(`patterns_for`), `text_ops` into RE2 patterns for the graph, so both
tokenizers agree even where TensorFlow's Unicode tables differ from Python's.
"""

import collections
import functools
import re
import sys
import unicodedata

# The CJK Unified Ideographs blocks and their extensions and compatibility
# blocks, as the original lists them. Hangul, Hiragana and Katakana are not in
# them: those scripts separate words with spaces.
CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)

# Any code point outside the Basic Multilingual Plane.
_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")


@functools.cache
def char_class_ranges():
    """Returns the character classes of basic tokenization as code point ranges.

    The classes come from this Python's `unicodedata` and follow the
    original's definitions. `text_ops` writes its in-graph patterns from them,
    so both forms agree even where TensorFlow's Unicode tables differ from
    Python's.

    Returns:
      A dict from class name to a tuple of inclusive (first, last) code point
      ranges, sorted:
        "removed": deleted by cleaning: NUL, U+FFFD and the control characters
          (categories Cc and Cf) except tab, newline and carriage return.
        "whitespace": turned into a space by cleaning: tab, newline, carriage
          return and category Zs, but for the space itself, which needs no
          replacing.
        "accent": category Mn, deleted after NFD when lower casing.
        "punctuation": ASCII 33-47, 58-64, 91-96, 123-126 and categories P*;
          each is a word of its own.
        "cjk": `CJK_RANGES`; each ideograph is a word of its own.
        "split": what `str.split()` splits on.
    """
    by_category = collections.defaultdict(list)
    split = []
    for code_point in range(sys.maxunicode + 1):
        char = chr(code_point)
        by_category[unicodedata.category(char)].append(code_point)
        if char.isspace():
            split.append(code_point)
    tab_newline_return = {0x09, 0x0A, 0x0D}
    removed = set(by_category["Cc"] + by_category["Cf"]) - tab_newline_return | {0x00, 0xFFFD}
    whitespace = set(by_category["Zs"]) - {0x20} | tab_newline_return
    # All non-alphanumeric ASCII counts as punctuation, e.g. "$", "^" and "`",
    # which Unicode classes as symbols.
    ascii_punctuation = [*range(33, 48), *range(58, 65), *range(91, 97), *range(123, 127)]
    punctuation = set(ascii_punctuation).union(
        *(by_category[category] for category in ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"))
    )
    return {
        "removed": _to_ranges(removed),
        "whitespace": _to_ranges(whitespace),
        "accent": _to_ranges(by_category["Mn"]),
        "punctuation": _to_ranges(punctuation),
        "cjk": CJK_RANGES,
        "split": _to_ranges(split),
    }


def _to_ranges(code_points):
    """Merges code points into sorted, inclusive (first, last) ranges."""
    ranges = []
    for code_point in sorted(code_points):
        if ranges and ranges[-1][1] == code_point - 1:
            ranges[-1] = (ranges[-1][0], code_point)
        else:
            ranges.append((code_point, code_point))
    return tuple(ranges)


def patterns_for(text):
    """Returns the `re` patterns of basic tokenization fitted to `text`.

    `re` tests a character against the part of a class outside the Basic
    Multilingual Plane range by range, which makes the full classes slow. Most
    text is ASCII or stays in that plane, and classes cut to the text's range
    of code points give the same matches on it, much faster.
    """
    if text.isascii():
        return _patterns(0x7F)
    if not _ASTRAL_RE.search(text):
        return _patterns(0xFFFF)
    return _patterns(sys.maxunicode)


@functools.cache
def _patterns(max_code_point):
    """Compiles the `re` patterns of `BasicTokenizer` from `char_class_ranges()`.

    Args:
      max_code_point: the classes keep only the code points up to this one.

    Returns:
      A dict of compiled patterns: "removed", "whitespace", "word", and, above
      ASCII (which has no accents), "accent".
    """
    classes = {}
    for name, ranges in char_class_ranges().items():
        classes[name] = _re_class(
            (first, min(last, max_code_point)) for first, last in ranges if first <= max_code_point
        )
    own_word = classes["punctuation"] + classes["cjk"]
    patterns = {
        "removed": re.compile(f"[{classes['removed']}]+"),
        "whitespace": re.compile(f"[{classes['whitespace']}]"),
        # A word is one punctuation mark or ideograph, or a run of anything
        # but those and whitespace.
        "word": re.compile(f"[{own_word}]|[^{own_word}{classes['split']}]+"),
    }
    if classes["accent"]:
        patterns["accent"] = re.compile(f"[{classes['accent']}]+")
    return patterns


def _re_class(ranges):
    """Writes code point ranges as the body of an `re` character class."""
    return "".join(
        f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}"
        for first, last in ranges
    )
