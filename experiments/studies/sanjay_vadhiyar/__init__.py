"""Sanjay & Vadhiyar (2009): machine selection, §5.1 live (training runs, Fig. 7) and §5.2-5.3 on
simulated clusters of 32 to 1,024 processors, its claims, report and analyses (README.md)."""
