"""No number in a cluster spec may be NaN or infinite: one line naming the field, not a crash later."""
from __future__ import annotations

import re

import pytest

from testbed.spec import SpecError, load


@pytest.mark.parametrize("body, field", [
    ('[[workstation]]\nname = "ws1"\ncpu = "nan"\n', "workstation[0].cpu"),
    ('[[workstation]]\nname = "ws1"\ncpu = nan\n', "workstation[0].cpu"),
    ('[[workstation]]\nname = "ws1"\nspeed = inf\n', "workstation[0].speed"),
    ('[defaults]\ncpu = -inf\n[[workstation]]\nname = "ws1"\n', "defaults.cpu"),
    ('classes = { a = nan }\n[[workstation]]\nname = "ws1"\nclass = "a"\n', "classes.a"),
    ('[[workstation]]\nname = "ws1"\nowner = { n = 1, z = inf, d = 0.1 }\n', "workstation[0].owner.z"),
    ('[[host]]\nname = "h"\naddress = "h"\nfactors = { 0 = nan }\n[[workstation]]\nname = "ws1"\n',
     "host[0].factors.0"),
])
def test_a_non_finite_number_is_refused_naming_its_field(tmp_path, body, field):
    path = tmp_path / "s.toml"
    path.write_text(body)
    with pytest.raises(SpecError, match=rf"^s\.toml: {re.escape(field)}: Input should be a finite number, "
                                        r"got '?-?(nan|inf)'?$"):
        load(path)
