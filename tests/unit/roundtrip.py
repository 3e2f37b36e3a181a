#!/usr/bin/python3
"""Patch round trip: every case the engine suite recorded (pod, patch,
mutated pod) is replayed with python3-jsonpatch, an independent RFC 6902
implementation, and must give exactly the engine's mutated pod. Patches must
also be targeted: never a replace of the whole pod, of /spec or /metadata.

With the otel-webhook binary as third argument, every mutated pod that
carries a status record also goes through `otel-webhook uninject` (all of
them in one List) and must come back as the engine's input, and every pod
without one must come back untouched.

usage: roundtrip.py CASES_DIR [RESULTS [OTEL_WEBHOOK]]"""
import glob
import json
import os
import subprocess
import sys

import jsonpatch

cases_dir = sys.argv[1]
results = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
webhook = sys.argv[3] if len(sys.argv) > 3 else None
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


def annotations(pod):
    meta = pod.get("metadata") if isinstance(pod, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    return ann if isinstance(ann, dict) else {}


if webhook:
    cases = []
    for path in files:
        with open(path) as f:
            cases.append((os.path.basename(path), json.load(f)))
    # Cases whose input carries a record already are test_record.c's own
    # (records that do not match their pod among them): left out here.
    cases = [(n, c) for n, c in cases if isinstance(c.get("mutated"), dict) and c["mutated"].get("kind") == "Pod"
             and "otel-webhook/status" not in annotations(c["pod"])]
    items = [c["mutated"] for _, c in cases]
    p = subprocess.run([webhook, "uninject", "-f", "-", "-o", "json"], capture_output=True, text=True,
                       input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    if p.returncode != 0:
        failed += 1
        print("FAIL uninject exit %d: %s" % (p.returncode, p.stderr))
    else:
        back = json.loads(p.stdout)["items"]
        k = 0
        with_record = 0
        for name, c in cases:
            m = c["mutated"]
            got = back[k]
            k += 1
            if "otel-webhook/status" in annotations(m):
                want, what = c["pod"], "the input"
                with_record += 1
            else:
                want, what = m, "untouched"
            if got == want:
                passed += 1
            else:
                failed += 1
                print("FAIL uninject %s: not %s:\n%s\n%s" % (name, what, json.dumps(got, sort_keys=True),
                                                           json.dumps(want, sort_keys=True)))
        if with_record < 20:
            failed += 1
            print("FAIL uninject: only %d cases carry a record" % with_record)
print("roundtrip: %d passed, %d failed" % (passed, failed))
if results:
    with open(results, "a") as f:
        f.write("%d %d\n" % (passed, failed))
sys.exit(1 if failed else 0)
