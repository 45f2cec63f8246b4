"""Analytic models the predictions use."""
