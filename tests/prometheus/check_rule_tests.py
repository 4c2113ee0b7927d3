#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""Checks that the promtool unit tests cover every alert of the rules file, and
that every alert carries what an operator needs.

For each alert of RULES: at least one test case where it fires (a non-empty
exp_alerts) and one where it must stay quiet (exp_alerts: []); a severity
label of critical, warning or info; summary, description and runbook
annotations. The test file must load RULES itself (its rule_files). Also
checks itself: dropping any alert's firing or quiet cases, or an
annotation, must make it fail.

usage: check_rule_tests.py RULES.yaml TESTS.yaml
Needs PyYAML (Debian python3-yaml, installed by scripts/deps.sh prometheus).
"""
import copy
import os
import sys

import yaml

SEVERITIES = {"critical", "warning", "info"}
ANNOTATIONS = ("summary", "description", "runbook")


def alerts_of(rules):
    return [r for g in rules["groups"] for r in g["rules"] if "alert" in r]


def check(rules, tests, rules_path, tests_path):
    errors = []
    loaded = {os.path.realpath(os.path.join(os.path.dirname(tests_path), f))
              for f in tests.get("rule_files", [])}
    if os.path.realpath(rules_path) not in loaded:
        errors.append(f"{tests_path} does not load {rules_path} (rule_files: {sorted(loaded)})")
    fires, quiet = {}, {}
    for t in tests.get("tests", []):
        for case in t.get("alert_rule_test") or []:
            name = case.get("alertname")
            bucket = fires if case.get("exp_alerts") else quiet
            bucket[name] = bucket.get(name, 0) + 1
    names = [a["alert"] for a in alerts_of(rules)]
    for a in alerts_of(rules):
        name = a["alert"]
        if not fires.get(name):
            errors.append(f"{name}: no test case where it fires")
        if not quiet.get(name):
            errors.append(f"{name}: no test case where it stays quiet")
        if a.get("labels", {}).get("severity") not in SEVERITIES:
            errors.append(f"{name}: severity is {a.get('labels', {}).get('severity')!r}")
        for key in ANNOTATIONS:
            if not str(a.get("annotations", {}).get(key, "")).strip():
                errors.append(f"{name}: no {key} annotation")
    for name in set(fires) | set(quiet):
        if name not in names:
            errors.append(f"the tests name {name}, which is not an alert of the rules file")
    return errors, names, fires, quiet


def self_test(rules, tests, rules_path, tests_path, names):
    """Each broken copy must be caught."""
    missed = 0
    for name in names:
        for keep_firing in (False, True):
            t = copy.deepcopy(tests)
            for group in t["tests"]:
                group["alert_rule_test"] = [
                    c for c in group.get("alert_rule_test") or []
                    if c["alertname"] != name or bool(c.get("exp_alerts")) == keep_firing]
            if not check(rules, t, rules_path, tests_path)[0]:
                print(f"  self-test: dropping the {'quiet' if keep_firing else 'firing'} "
                      f"cases of {name}: MISSED")
                missed += 1
    r = copy.deepcopy(rules)
    del alerts_of(r)[0]["annotations"]["runbook"]
    if not check(r, tests, rules_path, tests_path)[0]:
        print("  self-test: an alert without a runbook: MISSED")
        missed += 1
    return missed


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rules_path, tests_path = argv[1], argv[2]
    with open(rules_path) as f:
        rules = yaml.safe_load(f)
    with open(tests_path) as f:
        tests = yaml.safe_load(f)
    errors, names, fires, quiet = check(rules, tests, rules_path, tests_path)
    for e in errors:
        print(f"rule tests: {e}", file=sys.stderr)
    if errors:
        print(f"rule tests: FAILED, {len(errors)} problems", file=sys.stderr)
        return 1
    missed = self_test(rules, tests, rules_path, tests_path, names)
    if missed:
        print(f"rule tests: FAILED, the self-test missed {missed} broken copies", file=sys.stderr)
        return 1
    print(f"rule tests: {len(names)} alerts, each fires in a test and stays quiet in another "
          f"({sum(fires.values())} firing cases, {sum(quiet.values())} quiet cases); each has a "
          f"severity, a summary, a description and a runbook; self-test: "
          f"{2 * len(names) + 1} broken copies caught")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
