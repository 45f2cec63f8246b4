"""Load on the workstations besides the guest jobs: owners and what they leave.

`model`: Menascé & Rao's owner model (M/M/1//N), used by the owner validation here and by
the experiments' predictions above. (The owner daemons, cap mode, traffic and the monitor
move here in the next step of the redesign; docs/architecture.md says what is where.)
"""
