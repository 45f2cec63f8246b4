"""What a host offers before anything starts on it: its cores, its speed, who is already there.

Speed is the reference meter's own reading (testbed.meter.quick_factors, the figure
placement uses on this host): the meter and the reference kernels (workloads/) are copied
to a temporary folder on the host, run there, and the folder is removed, so a probe
leaves nothing behind, even when placement then refuses the spec.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import workloads
from testbed.backends.base import BackendError
from testbed.backends.ssh.link import HostLink

TESTBED_DIR = Path(__file__).resolve().parents[2]  # testbed/: the meter is testbed/meter.py
METER_FILES = ("__init__.py", "meter.py")  # testbed/__init__ loads nothing by itself (PEP 562)

# Run by the host's python3: facts about the login, as one JSON line.
PROBE = """
import json, os, shutil, tempfile
home = os.path.expanduser("~")
mine = os.path.join(home, ".nowlab", "ssh")
print(json.dumps({"home": home, "uid": os.getuid(), "cores": sorted(os.sched_getaffinity(0)),
                  "ssh": shutil.which("ssh") or "", "tc": shutil.which("tc") or "",
                  "mpiexec": shutil.which("mpiexec") or "",
                  "client": (os.environ.get("SSH_CONNECTION") or "").split()[:1],
                  "clusters": sorted(os.listdir(mine)) if os.path.isdir(mine) else [],
                  "scratch": tempfile.mkdtemp(prefix="nowlab-probe-")}))
"""
METER = ("import json, sys; from testbed.meter import quick_factors; "
         "print(json.dumps(quick_factors([int(c) for c in sys.argv[1].split(',')], float(sys.argv[2]), "
         "sys.argv[3] or None)))")


@dataclass(frozen=True)
class HostInfo:
    name: str
    home: str
    uid: int
    cores: list[int]  # the cores the login may run on (its affinity), ids as the host numbers them
    ssh: str  # the host's ssh client (mpiexec's launcher goes through it)
    tc: str  # "" if there is none
    mpiexec: str
    clusters: list[str]  # nowlab clusters whose folder this login already holds on the host
    factors: dict[int, float]  # core -> reference-seconds per CPU-second (testbed.meter)
    controller: str = ""  # the controller's address as this host sees it (SSH_CONNECTION)

    @property
    def root(self) -> bool:
        return self.uid == 0


def parse_probe(name: str, text: str) -> tuple[dict, str]:
    """The probe's JSON line and its scratch folder; a one-line error naming the host otherwise."""
    try:
        facts = json.loads(text.strip().splitlines()[-1])
        return facts, facts["scratch"]
    except (ValueError, IndexError, KeyError, TypeError):
        raise BackendError(f"host {name!r}: its python3 gave no facts ({text.strip()[:80]!r})") from None


def discover(link: HostLink, *, meter_seconds: float = 1.0, kernel: str | None = None) -> HostInfo:
    """Log in, read the host's facts and meter its cores (the mean of the reference kernels, or
    `kernel`'s alone: ClusterSpec.kernel); nothing is left on the host."""
    name = link.access.name
    code, out, err = link.run(["python3", "-c", PROBE])
    if code != 0:
        raise BackendError(f"{link.access.where()}: python3 did not run ({(err or out).strip()[:120]})")
    facts, scratch = parse_probe(name, out)
    try:
        if not facts["cores"]:
            raise BackendError(f"{link.access.where()}: reports no cores it may run on")
        link.put_tree(Path(workloads.SOURCE_DIR), f"{scratch}/workloads")
        for f in METER_FILES:
            link.put_file((TESTBED_DIR / f).read_bytes(), f"{scratch}/testbed/{f}")
        cores = ",".join(map(str, facts["cores"]))
        code, out, err = link.run(["env", f"PYTHONPATH={scratch}", "PYTHONDONTWRITEBYTECODE=1",
                                   "python3", "-c", METER, cores, f"{meter_seconds:g}", kernel or ""])
        if code != 0:
            tail = " | ".join((err or out).strip().splitlines()[-2:])
            raise BackendError(f"{link.access.where()}: the reference meter failed ({tail}); it needs numpy")
        factors = {int(c): float(f) for c, f in json.loads(out.strip().splitlines()[-1]).items()}
    finally:
        link.run(["rm", "-rf", "--", scratch])
    return HostInfo(name=name, home=facts["home"], uid=int(facts["uid"]), cores=list(facts["cores"]),
                    ssh=facts["ssh"], tc=facts["tc"], mpiexec=facts["mpiexec"], clusters=list(facts["clusters"]),
                    factors=factors, controller=(facts.get("client") or [""])[0])
