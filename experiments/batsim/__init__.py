"""Batsim's side of the Batsim protocol: its messages, interval sets and workload files.

Follows the JSON protocol of Batsim 4.x (docs/protocol.rst at tag v4.2.1 of oar-team/batsim)
as pybatsim 3.2.1 (`batsim/batsim.py`) speaks it. Pure: no sockets, no clocks.
"""
