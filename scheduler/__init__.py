"""nowlab: scheduler."""
