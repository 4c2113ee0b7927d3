#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""Checks docker/grafana/splitkd.json for what a Grafana import needs, without
a Grafana (none runs on this machine): valid JSON; a data source template
variable of type prometheus; every data source reference, of every panel,
target, variable and annotation, is that variable, and no UID is hard-coded
anywhere; panel ids unique; every panel but a row has at least one query,
each with a unique refId and an expression; grid positions inside the 24
columns and not overlapping; every $variable in a query defined (or one of
Grafana's own); every recording rule a query names exists in the rules file,
and no query rates a counter that a recording rule already rates.

usage: check_dashboard.py DASHBOARD.json RULES.yaml
       check_dashboard.py --self-test DASHBOARD.json RULES.yaml
--self-test breaks a copy of the dashboard in each way above and fails
unless the check catches every one. Standard library only.
"""
import copy
import json
import re
import sys

DS_REF = {"type": "prometheus", "uid": "${datasource}"}
GRAFANA_VARS = {"__rate_interval", "__interval", "__interval_ms", "__range", "__range_s",
                "__range_ms", "__from", "__to", "__dashboard", "__org", "__user"}
MIN_SCHEMA = 39  # Grafana 10.4 / 11; 41 is what Grafana 12 writes
VAR_RE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)(?::\w+)?\]\]")
STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
RULE_NAME_RE = re.compile(r"\b[a-zA-Z_][a-zA-Z0-9_]*:[a-zA-Z0-9_:]*[a-zA-Z0-9_]")


def load_rules(text):
    """(recorded names, counters some recording rule already rates)."""
    records = set(re.findall(r"^\s*-?\s*record:\s*([\w:]+)\s*$", text, re.M))
    rated = set(re.findall(r"\brate\(\s*([a-zA-Z_]\w*)\s*(?:\{[^}]*\})?\s*\[", text))
    return records, rated


def walk_panels(panels):
    """Every panel, rows first, then the panels a collapsed row holds."""
    for p in panels:
        yield p
        if isinstance(p, dict) and isinstance(p.get("panels"), list):
            yield from walk_panels(p["panels"])


def queries(dash):
    """(where, expr, instant, panel id or None) for every PromQL expression the
    dashboard runs: panel targets and annotations. Variable queries are
    label_values() calls, returned by variable_queries()."""
    out = []
    for p in walk_panels(dash.get("panels", [])):
        if not isinstance(p, dict):
            continue
        for t in p.get("targets") or []:
            if isinstance(t, dict) and isinstance(t.get("expr"), str):
                where = f'panel {p.get("id")} "{p.get("title")}" {t.get("refId")}'
                out.append((where, t["expr"], bool(t.get("instant")), p.get("id")))
    for a in dash.get("annotations", {}).get("list", []):
        if isinstance(a, dict) and isinstance(a.get("expr"), str):
            out.append((f'annotation "{a.get("name")}"', a["expr"], False, None))
    return out


def variable_queries(dash):
    """(name, query string) of every query variable."""
    out = []
    for v in dash.get("templating", {}).get("list", []):
        if isinstance(v, dict) and v.get("type") == "query":
            q = v.get("query")
            if isinstance(q, dict):
                q = q.get("query")
            out.append((v.get("name"), q))
    return out


def all_dicts(node, path="$"):
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from all_dicts(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from all_dicts(v, f"{path}[{i}]")


def check_refs(dash, errors):
    for path, d in all_dicts(dash):
        if "uid" in d and d["uid"] not in (None, "${datasource}"):
            errors.append(f"{path}.uid is hard-coded: {d['uid']!r}")
        if "datasource" in d and d["datasource"] != DS_REF:
            errors.append(f"{path}.datasource is {d['datasource']!r}, not {DS_REF}")


def check_variables(dash, errors):
    tvars = dash.get("templating", {}).get("list")
    if not isinstance(tvars, list):
        errors.append("templating.list is missing")
        return set()
    names = [v.get("name") for v in tvars if isinstance(v, dict)]
    ds = [v for v in tvars if isinstance(v, dict) and v.get("name") == "datasource"]
    if len(ds) != 1 or ds[0].get("type") != "datasource" or ds[0].get("query") != "prometheus":
        errors.append('no single variable "datasource" of type datasource, query prometheus')
    if len(set(names)) != len(names):
        errors.append(f"variable names repeat: {names}")
    for v in tvars:
        if isinstance(v, dict) and v.get("type") == "query" and "datasource" not in v:
            errors.append(f'variable {v.get("name")} has no datasource')
    return set(names)


def check_grid(panels, errors):
    taken = {}
    for p in panels:
        g = p.get("gridPos") if isinstance(p, dict) else None
        if not isinstance(g, dict) or not all(isinstance(g.get(k), int) for k in "xywh"):
            errors.append(f'panel {p.get("id")}: gridPos needs integer x, y, w, h')
            continue
        if g["x"] < 0 or g["y"] < 0 or g["w"] < 1 or g["h"] < 1 or g["x"] + g["w"] > 24:
            errors.append(f'panel {p.get("id")}: gridPos {g} is outside the 24 columns')
            continue
        for y in range(g["y"], g["y"] + g["h"]):
            for x in range(g["x"], g["x"] + g["w"]):
                if (x, y) in taken:
                    errors.append(f'panel {p.get("id")} overlaps panel {taken[(x, y)]} at x={x} y={y}')
                    break
                taken[(x, y)] = p.get("id")
            else:
                continue
            break


def check_panels(dash, errors):
    panels = dash.get("panels")
    if not isinstance(panels, list) or not panels:
        errors.append("no panels")
        return
    seen = set()
    for p in walk_panels(panels):
        if not isinstance(p, dict):
            errors.append(f"a panel is not an object: {p!r}")
            continue
        pid = p.get("id")
        if not isinstance(pid, int) or isinstance(pid, bool):
            errors.append(f'panel "{p.get("title")}" has no integer id')
        elif pid in seen:
            errors.append(f'panel id {pid} is used twice ("{p.get("title")}")')
        seen.add(pid)
        if not p.get("title"):
            errors.append(f"panel {pid} has no title")
        if p.get("type") == "row":
            if p.get("targets"):
                errors.append(f"row {pid} has queries")
            continue
        if p.get("datasource") != DS_REF:
            errors.append(f"panel {pid} does not use the datasource variable")
        targets = p.get("targets")
        if not isinstance(targets, list) or not targets:
            errors.append(f'panel {pid} "{p.get("title")}" has no query')
            continue
        refs = [t.get("refId") for t in targets if isinstance(t, dict)]
        if len(refs) != len(targets) or len(set(refs)) != len(refs) or not all(refs):
            errors.append(f"panel {pid}: refIds missing or repeated: {refs}")
        for t in targets:
            if not isinstance(t, dict) or not isinstance(t.get("expr"), str) or not t["expr"].strip():
                errors.append(f"panel {pid}: a target has no expr")
            elif t.get("datasource") != DS_REF:
                errors.append(f"panel {pid} target {t.get('refId')} does not use the datasource variable")
    check_grid([p for p in panels if isinstance(p, dict)], errors)


def check_exprs(dash, var_names, records, rated, errors):
    exprs = [(w, e) for w, e, _, _ in queries(dash)] + \
        [(f"variable {n}", q or "") for n, q in variable_queries(dash)]
    for where, expr in exprs:
        for m in VAR_RE.finditer(expr):
            name = m.group(1) or m.group(2) or m.group(3)
            if name not in var_names and name not in GRAFANA_VARS:
                errors.append(f"{where}: ${name} is not a variable")
        bare = STRING_RE.sub('""', VAR_RE.sub("", expr))
        for name in RULE_NAME_RE.findall(bare):
            if name not in records:
                errors.append(f"{where}: {name} is not a recording rule of the rules file")
        for metric in rated:
            if re.search(r"\b(?:i?rate)\(\s*" + re.escape(metric) + r"\b", bare):
                errors.append(f"{where}: rates {metric}, which a recording rule already rates")


def check(text, rules_text):
    """Every problem found, as sentences; empty when the dashboard is fine."""
    try:
        dash = json.loads(text)
    except json.JSONDecodeError as e:
        return [f"not valid JSON: {e}"]
    if not isinstance(dash, dict):
        return ["the dashboard is not a JSON object"]
    errors = []
    if not isinstance(dash.get("title"), str) or not dash["title"]:
        errors.append("no title")
    sv = dash.get("schemaVersion")
    if not isinstance(sv, int) or sv < MIN_SCHEMA:
        errors.append(f"schemaVersion {sv!r} is older than {MIN_SCHEMA}")
    records, rated = load_rules(rules_text)
    if not records:
        errors.append("the rules file has no recording rule")
    check_refs(dash, errors)
    var_names = check_variables(dash, errors)
    check_panels(dash, errors)
    check_exprs(dash, var_names, records, rated, errors)
    return errors


def first_target_panel(d):
    return next(p for p in walk_panels(d["panels"]) if p.get("targets"))


def mutants(dash):
    """(what, a phrase the error must hold, broken dashboard text) for --self-test."""
    def mut(fn):
        d = copy.deepcopy(dash)
        fn(d)
        return json.dumps(d)

    def dup_id(d):
        d["panels"][2]["id"] = d["panels"][1]["id"]

    def hard_uid(d):
        first_target_panel(d)["targets"][0]["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}

    def name_ds(d):
        first_target_panel(d)["datasource"] = "Prometheus"

    def no_targets(d):
        first_target_panel(d)["targets"] = []

    def no_ds_var(d):
        d["templating"]["list"] = [v for v in d["templating"]["list"] if v["name"] != "datasource"]

    def unknown_var(d):
        t = first_target_panel(d)["targets"][0]
        t["expr"] = t["expr"].replace("$job", "$cluster")

    def unknown_rule(d):
        first_target_panel(d)["targets"][0]["expr"] = "sum(job:splitkd_nothing:rate5m)"

    def raw_rate(d):
        first_target_panel(d)["targets"][0]["expr"] = 'sum(rate(splitkd_requests_total{job=~"$job"}[5m]))'

    def overlap(d):
        d["panels"][2]["gridPos"] = dict(d["panels"][1]["gridPos"])

    def dash_uid(d):
        d["uid"] = "abc123"

    def same_ref(d):
        p = first_target_panel(d)
        p["targets"].append(dict(p["targets"][0]))

    return [("a repeated panel id", "used twice", mut(dup_id)),
            ("a hard-coded data source UID", "P1809F7CD0C75ACF3", mut(hard_uid)),
            ("a data source given by name", "'Prometheus'", mut(name_ds)),
            ("a panel without a query", "has no query", mut(no_targets)),
            ("no datasource variable", 'variable "datasource"', mut(no_ds_var)),
            ("an undefined variable", "$cluster", mut(unknown_var)),
            ("a recording rule that does not exist", "job:splitkd_nothing:rate5m", mut(unknown_rule)),
            ("a raw rate where a recording rule exists", "already rates", mut(raw_rate)),
            ("overlapping panels", "overlaps", mut(overlap)),
            ("a hard-coded dashboard UID", "abc123", mut(dash_uid)),
            ("a repeated refId", "repeated", mut(same_ref)),
            ("truncated JSON", "not valid JSON", json.dumps(dash)[:-40])]


def main(argv):
    self_test = argv[1:2] == ["--self-test"]
    args = argv[2:] if self_test else argv[1:]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as f:
        text = f.read()
    with open(args[1], encoding="utf-8") as f:
        rules_text = f.read()
    errors = check(text, rules_text)
    for e in errors:
        print(f"dashboard: {e}", file=sys.stderr)
    if errors:
        print(f"dashboard: FAILED, {len(errors)} problems in {args[0]}", file=sys.stderr)
        return 1
    dash = json.loads(text)
    if self_test:
        missed = []
        for what, expect, broken in mutants(dash):
            found = [e for e in check(broken, rules_text) if expect in e]
            print(f"  self-test: {what}: {'caught' if found else 'MISSED'}"
                  + (f" ({found[0]})" if found else ""))
            if not found:
                missed.append(what)
        if missed:
            print(f"dashboard: FAILED, the check misses: {', '.join(missed)}", file=sys.stderr)
            return 1
        print(f"dashboard: self-test: all {len(mutants(dash))} broken copies caught")
        return 0
    allp = list(walk_panels(dash["panels"]))
    rows = sum(1 for p in allp if p.get("type") == "row")
    records, _ = load_rules(rules_text)
    used = {n for _, e, _, _ in queries(dash) for n in RULE_NAME_RE.findall(STRING_RE.sub('""', e))}
    print(f"dashboard: {args[0]}: {len(queries(dash))} queries in {len(allp) - rows} panels "
          f"and {rows} rows, {len(dash['templating']['list'])} variables, schemaVersion "
          f"{dash['schemaVersion']}; {len(used)} of {len(records)} recording rules used: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
