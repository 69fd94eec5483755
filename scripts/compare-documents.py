#!/usr/bin/env python3
"""Compare two folders of suite JSON documents (`tooltape gateway|client NAME --format json`).

Usage: scripts/compare-documents.py BEFORE_DIR AFTER_DIR [--only NAME ...] [--apart CASE ...]

Each folder holds one document per suite, named as the baseline names them
(`gateway-NAME.json`, `client-NAME.json`; any `*.json` is taken, paired by file name). For each
suite it compares what a run decides, and nothing that varies from run to run:

  - the set of trials, by name (added / removed trials);
  - each trial's cell: `status` and `detail` (pass, fail, known-failure, declined,
    not-applicable, broken, with the reason; a stored document's older words `known`,
    `unsupported` and `not-supported` read as `known-failure`, `declined`, `not-applicable`);
  - each trial's root cause id (`cause`, absent when the trial did not fail);
  - the document's causes: the ids and each one's trial count;
  - the document's `kind` and `target`.

Left out: `version` (the system's release), `summary` (derived from the cells),
`own_ms_per_trial` (tooltape's own time: the one field seen to differ between two runs of
`gateway tooltape` at 28036df), the causes' titles and reproducers, and every trial's recorded
exchange (client request, upstream request and answer, downstream outcome, findings). The
documents carry no date nor tooltape version. A cell's detail is compared as written, after
masking NOISE below in both: the gateway's loopback port (a free port per run, named in a broken
cell's detail: `request to http://127.0.0.1:PORT/... failed`) and, as a precaution, the work
folder's PID. Cause ids are stable across runs (the port is normalized out of them).

Trials a change brings on purpose are listed apart, and not counted as differences: a trial
that was `not-applicable` before and ran after with an incidental option left out (its record's
`left_out`: issue 41's "not applicable means the subject"), and the trials of the cases named
by `--apart` (new cases: they are absent before). The cause comparison then counts only the
other trials (each cause's trials counted from the cells).

It prints one line per suite, `NAME: same`, or `NAME: DIFFERENT` followed by the differences,
or `NAME: ERROR ...` when a document is missing from one folder, unreadable, not a suite
document, or has no trials (an empty trial list is never `same`). Exit status: 0 when every
suite is the same, 1 when any differs or any document is in error, 2 on usage errors.
Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# Run-to-run noise inside a cell's detail, masked before comparing: (pattern, replacement).
NOISE: list[tuple[re.Pattern[str], str]] = [
    # the gateway (and the loopback upstream) listen on free ports picked per run
    (re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d+"), r"\1:PORT"),
    # the run's work folder: $TMPDIR/tooltape-KIND-NAME-PID
    (re.compile(r"(tooltape-(?:gateway|client)-[A-Za-z0-9_.-]+?)-\d+\b"), r"\1-PID"),
]

CELL_STATUSES = {"pass", "fail", "known-failure", "declined", "not-applicable", "broken"}
# The words documents stored before the one vocabulary (docs/reports.md), read as today's, as
# tooltape itself reads them back.
OLD_WORDS = {"known": "known-failure", "unsupported": "declined", "not-supported": "not-applicable"}


class DocError(Exception):
    pass


def mask(text: str | None) -> str | None:
    if text is None:
        return None
    for pattern, replacement in NOISE:
        text = pattern.sub(replacement, text)
    return text


def load(path: Path) -> dict:
    """The parts of one document that are compared; DocError when it cannot be compared."""
    if not path.is_file():
        raise DocError(f"{path}: missing")
    raw = path.read_text(encoding="utf-8", errors="replace")
    if not raw.strip():
        raise DocError(f"{path}: empty file")
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as e:
        raise DocError(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict) or not {"kind", "target", "trials", "causes"} <= doc.keys():
        raise DocError(f"{path}: not a suite document ({{kind, target, summary, causes, trials}})")
    trials = doc["trials"]
    if not isinstance(trials, list) or not trials:
        raise DocError(f"{path}: no trials")
    cells: dict[str, tuple[str, str | None, str | None]] = {}
    left_out: dict[str, list[str]] = {}
    for i, t in enumerate(trials):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise DocError(f"{path}: trial #{i} has no name")
        cell = t.get("cell")
        if isinstance(cell, dict) and cell.get("status") in OLD_WORDS:
            cell = {**cell, "status": OLD_WORDS[cell["status"]]}
        if not isinstance(cell, dict) or cell.get("status") not in CELL_STATUSES:
            raise DocError(f"{path}: trial {t['name']} has no cell status: {cell!r}")
        if t["name"] in cells:
            raise DocError(f"{path}: trial {t['name']} appears twice")
        cells[t["name"]] = (cell["status"], mask(cell.get("detail")), t.get("cause"))
        if t.get("left_out"):
            left_out[t["name"]] = [str(n) for n in t["left_out"]]
    causes: dict[str, int] = {}
    if not isinstance(doc["causes"], list):
        raise DocError(f"{path}: causes is not a list")
    for c in doc["causes"]:
        if not isinstance(c, dict) or not isinstance(c.get("id"), str):
            raise DocError(f"{path}: a cause has no id: {c!r}")
        if c["id"] in causes:
            raise DocError(f"{path}: cause {c['id']} appears twice")
        causes[c["id"]] = len(c.get("trials") or [])
    return {"kind": doc["kind"], "target": doc["target"], "cells": cells, "causes": causes,
            "left_out": left_out}


def case_of(name: str) -> str:
    """`KIND::NAME::case::route::choice::mode` -> `case`."""
    parts = name.split("::")
    return parts[2] if len(parts) > 2 else ""


def apart_trials(a: dict, b: dict, cases: set[str]) -> list[str]:
    """The trials listed apart: of a case in `cases`, or brought back by leaving an option out."""
    out = []
    for name in sorted(b["cells"]):
        before = a["cells"].get(name)
        if case_of(name) in cases and before is None:
            out.append(name)
        elif before is not None and before[0] == "not-applicable" and name in b["left_out"]:
            out.append(name)
    return out


def without(doc: dict, names: list[str]) -> dict:
    """`doc` without the trials `names`, each cause counted from the remaining cells."""
    cells = {n: c for n, c in doc["cells"].items() if n not in names}
    causes: dict[str, int] = {}
    for _, _, cause in cells.values():
        if cause:
            causes[cause] = causes.get(cause, 0) + 1
    return {**doc, "cells": cells, "causes": causes}


def short(text: str | None, limit: int = 300) -> str:
    if text is None:
        return "-"
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def cell_text(cell: tuple[str, str | None, str | None]) -> str:
    status, detail, _ = cell
    return status if detail is None else f"{status}: {short(detail)}"


def compare(a: dict, b: dict) -> list[str]:
    out: list[str] = []
    for field in ("kind", "target"):
        if a[field] != b[field]:
            out.append(f"  {field}: {a[field]!r} -> {b[field]!r}")
    ca, cb = a["cells"], b["cells"]
    removed = [n for n in ca if n not in cb]
    added = [n for n in cb if n not in ca]
    out += [f"  removed trial: {n} ({ca[n][0]})" for n in sorted(removed)]
    out += [f"  added trial: {n} ({cb[n][0]})" for n in sorted(added)]
    for name in sorted(ca.keys() & cb.keys()):
        x, y = ca[name], cb[name]
        if x[:2] != y[:2]:
            out.append(f"  changed cell: {name}\n    before: {cell_text(x)}\n    after:  {cell_text(y)}")
        if x[2] != y[2]:
            out.append(f"  changed cause: {name}: {x[2] or '-'} -> {y[2] or '-'}")
    ka, kb = a["causes"], b["causes"]
    for cid in sorted(ka.keys() - kb.keys()):
        out.append(f"  cause gone: {cid} ({ka[cid]} trials)")
    for cid in sorted(kb.keys() - ka.keys()):
        out.append(f"  cause new: {cid} ({kb[cid]} trials)")
    for cid in sorted(ka.keys() & kb.keys()):
        if ka[cid] != kb[cid]:
            out.append(f"  cause trial count: {cid}: {ka[cid]} -> {kb[cid]}")
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--apart", action="append", default=[], metavar="CASE",
                   help="a case new in AFTER: its trials are listed apart, not as added; repeatable")
    p.add_argument("--only", action="append", metavar="NAME",
                   help="compare only this suite (file name without .json, e.g. gateway-litellm); repeatable")
    args = p.parse_args(argv)
    for d in (args.before, args.after):
        if not d.is_dir():
            p.error(f"{d}: not a folder")
    if args.only:
        names = sorted(set(args.only))
    else:
        names = sorted({f.stem for d in (args.before, args.after) for f in d.glob("*.json")})
    if not names:
        print(f"no suite documents (*.json) in {args.before} or {args.after}")
        return 1
    worst = 0
    tally = {"same": 0, "different": 0, "error": 0}
    for name in names:
        try:
            a = a_all = load(args.before / f"{name}.json")
            b = b_all = load(args.after / f"{name}.json")
        except DocError as e:
            print(f"{name}: ERROR {e}")
            tally["error"] += 1
            worst = 1
            continue
        apart = apart_trials(a, b, set(args.apart))
        if apart:
            a, b = without(a, apart), without(b, apart)
        diffs = compare(a, b)
        if apart:
            print(f"{name}: {len(apart)} trials apart")
            for n in apart:
                before = a_all["cells"].get(n)
                after = b_all["cells"][n]
                was = "new" if before is None else cell_text(before)
                notes = "; ".join(b_all["left_out"].get(n, []))
                print(f"  apart: {n}\n    before: {was}\n    after:  {cell_text(after)}"
                      + (f"\n    left out: {short(notes)}" if notes else ""))
        if diffs:
            print(f"{name}: DIFFERENT ({len(diffs)})")
            print("\n".join(diffs))
            tally["different"] += 1
            worst = 1
        else:
            print(f"{name}: same ({len(a['cells'])} trials, {len(a['causes'])} causes)")
            tally["same"] += 1
    print(f"{len(names)} suites: {tally['same']} same, {tally['different']} different, {tally['error']} in error")
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
