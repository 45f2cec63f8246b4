"""Every committed live store carries bands from the measured noise model (issue 46): each
banded cell has the five statistics and says which noise drew it."""
from __future__ import annotations

import pytest

from experiments import noise
from experiments.noise_evidence import committed_stores
from experiments.predict import ENSEMBLE_STATS
from experiments.store import ResultsStore

STORES = committed_stores()


def test_the_committed_stores_are_found():
    assert len(STORES) >= 20


@pytest.mark.parametrize("path", STORES, ids=[str(p.relative_to(noise.RESULTS)) for p in STORES])
def test_each_committed_store_has_bands_drawn_from_the_noise_model(path):
    with ResultsStore.open(path, readonly=True) as store:
        bands, notes = store.bands(), store.band_notes()
    assert bands, "no band: predict again with `nowlab report STORE --predict`"
    for cell, values in bands.items():
        assert set(values) == set(ENSEMBLE_STATS), cell
        assert "noise" in notes[cell] and notes[cell]["noise"], cell


def test_the_noise_library_covers_every_committed_store():
    runs = {r.run for r in noise.Library.load(noise.LIBRARY).runs}
    assert runs == {str(p.relative_to(noise.RESULTS)) for p in STORES}
