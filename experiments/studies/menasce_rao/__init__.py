"""Menascé & Rao (1996) reproduced: the validation Tables 2 and 3, Figs. 4-6 and the §6 placement
policies, live on the testbed; its task-graph files (`configs/`, `files`), live run (`live`),
claims, reports and analyses (README.md)."""
