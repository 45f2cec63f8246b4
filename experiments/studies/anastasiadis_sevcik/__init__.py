"""Reproduction of Anastasiadis & Sevcik, "Parallel Application Scheduling on
Networks of Workstations" (the simulation study of its sections 5 and 6).

The package is split so that each module has one job:

- ``spec``        what a study is (workloads, loads, policies, run lengths), validated;
- ``paper``       the numbers the paper prints, kept only for comparison;
- ``workload``    the Table 3 job generator and its exact moments;
- ``stats``       confidence-interval arithmetic for independent replications;
- ``saturation``  the paper's saturation rule and the measurement window;
- ``replication`` one replication of one cell, on the real scheduler engine;
- ``study``       the sequential-replication procedure, run in parallel processes;
- ``claim``       what a claim is, the thresholds (the paper's words made precise), cell lookups;
- ``claims_sdf``, ``claims_adaptive``, ``claims_dif``  the claims of §6.1, §6.2-6.3, §6.4-7;
- ``claims``      runs them all, and again under each reading of DIF;
- ``analytic``    the Section 4 waiting/running ratios (Figure 1);
- ``plots``       the figures; ``report`` the CSV, Markdown report and rich table;
- ``configs/``    the adaptive family live (a config for the core's ``nowlab run``);
- ``analyses/``   one-question investigations, each run as a module.
"""
