#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sarif-to-codequality.py LOG: aiter-probe's SARIF log as a GitLab Code
Quality report (the Code Climate JSON subset GitLab reads), on stdout.

GitLab does not read SARIF; its merge requests show Code Quality reports.
Each located result becomes one finding at its first location (a file-only
location at line 1); a result without a location is left out and counted
on stderr. Levels: error -> critical, warning -> major, note -> info."""
import json
import sys
from urllib.parse import unquote

SEVERITY = {"error": "critical", "warning": "major", "note": "info"}


def findings(log):
    out, unlocated = [], 0
    for run in log["runs"]:
        for result in run["results"]:
            locations = result.get("locations", [])
            if not locations:
                unlocated += 1
                continue
            phys = locations[0]["physicalLocation"]
            line = phys.get("region", {}).get("startLine", 1)
            out.append({
                "description": result["message"]["text"],
                "check_name": result["ruleId"],
                "fingerprint": next(iter(result["partialFingerprints"].values())),
                "severity": SEVERITY[result["level"]],
                "location": {
                    "path": unquote(phys["artifactLocation"]["uri"]),
                    "lines": {"begin": line},
                },
            })
    return out, unlocated


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: sarif-to-codequality.py LOG\n")
        sys.exit(2)
    try:
        with open(sys.argv[1]) as f:
            report, unlocated = findings(json.load(f))
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as e:
        sys.stderr.write("sarif-to-codequality.py: %s: not a log aiter-probe wrote (%s)\n"
                         % (sys.argv[1], e))
        sys.exit(2)
    if unlocated:
        sys.stderr.write("sarif-to-codequality.py: %d result(s) without a location left out\n"
                         % unlocated)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


main()
