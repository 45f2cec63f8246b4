"""The fault campaign of issue 19: a small live experiment per fault, the fault injected mid-run.

    python -m hardening.fault_campaign                 # every fault (about 25 min here)
    python -m hardening.fault_campaign --short         # a killed workstation and a killed runner
    python -m hardening.fault_campaign --faults cut-link,disk-full --csv out.csv

Prints, per fault: finished jobs lost and duplicated (targets 0), time to detect and to
recover, and what `nowlab gc` left behind (target nothing). Needs root and Docker (the
README's test command sets both up); `disk-full` mounts a small tmpfs under the work folder.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from hardening.campaign import FAULTS, SHORT, Campaign

ROOT = Path(__file__).resolve().parents[1]

CONFIG = ROOT / "experiments" / "configs" / "faults" / "tiny.toml"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"comma-separated, of: {', '.join(FAULTS)}")
    parser.add_argument("--short", action="store_true", help=f"only {', '.join(SHORT)}")
    parser.add_argument("--hold", type=float, default=30.0, help="seconds a freeze or a cut link lasts")
    parser.add_argument("--workdir", type=Path, default=None, help="where the results stores go (default: a temp folder)")
    parser.add_argument("--csv", type=Path, default=None, help="also write the table here")
    args = parser.parse_args()
    faults = SHORT if args.short else tuple(f.strip() for f in args.faults.split(",") if f.strip())
    console = Console()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="nowlab-faults-"))
    campaign = Campaign(CONFIG, "x-faults", workdir, hold_s=args.hold, log=lambda m: console.log(m))
    try:
        results = campaign.run(faults)
    except ValueError as exc:
        console.print(f"error: {exc}")
        return 2
    frame = pd.DataFrame([r.row() for r in results])
    table = Table(title=f"fault campaign ({CONFIG.relative_to(ROOT)}, victim ws2)")
    for col in ("fault", "lost", "duplicated", "detect_s", "recover_s", "jobs", "failed", "refused (address / HMAC)",
                "leftovers", "note"):
        table.add_column(col)
    for r in results:
        table.add_row(r.fault, str(r.lost), str(r.duplicated), _s(r.detect_s), _s(r.recover_s), str(r.jobs),
                      str(r.failed), f"{r.refused_outside} / {r.refused_handshake}", ", ".join(r.leftovers) or "nothing",
                      r.note)
    console.print(table)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    ok = all(r.lost == 0 and r.duplicated == 0 and not r.leftovers and not r.note for r in results)
    return 0 if ok else 1


def _s(x: float | None) -> str:
    return "not seen" if x is None else f"{x:.1f} s"


if __name__ == "__main__":
    raise SystemExit(main())
