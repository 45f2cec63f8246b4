"""The host's side of a job: launch it, control it while it runs (preempt, resize), serve its control channel, drive the resident pool, profile it.

Runs on the controlling host (the venv), never inside a workstation: the node side
(everything else in workloads/) must not import it.
"""
