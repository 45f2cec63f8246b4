"""Owner and network load measured against the models (issue 3's targets).

Same measurements as `nowlab validate owner`: U_ow for N in {1,2,4} x D/Z in {0.1,0.2,0.5}
(target ±3 pp), guest slowdown t/(1-U_ow) and 2t' (±5%), a link after a live change and
the available bandwidth under background traffic (±5%).
Run: .venv/bin/python -m checks.owner_validation [--seconds 600]  (about 20 minutes)
"""
from __future__ import annotations

import argparse

from benchmarks._common import table
from testbed.lifecycle import cluster
from testbed.load.validation import validate, validation_spec


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--guest-seconds", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with cluster(validation_spec()) as c:
        rows = validate(c, seconds=args.seconds, guest_seconds=args.guest_seconds, seed=args.seed)
    table("owner and network load: measured against predicted",
          ["quantity", "measured", "predicted", "error", "target"],
          [[r.what, r.show(r.measured), r.show(r.predicted), r.show_error(), r.target] for r in rows])


if __name__ == "__main__":
    main()
