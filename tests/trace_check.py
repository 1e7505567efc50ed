#!/usr/bin/env python3
"""Check a trace written by tests/test_trace: usage trace_check.py PREFIX NRANKS.

The JSON must parse; rank r must have 2*(3+r) phase events, 3 post + 3
completion events of the broadcast and 2 + 2 of the allreduce; timestamps must not decrease within a rank; every "phase"
begin must be matched by an end; the CSV must hold the same events."""
import csv
import json
import sys

prefix, nranks = sys.argv[1], int(sys.argv[2])
with open(prefix + ".json") as f:
    doc = json.load(f)
ev = doc["traceEvents"]
errors = []
for r in range(nranks):
    mine = [e for e in ev if e["pid"] == r]
    want = 2 * (3 + r) + 6 + 4
    if len(mine) != want:
        errors.append(f"rank {r}: {len(mine)} events, expected {want}")
    ts = [e["ts"] for e in mine]
    if any(b < a for a, b in zip(ts, ts[1:])):
        errors.append(f"rank {r}: timestamps decrease")
    b = sum(1 for e in mine if e["ph"] == "B" and e["name"] == "phase")
    e_ = sum(1 for e in mine if e["ph"] == "E" and e["name"] == "phase")
    if b != 3 + r or e_ != 3 + r:
        errors.append(f"rank {r}: {b} begins / {e_} ends of 'phase'")
    posts = sorted(e["args"]["part"] for e in mine if e["name"] == "post bcast")
    dones = sorted(e["args"]["part"] for e in mine if e["name"] == "done bcast")
    if posts != [0, 1, 2] or dones != [0, 1, 2]:
        errors.append(f"rank {r}: lane posts {posts}, completions {dones}")
    posts = sorted(e["args"]["part"] for e in mine if e["name"] == "post allreduce")
    dones = sorted(e["args"]["part"] for e in mine if e["name"] == "done allreduce")
    if posts != [0, 1] or dones != [0, 1]:
        errors.append(f"rank {r}: allreduce lane posts {posts}, completions {dones}")
with open(prefix + ".csv") as f:
    rows = list(csv.DictReader(f))
if len(rows) != len(ev):
    errors.append(f"CSV has {len(rows)} rows, JSON {len(ev)} events")
for e in errors:
    print("FAIL:", e)
print(f"trace_check: {nranks} ranks, {len(ev)} events: {'FAIL' if errors else 'PASS'}")
sys.exit(1 if errors else 0)
