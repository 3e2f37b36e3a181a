#!/usr/bin/python3
"""Patch round trip: every case the engine suite recorded (pod, patch,
mutated pod) is replayed with python3-jsonpatch, an independent RFC 6902
implementation, and must give exactly the engine's mutated pod. Patches must
also be targeted: never a replace of the whole pod, of /spec or /metadata."""
import glob
import json
import os
import sys

import jsonpatch

cases_dir = sys.argv[1]
results = sys.argv[2] if len(sys.argv) > 2 else None
passed = failed = 0
files = sorted(glob.glob(os.path.join(cases_dir, "*.json")))
if not files:
    print("roundtrip: no cases recorded in " + cases_dir)
    sys.exit(1)
for path in files:
    with open(path) as f:
        case = json.load(f)
    name = os.path.basename(path)
    try:
        for op in case["patch"]:
            assert op["path"] not in ("", "/spec", "/metadata"), "untargeted op %r" % op
        got = jsonpatch.apply_patch(case["pod"], case["patch"])
        assert got == case["mutated"], "patched pod differs from the engine's:\n%s\n%s" % (
            json.dumps(got, sort_keys=True), json.dumps(case["mutated"], sort_keys=True))
        passed += 1
    except Exception as e:  # report every case, not just the first
        failed += 1
        print("FAIL %s: %s" % (name, e))
print("roundtrip: %d passed, %d failed" % (passed, failed))
if results:
    with open(results, "a") as f:
        f.write("%d %d\n" % (passed, failed))
sys.exit(1 if failed else 0)
