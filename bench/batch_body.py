# SPDX-License-Identifier: AGPL-3.0-only
# The batch body `make bench` and bench/instructions.sh send: 1024 queries
# over the catalog's targets and models, compact JSON (what a scheduler's
# serializer writes). usage: batch_body.py OUT [fields [engine]]
# With an engine (fa2, seed, ...), every query names it with the inputs the
# other engines read (the models that state their kv heads, contexts of 1k to
# 8.5k tokens, pages of 256, co-batches of 1 to 64), so engine=seed and
# engine=fa2 read the same bytes; fields "-" is none. With a fourth argument
# "mixed", each query is a mixed batch of 8 lengths (seq_lens: one long of
# 1k to 8.5k tokens beside three of 512 and four of 100) in place of
# num_seqs and seq_len (issue 49's bench).
import json
import sys

targets = ["hopper", "gb10", "b200", "a100", "h100-pcie", "l40s", "rtx4090", "rtx5090"]
models = ["qwen3.8-27b", "llama-3.1-8b", "llama-3.1-70b", "qwen3-32b", "gemma-2-9b", "gpt-oss-120b"]
q = [{"target": targets[i % 8], "model": models[i % 6], "max_batch_size": 1 + i % 64} for i in range(1024)]
if len(sys.argv) > 3:
    models[0] = "qwen3-8b"  # qwen3.8-27b states no num_kv_heads
    targets[2] = "hopper"  # vLLM V1 on B200 would run FA4, which is not ported (refused)
    q = [{"target": targets[i % 8], "model": models[i % 6], "max_batch_size": 1 + i % 64,
          "engine": sys.argv[3], "seq_len": 1024 + 512 * (i % 16), "page_size": 256,
          "num_seqs": 1 + i % 64} for i in range(1024)]
if len(sys.argv) > 4 and sys.argv[4] == "mixed":
    for i, x in enumerate(q):
        del x["seq_len"], x["num_seqs"]
        x["seq_lens"] = [1024 + 512 * (i % 16), 512, 512, 512, 100, 100, 100, 100]
body = {"queries": q}
if len(sys.argv) > 2 and sys.argv[2] != "-":
    body["fields"] = sys.argv[2]
with open(sys.argv[1], "w") as f:
    json.dump(body, f, separators=(",", ":"))
