"""Job files: reading and writing job streams and traces (SWF, CSV, Batsim)."""
