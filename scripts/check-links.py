#!/usr/bin/env python3
# SPDX-License-Identifier: AGPL-3.0-only
#
# make docs: every relative link of the pages a user reads resolves. A link
# `[text](path)` names a file or directory that exists (relative to the
# page), and `[text](path#anchor)` or `[text](#anchor)` a heading of that
# page, its anchor made as GitHub makes it (lower case, punctuation but
# `-` and `_` dropped, spaces to `-`, a repeated one suffixed -1, -2...).
# Links to other sites are not followed; fenced blocks and code spans are
# not read.
# usage: scripts/check-links.py   (from the top of the repository)
import glob
import os
import re
import sys

PAGES = ["README.md", "SECURITY.md", "bench/README.md"] + sorted(glob.glob("docs/*.md"))

FENCE = re.compile(r"^\s*```.*?^\s*```[^\n]*$", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^()\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def prose(text):
    """TEXT without its fenced blocks (line count kept) and code spans."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return text


def anchors(path):
    seen = {}
    out = set()
    text = FENCE.sub("", open(path, encoding="utf-8").read())
    for m in HEADING.finditer(text):
        slug = m.group(2).strip().lower()
        slug = re.sub(r"[^\w\- ]", "", slug).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def main():
    failures = []
    count = 0
    for page in PAGES:
        if not os.path.exists(page):
            continue
        text = prose(open(page, encoding="utf-8").read())
        for lineno, line in enumerate(text.split("\n"), 1):
            for m in LINK.finditer(CODE.sub("", line)):
                target = m.group(1)
                if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                    continue
                count += 1
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if not os.path.exists(dest):
                    failures.append(f"{page}:{lineno}: {target}: no file {dest}")
                    continue
                if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    failures.append(f"{page}:{lineno}: {target}: no heading #{anchor} in {dest}")
    for f in failures:
        print(f"links: {f}", file=sys.stderr)
    print(f"== links: {count} relative links of {', '.join(p for p in PAGES if os.path.exists(p))} checked")
    if failures:
        return 1
    print("links: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
