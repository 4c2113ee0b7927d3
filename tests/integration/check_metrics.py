#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""Parses a /metrics scrape (stdin) with the Prometheus project's own parser
(Debian's python3-prometheus-client) and prints one line per sample:
`name{label="v",...} value`, labels sorted. Exits 1 if it does not parse."""
import sys

from prometheus_client.parser import text_string_to_metric_families

text = sys.stdin.read()
try:
    families = list(text_string_to_metric_families(text))
except Exception as e:  # the parser raises ValueError and friends
    print(f"unparseable: {e}", file=sys.stderr)
    sys.exit(1)
if not families:
    print("no metric families", file=sys.stderr)
    sys.exit(1)
for family in families:
    for s in family.samples:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
        print(f"{s.name}{{{labels}}} {s.value}")
