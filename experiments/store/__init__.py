"""The results store: one SQLite file per run (`results.py`), its writer lock (`lock.py`) and its
typed table of measured resizes (`resizes.py`). `ResultsStore` and its errors are the names the rest
of the code imports, from here."""
from experiments.store.results import VERSION, ResultsStore, StepFailure, StoreError

__all__ = ["VERSION", "ResultsStore", "StepFailure", "StoreError"]
