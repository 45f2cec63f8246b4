"""Load on the workstations besides the guest jobs, and what it leaves them.

- `owners`: Menascé & Rao's owner daemons (process mode), at normal priority over guests;
- `caps`: owners emulated by changing CPU caps over time (cap mode, ON/OFF or a trace);
- `traffic`: background flows between workstations;
- `monitor`: what is left (AvailCPU, available bandwidth), sampled while a run goes on;
- `model`: the owner model (M/M/1//N), used here and by the experiments' predictions;
- `validation`: the owners measured against the model, on a cluster the caller brings up.

The package sits above `testbed.cluster` (it drives a running cluster) and below
`testbed.lifecycle`, which starts a spec's owners after creating the cluster.
"""
