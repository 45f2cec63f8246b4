"""Formats both sides of a workstation speak: standard library only, imported by the node side and the host side alike."""
