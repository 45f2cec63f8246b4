"""nowlab: testbed."""
