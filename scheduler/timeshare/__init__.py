"""Time sharing after Zhou & Brent: slot arithmetic, registration office, tables, allocation, simulator.

Pure: no I/O and no clock. The live local and global managers follow the tables built here.
"""
