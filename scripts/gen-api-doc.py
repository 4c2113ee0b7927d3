#!/usr/bin/env python3
# SPDX-License-Identifier: AGPL-3.0-only
#
# docs/api.md's route table and its reference of every route and parameter,
# written from api/openapi.json (the description splitkd serves at
# /openapi.json, which the conformance tests hold the router and every
# answer to), so the page cannot drift from it. Each generated part sits
# between `<!-- gen-api-doc: NAME -->` and `<!-- gen-api-doc: end -->`;
# the prose around them is written by hand.
#   scripts/gen-api-doc.py          rewrites the generated parts of docs/api.md
#   scripts/gen-api-doc.py --check  exits 1, with a diff, when they differ
#                                   from what it would write (make docs)
# Standard library only; run from the top of the repository.
import difflib
import json
import re
import sys

SPEC = "api/openapi.json"
PAGE = "docs/api.md"
METHODS = ("get", "head", "post")
NOTE = ("<!-- written by scripts/gen-api-doc.py from api/openapi.json: edit the description "
        "there, then run the script; make docs fails while this differs -->")


def cell(text):
    """TEXT on one line, fit for a table cell."""
    return re.sub(r"\s+", " ", text or "").strip().replace("|", "\\|")


def resolve(spec, obj):
    while "$ref" in obj:
        node = spec
        for part in obj["$ref"].lstrip("#/").split("/"):
            node = node[part]
        obj = node
    return obj


def operations(spec):
    """(path, method, operation) of every GET and POST, in the file's order."""
    for path, item in spec["paths"].items():
        for method in ("get", "post"):
            if method in item:
                yield path, method, item[method]


def methods_of(item):
    return ", ".join(m.upper() for m in METHODS if m in item)


def heading(path, method):
    return f"{method.upper()} {path}"


def anchor(text):
    """GitHub's anchor of a heading (as scripts/check-links.py makes it)."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def routes(spec):
    out = ["| route | methods | what |", "|---|---|---|"]
    for path, item in spec["paths"].items():
        first = next(m for m in ("get", "post") if m in item)
        both = "get" in item and "post" in item
        what = "; ".join(f"{m.upper()}: {item[m]['summary']}" if both else item[m]["summary"]
                         for m in ("get", "post") if m in item)
        link = f"[`{path}`](#{anchor(heading(path, first))})"
        out.append(f"| {link} | {methods_of(item)} | {cell(what)} |")
    return out


def schema_words(spec, schema):
    schema = schema or {}
    if "$ref" in schema:
        return f"`{schema['$ref'].rsplit('/', 1)[1]}`"
    if "oneOf" in schema:
        return " or ".join(schema_words(spec, s) for s in schema["oneOf"])
    return schema.get("type", "")


def reference(spec):
    out = []
    for path, method, op in operations(spec):
        out += ["", f"### {heading(path, method)}", ""]
        desc = cell(op.get("description"))
        if not desc.startswith(op["summary"]):
            out += [op["summary"] + ".", ""]
        out += [desc, ""]
        params = [resolve(spec, p) for p in op.get("parameters", [])]
        body = op.get("requestBody")
        if body:
            kinds = ", ".join(f"`{t}` ({schema_words(spec, c.get('schema'))})" for t, c in body["content"].items())
            need = "required" if body.get("required") else "optional"
            out += [f"Body ({need}): {kinds}. {cell(body.get('description'))}", ""]
        if params:
            out += ["| parameter | in | required | meaning |", "|---|---|---|---|"]
            for p in params:
                req = "yes" if p.get("required") else "no"
                out.append(f"| `{p['name']}` | {p['in']} | {req} | {cell(p.get('description'))} |")
            out.append("")
        else:
            out += ["No parameters.", ""]
    return out[1:]


def generate(spec, page):
    parts = {"routes": routes(spec), "reference": reference(spec)}
    pattern = re.compile(r"(<!-- gen-api-doc: (\w+) -->\n)(.*?)(<!-- gen-api-doc: end -->)", re.S)
    seen = []

    def fill(m):
        name = m.group(2)
        if name not in parts:
            raise SystemExit(f"gen-api-doc: {PAGE}: no part named {name!r} (routes, reference)")
        seen.append(name)
        return m.group(1) + NOTE + "\n\n" + "\n".join(parts[name]).rstrip("\n") + "\n\n" + m.group(4)

    out = pattern.sub(fill, page)
    missing = set(parts) - set(seen)
    if missing:
        raise SystemExit(f"gen-api-doc: {PAGE} has no `<!-- gen-api-doc: NAME -->` ... "
                         f"`<!-- gen-api-doc: end -->` for {', '.join(sorted(missing))}")
    return out


def main():
    check = "--check" in sys.argv[1:]
    spec = json.load(open(SPEC, encoding="utf-8"))
    page = open(PAGE, encoding="utf-8").read()
    want = generate(spec, page)
    count = sum(1 for _ in operations(spec))
    if not check:
        if want != page:
            open(PAGE, "w", encoding="utf-8").write(want)
            print(f"gen-api-doc: {PAGE} rewritten from {SPEC}")
        return 0
    print(f"== api doc: {PAGE}'s tables of {len(spec['paths'])} routes and {count} operations against {SPEC}")
    if want != page:
        diff = difflib.unified_diff(page.split("\n"), want.split("\n"), PAGE, "from " + SPEC, lineterm="", n=1)
        sys.stderr.write("\n".join(list(diff)[:60]) + "\n")
        print(f"api doc: {PAGE} is not what scripts/gen-api-doc.py writes from {SPEC}: "
              "run `python3 scripts/gen-api-doc.py`", file=sys.stderr)
        return 1
    print("api doc: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
