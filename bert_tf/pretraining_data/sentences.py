"""Plain text into sentences, by a simple rule that needs no model or download.

Next-sentence prediction pairs sentences, so plain text (a document a line,
a file or a TFDS example) is split into sentences before the data builder
reads it. `split_sentences` is that split; it is deliberately simple, so that
it runs anywhere the data builder runs. For better sentences, split the text
with a sentence splitter of your choice (the original suggests spaCy) and
give the result as one sentence a line (input_format "sentences").
"""

import re

# A possible end: ".", "!" or "?" (or several, "?!", "..."), the closing
# quotes and brackets that may follow, and the spaces after them.
_POSSIBLE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*\s+")
# What may open a sentence before its first letter.
_OPENERS = "\"'\u201c\u2018(["


def split_sentences(text):
    """Splits plain text into sentences.

    Every line break ends a sentence. Within a line, a sentence ends after
    ".", "!" or "?" (and any closing quotes or brackets right after it) when
    spaces follow and then an upper-case letter, possibly behind an opening
    quote or bracket: 'He left. "Why?" she asked.' is two sentences.

    What the rule does not handle, by design:
      - abbreviations and initials before a capital are split like sentence
        ends: "Dr. Smith", "the U.S. Army", "J. R. R. Tolkien";
      - a sentence that starts with a digit or a lower-case letter stays
        joined to the one before ("It ended in 1990. 2001 was ...");
      - scripts without upper case or without spaces between sentences
        (Chinese, Japanese, Thai, ...) are split at line breaks only.

    Args:
      text: a str, of one line or several.

    Returns:
      The sentences, stripped, in order; empty ones are left out.
    """
    sentences = []
    for line in text.splitlines():
        start = 0
        for end in _POSSIBLE_END.finditer(line):
            following = line[end.end():].lstrip(_OPENERS)
            if following[:1].isupper():
                sentences.append(line[start:end.end()].strip())
                start = end.end()
        sentences.append(line[start:].strip())
    return [sentence for sentence in sentences if sentence]
