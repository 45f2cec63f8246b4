"""nowlab: workloads, the programs that run inside the workstations; their host-side clients are workloads.host."""
from pathlib import Path

# The workloads' own sources: mounted read-only into every workstation (not baked into the
# image), and hashed into profile keys, so a change to a workload invalidates its profiles.
SOURCE_DIR = Path(__file__).resolve().parent
