"""The scheduling rules, one module per family."""
