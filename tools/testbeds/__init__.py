"""Stand-in machines for the backends that need more than this host: a Docker-in-Docker Swarm
(dind.py) and containers posing as a lab's SSH hosts (lab_machines.py). Used by the backends'
integration tests and benchmarks, and by hand; the backends under testbed/ never import them."""
