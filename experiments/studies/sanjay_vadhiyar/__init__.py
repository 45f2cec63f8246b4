"""Sanjay & Vadhiyar (2009) §5.2-5.3 on simulated clusters of 32 to 1,024 processors."""
