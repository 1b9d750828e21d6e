"""SQuAD files for the benchmarks: v1.1 copies holding only the answerable questions."""

import json


def answerable_only(path, out_path, skip_titles=()):
    """Writes a v1.1 copy of a SQuAD json with only its answerable questions.

    Both run_squad.py (without --version_2_with_negative) and the Hugging Face
    peers then train and score on exactly the same questions.

    Args:
      path: A SQuAD 1.1 or 2.0 json file.
      out_path: Where the copy is written.
      skip_titles: Titles of articles to leave out (e.g. those of another split
        that a comparison was already made on).

    Returns:
      The number of questions kept.
    """
    with open(path, encoding="utf-8") as f:
        squad = json.load(f)
    unknown = set(skip_titles) - {article["title"] for article in squad["data"]}
    if unknown:
        raise ValueError(f"{path} has no article titled {', '.join(sorted(unknown))}")
    squad["data"] = [article for article in squad["data"] if article["title"] not in skip_titles]
    count = 0
    for article in squad["data"]:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = [qa for qa in paragraph["qas"]
                                if not qa.get("is_impossible") and qa["answers"]]
            for qa in paragraph["qas"]:
                qa.pop("is_impossible", None)
            count += len(paragraph["qas"])
    squad["version"] = "1.1"
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(squad, f)
    return count
