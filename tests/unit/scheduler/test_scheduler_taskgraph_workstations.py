"""A workstations file: speeds, kinds and owners; bad ones are one line naming the key."""
from __future__ import annotations

import pytest

from experiments.studies.menasce_rao.files import WorkstationsError, load_workstations
from scheduler.taskgraph.workstations import Owners, select


def error_of(tmp_path, text: str) -> str:
    path = tmp_path / "ws.toml"
    path.write_text(text)
    with pytest.raises(WorkstationsError) as exc:
        load_workstations(path)
    assert "\n" not in str(exc.value)
    return str(exc.value)


def test_owners_and_kinds_load(tmp_path):
    path = tmp_path / "ws.toml"
    path.write_text('workstation = [{ name = "a", speed = 0.1, kind = "LX", owners = { n = 2, z_s = 1.0, d_s = 0.2 } },'
                    ' { name = "b", speed = 0.3 }]')
    ws = load_workstations(path).workstations
    assert ws[0].owners == Owners(n=2, z_s=1.0, d_s=0.2) and ws[1].owners is None
    assert [w.name for w in select(ws, kind="LX")] == ["a"]


@pytest.mark.parametrize("text, expected", [
    ('workstation = [{ name = "a", speed = 0.1 }, { name = "a", speed = 0.2 }]',
     "ws.toml: workstation 'a': duplicate workstation name"),
    ('workstation = [{ name = "a", speed = 0.0 }]', "ws.toml: workstation[0].speed: Input should be greater than 0"),
    ('workstation = [{ name = "a", sped = 0.1 }]', "ws.toml: workstation[0].sped: unknown key (did you mean 'speed'?)"),
    ('workstation = [{ name = "a", speed = 0.1, owners = { n = -1, z_s = 1.0, d_s = 0.2 } }]',
     "ws.toml: workstation[0].owners.n: Input should be greater than or equal to 0"),
])
def test_a_bad_workstation_is_one_line(tmp_path, text, expected):
    assert error_of(tmp_path, text).startswith(expected)

