#!/usr/bin/env python3
"""The end of a scripts/test.sh run, from ctest's JUnit report.

Prints the ten slowest tests with their times, the time per label (the split
doc/testing.md records), and every skipped test with the one line it gave as
its reason. Exits 1 when a test was skipped for a reason other than one that
cannot exist on this machine (scripts/test.sh installs every package its
tests use, so a missing package is a failure, not a skip), else 0.

With --record FILE, also writes the measured times as "SECONDS NAME" lines
(the tests' timeouts are sized from them: cmake/mpitopoTests.cmake), keeping
the lines of tests this run did not run.

Usage: test_summary.py JUNIT_XML [--record FILE] [--labels CTEST_JSON]
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

# Skips that are allowed: what cannot exist on this machine (a layout
# reference recorded for another architecture). Anything else fails the run.
ALLOWED_SKIP = re.compile(r"^SKIP \(cannot exist here\):")


def read_junit(path):
    tests = []
    for case in ET.parse(path).getroot().iter("testcase"):
        out = case.findtext("system-out") or ""
        status = case.get("status", "run")
        skipped = case.find("skipped") is not None or status in ("disabled", "notrun")
        failed = case.find("failure") is not None or status == "fail"
        tests.append({"name": case.get("name"), "time": float(case.get("time") or 0),
                      "skipped": skipped, "failed": failed, "out": out})
    return tests


def skip_reason(out):
    for line in out.splitlines():
        if line.startswith("SKIP"):
            return line.strip()
    return "(the test printed no SKIP line)"


def labels_of(path):
    """Test name -> labels, from `ctest --show-only=json-v1`."""
    if not path:
        return {}
    with open(path) as f:
        data = json.load(f)
    result = {}
    for t in data.get("tests", []):
        labels = []
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                labels = p.get("value") or []
        result[t["name"]] = labels
    return result


def record(path, tests):
    times = {}
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"^([0-9.]+)\s+(\S+)$", line.strip())
                if m:
                    times[m.group(2)] = m.group(1)
    except FileNotFoundError:
        pass
    for t in tests:
        if not t["skipped"] and not t["failed"]:
            times[t["name"]] = "%.2f" % t["time"]
    with open(path, "w") as f:
        f.write("# Measured test times, SECONDS NAME: each test's TIMEOUT is 3x its time\n"
                "# (at least 60 s; cmake/mpitopoTests.cmake). Rewritten by\n"
                "# scripts/test.sh --record-times from a run on the 2-core CI machine.\n")
        for name in sorted(times):
            f.write("%s %s\n" % (times[name], name))


def main(argv):
    args = argv[1:]
    rec = None
    labels_json = None
    if "--record" in args:
        i = args.index("--record")
        rec = args[i + 1]
        del args[i:i + 2]
    if "--labels" in args:
        i = args.index("--labels")
        labels_json = args[i + 1]
        del args[i:i + 2]
    tests = read_junit(args[0])
    ran = [t for t in tests if not t["skipped"]]

    print("\nThe ten slowest tests:")
    for t in sorted(ran, key=lambda t: -t["time"])[:10]:
        print("  %8.1f s  %s" % (t["time"], t["name"]))

    labels = labels_of(labels_json)
    if labels:
        per = {}
        for t in ran:
            for lab in labels.get(t["name"], ["(none)"]) or ["(none)"]:
                n, s = per.get(lab, (0, 0.0))
                per[lab] = (n + 1, s + t["time"])
        print("\nTime per label (tests, seconds summed; a test counts under each of its labels):")
        for lab in sorted(per, key=lambda k: -per[k][1]):
            print("  %-10s %4d tests %8.1f s" % (lab, per[lab][0], per[lab][1]))
    print("\n%d tests ran, %.1f s summed" % (len(ran), sum(t["time"] for t in ran)))

    skipped = [t for t in tests if t["skipped"]]
    bad = 0
    if skipped:
        print("\nSkipped tests:")
        for t in skipped:
            why = skip_reason(t["out"])
            allowed = bool(ALLOWED_SKIP.match(why))
            bad += not allowed
            print("  %s: %s%s" % (t["name"], why, "" if allowed else "  <- not allowed"))
    else:
        print("\nSkipped tests: none")
    if rec:
        record(rec, tests)
        print("recorded the times in %s" % rec)
    if bad:
        print("FAIL: %d test(s) skipped for a reason that is not 'cannot exist here'" % bad)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
