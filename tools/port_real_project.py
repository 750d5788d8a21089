#!/usr/bin/env python3
"""Port a real Scrapy project with ``crawlfw port`` and compare it under Scrapy and crawlfw.

Given a checkout of a Scrapy 2 project, this copies it twice into a scratch directory
(one copy as it is, one ported with ``crawlfw port``) and runs, with each side's Python
(a virtual environment with the project's requirements and Scrapy 2.19, and one with the
same requirements, crawlfw instead of Scrapy):

a. the project's own test suite (pytest, per-test outcomes from its JUnit XML; a module
   that cannot be imported fails its own tests only);
b. ``list`` (the spider names);
c. one spider crawled offline: the run is in a new network namespace (``unshare -rn``)
   where only the loopback interface is up, so every host fails DNS and no traffic
   leaves the machine; the exit status and the ``finish_reason`` of the stats dump.

It prints a table of the figures, then the differences: tests that pass under Scrapy and
not under crawlfw (with their first error line), spiders Scrapy lists and crawlfw does
not, and what ``crawlfw port`` left or found missing. The project's code stays in the
scratch directory, never in this repository.

Example (the venvs are made by hand, see docs/coming-from-scrapy2.md)::

    tools/port_real_project.py /tmp/kingfisher-collect \\
        --scrapy-python /work/venv-kf-scrapy/bin/python \\
        --crawlfw-python /work/venv-kf-crawlfw/bin/python --spider afghanistan_records

Exit status: 0 when the crawlfw figures equal Scrapy's (tests passed, spiders listed,
the offline crawl's status and finish reason), else 1.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

#: Environment variables never passed on: a project chosen outside, a proxy.
_NOT_PASSED = ("SCRAPY_", "CRAWLFW_", "PYTHONPATH", "http_proxy", "https_proxy",
               "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "VIRTUAL_ENV")
_FINISH_REASON_RE = re.compile(r"['\"]finish_reason['\"]: ['\"](\w+)['\"]")
_IGNORED_COPY = shutil.ignore_patterns(".git", "__pycache__", ".venv", "venv", "node_modules",
                                       "*.pyc", ".pytest_cache")


def offline(cmd: list[str]) -> list[str]:
    """``cmd`` run in a new network namespace with only loopback up (no DNS, no route)."""
    return ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *cmd]


def environment(python: str) -> dict:
    """The environment for one side: its venv's ``bin`` first on ``PATH``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_NOT_PASSED)}
    env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", "")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(cmd, *, cwd, python, timeout_s, log: Path) -> tuple[int, float, str]:
    """Run ``cmd`` offline in ``cwd``; output to ``log``. Returns ``(exit status or -9 on
    timeout, seconds, output)``."""
    start = time.monotonic()
    with open(log, "w") as out:
        try:
            rc = subprocess.run(offline(cmd), cwd=cwd, env=environment(python),
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                timeout=timeout_s).returncode
        except subprocess.TimeoutExpired:
            rc = -9
    return rc, time.monotonic() - start, log.read_text(errors="replace")


def find_project_dir(root: Path) -> Path:
    """The directory of the shallowest ``scrapy.cfg`` under ``root``."""
    found = sorted(root.rglob("scrapy.cfg"), key=lambda p: (len(p.parts), str(p)))
    if not found:
        sys.exit(f"no scrapy.cfg under {root}")
    return found[0].parent


def junit_outcomes(path: Path) -> dict[str, tuple[str, str]]:
    """``{test id: (outcome, first line of its message)}`` from a JUnit XML report;
    outcome is passed, failed, error or skipped."""
    if not path.exists():
        return {}
    outcomes = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                text = child.get("message") or child.text or ""
                message = text.strip().splitlines()[0][:200] if text.strip() else ""
                break
        outcomes[test_id] = (outcome, message)
    return outcomes


def collection_errors(log: Path) -> list[str]:
    """``ERROR collecting <path>: <last exception line>`` for each module pytest could
    not import (its ``-q`` log)."""
    if not log.exists():
        return []
    errors, current = [], None
    for line in log.read_text(errors="replace").splitlines():
        match = re.match(r"_+ ERROR collecting (\S+) _+", line)
        if match:
            current = match.group(1)
        elif current and line.startswith("E   "):
            last = line[4:].strip()
            if errors and errors[-1][0] == current:
                errors[-1] = (current, last)
            else:
                errors.append((current, last))
    return [f"{path}: {message}" for path, message in errors]


def count(outcomes: dict, outcome: str) -> int:
    return sum(1 for o, _ in outcomes.values() if o == outcome)


def side(name: str, python: str, project: Path, scratch: Path, args) -> dict:
    """Run the three steps for one side (``'scrapy'`` or ``'crawlfw'``)."""
    tool = ["-m", "scrapy"] if name == "scrapy" else ["-m", "crawlfw.cmdline"]
    result: dict = {}
    junit = scratch / f"{name}-junit.xml"
    if not args.no_tests:
        rc, secs, _ = run([python, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "--continue-on-collection-errors", f"--junitxml={junit}",
                           *args.pytest_args],
                          cwd=project, python=python, timeout_s=args.test_timeout,
                          log=scratch / f"{name}-tests.log")
        result["tests"] = junit_outcomes(junit)
        result["tests_rc"], result["tests_s"] = rc, secs
    rc, secs, out = run([python, *tool, "list"], cwd=project, python=python,
                        timeout_s=args.list_timeout, log=scratch / f"{name}-list.log")
    result["list_rc"], result["list_s"] = rc, secs
    result["spiders"] = [line for line in out.splitlines()
                         if re.fullmatch(r"[\w.-]+", line)] if rc == 0 else []
    if args.spider:
        sets = [a for s in args.set for a in ("-s", s)]
        spider_args = [a for s in args.spider_arg for a in ("-a", s)]
        rc, secs, out = run([python, *tool, "crawl", args.spider, "-L", "INFO", *sets,
                             *spider_args],
                            cwd=project, python=python, timeout_s=args.crawl_timeout,
                            log=scratch / f"{name}-crawl.log")
        reasons = _FINISH_REASON_RE.findall(out)
        result["crawl"] = (rc, reasons[-1] if reasons else "-", secs)
    return result


def port(python: str, copy: Path, scratch: Path) -> str:
    """Run ``crawlfw port`` on ``copy``; return its report."""
    out = subprocess.run([python, "-m", "crawlfw.cmdline", "port", str(copy)],
                         env=environment(python), capture_output=True, text=True, check=False)
    (scratch / "port.log").write_text(out.stdout + out.stderr)
    if out.returncode != 0:
        sys.exit(f"crawlfw port failed ({out.returncode}):\n{out.stderr}")
    return out.stdout


def table(rows: list[tuple[str, str, str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="the project's checkout (not changed)")
    parser.add_argument("--scrapy-python", required=True, help="Python with Scrapy 2.19")
    parser.add_argument("--crawlfw-python", required=True, help="Python with crawlfw")
    parser.add_argument("--project-dir", help="subdirectory holding scrapy.cfg "
                        "(default: the shallowest one)")
    parser.add_argument("--spider", help="the spider to crawl offline")
    parser.add_argument("-a", dest="spider_arg", action="append", default=[],
                        help="spider argument for the offline crawl (both sides)")
    parser.add_argument("-s", "--set", action="append", default=[],
                        help="setting for the offline crawl (both sides), NAME=VALUE")
    parser.add_argument("--scratch", type=Path, help="work directory (default: "
                        "/tmp/port-real-<checkout name>); emptied first")
    parser.add_argument("--no-tests", action="store_true", help="skip the test suites")
    parser.add_argument("--test-timeout", type=float, default=1800)
    parser.add_argument("--list-timeout", type=float, default=600)
    parser.add_argument("--crawl-timeout", type=float, default=600)
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest")
    args = parser.parse_args(argv)

    checkout = args.checkout.resolve()
    scratch = (args.scratch or Path(f"/tmp/port-real-{checkout.name}")).resolve()
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    copies = {name: scratch / name for name in ("scrapy", "crawlfw")}
    for copy in copies.values():
        shutil.copytree(checkout, copy, ignore=_IGNORED_COPY, symlinks=True)
    report = port(args.crawlfw_python, copies["crawlfw"], scratch)
    subdir = (Path(args.project_dir) if args.project_dir
              else find_project_dir(copies["scrapy"]).relative_to(copies["scrapy"]))
    results = {}
    for name, python in (("scrapy", args.scrapy_python), ("crawlfw", args.crawlfw_python)):
        results[name] = side(name, python, copies[name] / subdir, scratch, args)

    scrapy, crawlfw = results["scrapy"], results["crawlfw"]
    rows = [("step", "Scrapy 2.19", "crawlfw")]
    same = True
    if not args.no_tests:
        for outcome in ("passed", "failed", "error", "skipped"):
            rows.append((f"tests {outcome}", str(count(scrapy["tests"], outcome)),
                         str(count(crawlfw["tests"], outcome))))
        same &= count(scrapy["tests"], "passed") == count(crawlfw["tests"], "passed")
    rows.append(("spiders listed (rc)", f"{len(scrapy['spiders'])} (rc {scrapy['list_rc']})",
                 f"{len(crawlfw['spiders'])} (rc {crawlfw['list_rc']})"))
    same &= set(scrapy["spiders"]) == set(crawlfw["spiders"]) and crawlfw["list_rc"] == 0
    if args.spider:
        rows.append((f"offline crawl {args.spider}: rc, finish_reason, s",
                     "{}, {}, {:.1f}".format(*scrapy["crawl"]),
                     "{}, {}, {:.1f}".format(*crawlfw["crawl"])))
        same &= scrapy["crawl"][:2] == crawlfw["crawl"][:2]
    print(f"project: {checkout.name} ({subdir}); scratch: {scratch}")
    print(table(rows))
    print()
    print("crawlfw port:", report.splitlines()[[i for i, line in enumerate(
        report.splitlines()) if line.startswith(("Ported", "Would port"))][0]])
    if not args.no_tests:
        lost = sorted(t for t, (o, _) in scrapy["tests"].items()
                      if o == "passed" and crawlfw["tests"].get(t, ("missing",))[0] != "passed")
        if lost:
            print(f"\nTests passing under Scrapy, not under crawlfw ({len(lost)}), by "
                  "first error line:")
            by_message: dict[str, list[str]] = {}
            for t in lost:
                outcome, message = crawlfw["tests"].get(t, ("not collected", ""))
                by_message.setdefault(f"{outcome}: {message}", []).append(t)
            for message, tests in sorted(by_message.items(), key=lambda kv: -len(kv[1])):
                more = f" (+{len(tests) - 3} more)" if len(tests) > 3 else ""
                print(f"  {len(tests)} x {message}\n      {', '.join(tests[:3])}{more}")
        if not crawlfw["tests"]:
            tail = (scratch / "crawlfw-tests.log").read_text(errors="replace").splitlines()
            print("\nNo test ran under crawlfw; the end of its log:\n  "
                  + "\n  ".join(tail[-4:]))
        errors = collection_errors(scratch / "crawlfw-tests.log")
        if errors:
            print("\nCollection errors under crawlfw:")
            for error in errors:
                print(f"  {error}")
    missing = sorted(set(scrapy["spiders"]) - set(crawlfw["spiders"]))
    if missing:
        print(f"\nSpiders listed by Scrapy, not by crawlfw ({len(missing)}): "
              f"{', '.join(missing[:20])}{' ...' if len(missing) > 20 else ''}")
        print(f"  (see {scratch / 'crawlfw-list.log'})")
    rest = report.split("\n\n", 1)[1] if "\n\n" in report else ""
    if rest:
        print("\n" + rest)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
