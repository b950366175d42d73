# SPDX-License-Identifier: MIT
"""Structural check of a SARIF 2.1.0 log as `aiter-probe diff --format sarif`
writes it, and as GitHub code scanning ingests one (the properties the SARIF
multitool's GitHub rules require, checked here without it): the required
keys and their types, one run, the driver's informationUri, unique rule ids
each with a shortDescription, fullDescription and help, every result's
ruleIndex pointing at its ruleId, levels, a location on every result (code
scanning refuses a whole log that holds a result without one) in NEW's tree
(%SRCROOT% or AITERMETA), related locations in OLD's (OLDROOT, OLDMETA),
relative URIs under a declared base id (no '..' component), a region with
startLine >= 1 on each.

Usage: sarif-check.py FILE
Prints "ok: N results"; on the first problem prints it and exits 1."""
import json
import re
import sys

LEVELS = ("error", "warning", "note")


def check(doc):
    def need(cond, what):
        if not cond:
            raise ValueError(what)

    def text(obj, where):
        need(isinstance(obj, dict) and isinstance(obj.get("text"), str) and obj["text"],
             where + ".text: a non-empty string")

    need(isinstance(doc, dict), "the log: an object")
    need(isinstance(doc.get("$schema"), str) and doc["$schema"].startswith("https://"),
         "$schema: an https URI")
    need(doc.get("version") == "2.1.0", "version: \"2.1.0\"")
    runs = doc.get("runs")
    need(isinstance(runs, list) and len(runs) == 1, "runs: one run")
    run = runs[0]
    driver = run.get("tool", {}).get("driver")
    need(isinstance(driver, dict), "runs[0].tool.driver: an object")
    need(driver.get("name") == "aiter-probe", "driver.name: aiter-probe")
    need(isinstance(driver.get("version"), str), "driver.version: a string")
    need(isinstance(driver.get("informationUri"), str)
         and driver["informationUri"].startswith("https://"), "driver.informationUri: https")
    rules = driver.get("rules")
    need(isinstance(rules, list), "driver.rules: an array")
    ids = []
    for i, rule in enumerate(rules):
        where = "rules[%d]" % i
        need(isinstance(rule.get("id"), str) and re.match(r"^(capability|rule)/\S+$", rule["id"]),
             where + ".id: capability/ID or rule/ID")
        text(rule.get("shortDescription"), where + ".shortDescription")
        text(rule.get("fullDescription"), where + ".fullDescription")
        text(rule.get("help"), where + ".help")
        need(rule.get("defaultConfiguration", {}).get("level") in LEVELS,
             where + ".defaultConfiguration.level")
        ids.append(rule["id"])
    need(len(set(ids)) == len(ids), "rule ids are unique")
    bases = run.get("originalUriBaseIds", {})
    need(isinstance(bases, dict), "originalUriBaseIds: an object")
    for name, base in bases.items():
        need(isinstance(base.get("uri"), str) and base["uri"].startswith("file:///")
             and base["uri"].endswith("/"), "originalUriBaseIds.%s.uri: file:///.../" % name)
    results = run.get("results")
    need(isinstance(results, list), "results: an array")
    used = set()
    for i, r in enumerate(results):
        where = "results[%d]" % i
        index = r.get("ruleIndex")
        need(isinstance(index, int) and 0 <= index < len(rules), where + ".ruleIndex in range")
        need(r.get("ruleId") == rules[index]["id"], where + ".ruleId is rules[ruleIndex].id")
        used.add(index)
        need(r.get("level") in LEVELS, where + ".level")
        text(r.get("message"), where + ".message")
        fps = r.get("partialFingerprints")
        need(isinstance(fps, dict) and fps and all(isinstance(v, str) for v in fps.values()),
             where + ".partialFingerprints: strings")
        need(r.get("locations"), where + ": no location")
        places = [("locations", loc, ("%SRCROOT%", "AITERMETA")) for loc in r["locations"]]
        places += [("relatedLocations", loc, ("OLDROOT", "OLDMETA"))
                   for loc in r.get("relatedLocations", [])]
        need(r.get("relatedLocations", [None]), where + ".relatedLocations: not empty when present")
        for k, (key, loc, allowed) in enumerate(places):
            lw = "%s.%s[%d]" % (where, key, k)
            need(isinstance(loc, dict), lw + ": an object")
            phys = loc.get("physicalLocation", {})
            art = phys.get("artifactLocation", {})
            uri = art.get("uri")
            need(isinstance(uri, str) and uri and not uri.startswith("/")
                 and not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", uri)
                 and not re.search(r"[^A-Za-z0-9._~/%-]", uri), lw + ": a relative URI")
            need(".." not in uri.split("/"), lw + ": no '..' component")
            # The meta folders' ids only when they are defined (a meta folder
            # outside the root).
            base = art.get("uriBaseId")
            need(base in allowed and (base in ("%SRCROOT%", "OLDROOT") or base in bases),
                 lw + ": uriBaseId one of %s, defined" % (allowed,))
            line = phys.get("region", {}).get("startLine")
            need(isinstance(line, int) and line >= 1, lw + ".region.startLine >= 1")
    need(used == set(range(len(rules))), "every rule has a result")
    return len(results)


def main():
    path = sys.argv[1]
    with open(path) as f:
        doc = json.load(f)
    try:
        n = check(doc)
    except (ValueError, AttributeError, TypeError) as e:
        print("%s: not the SARIF expected: %s" % (path, e))
        sys.exit(1)
    print("ok: %d results" % n)


main()
