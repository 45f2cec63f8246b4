"""Task-graph applications (Menascé & Rao): the graph spec, the workstations, the placement policies.

Pure: descriptions and rules only. The prediction (TGS, MVA, Monte Carlo) is in
`experiments/models/`; the files are read in `experiments/studies/menasce_rao/files.py`.
"""
