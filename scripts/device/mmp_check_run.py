#!/usr/bin/env python3
"""mmp_check_run.py — judge a `mmaprobe validate` JSON run on the device (used by 10-validate.sh).

  mmp_check_run.py baseline RUN.json...          every case PASS or SKIP with a message
  mmp_check_run.py mutants SUITE RUN.json...     every kernel with an "#expect KERNEL VERDICT
                                                 REASON|..." line in SUITE answered as expected
                                                 (a case ID in several runs: one catch suffices)

Prints one line per kernel and a final verdict line; exit 0 when everything is as required,
1 otherwise (an unreadable file included), 2 on bad usage. Tolerant of the JSON's nesting: it collects every
object that has "id" and "verdict" keys.
"""
import json
import sys
from collections import OrderedDict


def cases_in(node, out):
    if isinstance(node, dict):
        if "id" in node and "verdict" in node:
            out.append(node)
        for v in node.values():
            cases_in(v, out)
    elif isinstance(node, list):
        for v in node:
            cases_in(v, out)
    return out


def reasons_of(case):
    r = case.get("reasons", [])
    if isinstance(r, str):
        r = [x for x in r.replace("|", ",").split(",") if x]
    return set(r)


UNREADABLE = []


def load(paths):
    """Cases of every readable file; an unreadable one is reported and fails the check."""
    cases = []
    for p in paths:
        try:
            with open(p) as f:
                cases_in(json.load(f), cases)
        except (OSError, ValueError) as e:
            print(f"cannot read {p}: {e}")
            UNREADABLE.append(p)
    return cases


def baseline(paths):
    cases = load(paths)
    per = OrderedDict()
    bad = []
    for c in cases:
        k = c["id"].split("/")[0]
        s = per.setdefault(k, {"PASS": 0, "FAIL": 0, "ERROR": 0, "SKIP": 0})
        s[c["verdict"]] = s.get(c["verdict"], 0) + 1
        if c["verdict"] == "PASS" or (c["verdict"] == "SKIP" and c.get("message")):
            continue
        bad.append(c)
    for k, s in per.items():
        print(f"{k:28s} pass {s['PASS']:4d}  fail {s['FAIL']:3d}  error {s['ERROR']:3d}  skip {s['SKIP']:4d}")
    for c in bad[:40]:
        print(f"  NOT OK {c['verdict']} {c['id']} [{','.join(sorted(reasons_of(c)))}] {c.get('message', '')}")
    good = cases and not bad and not UNREADABLE
    print(f"baseline: {len(cases)} cases, {len(bad)} neither PASS nor explained SKIP, "
          f"{len(UNREADABLE)} unreadable files: " + ("OK" if good else "NOT OK"))
    return 0 if good else 1


def mutants(suite, paths):
    expect = OrderedDict()
    with open(suite) as f:
        for line in f:
            if line.startswith("#expect "):
                name, verdict, reasons = line.split()[1:4]
                expect[name] = (verdict, set() if reasons == "-" else set(reasons.split("|")))
    cases = load(paths)
    missed = 0
    for name, (verdict, reasons) in expect.items():
        mine = [c for c in cases if c["id"].split("/")[0] == name]
        # A case may appear in several runs (plain, under a sanitizer): one catch is enough.
        ids = {c["id"] for c in mine}
        ok = {c["id"] for c in mine if c["verdict"] == verdict and (not reasons or reasons & reasons_of(c))}
        good = bool(ids) and ok == ids
        missed += not good
        got = "; ".join(f"{c['verdict']} [{','.join(sorted(reasons_of(c)))}]" for c in mine) or "no cases"
        want = verdict + (" " + "|".join(sorted(reasons)) if reasons else "")
        print(f"{'caught ' if good else 'MISSED '} {name:28s} want {want:45s} got {got}")
    print(f"mutants: {len(expect) - missed} of {len(expect)} answered as expected: "
          + ("OK" if not missed else "NOT OK"))
    return 0 if not missed and expect else 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "baseline":
        sys.exit(baseline(sys.argv[2:]))
    if len(sys.argv) >= 4 and sys.argv[1] == "mutants":
        sys.exit(mutants(sys.argv[2], sys.argv[3:]))
    print(__doc__)
    sys.exit(2)
