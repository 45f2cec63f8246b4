"""The one config loader: every failure is one line, a misspelled key before a bad value."""
from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator

from experiments.studies.anastasiadis_sevcik.spec import SpecError as StudySpecError, build_spec
from experiments.config import ConfigError
from testbed.config_loader import field_path, known_keys, load_toml, read_toml, validate
from testbed.spec import ClusterSpec, SpecError, from_dict


class LoaderError(ValueError):
    pass


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Link(_Strict):
    rate: int = Field(gt=0)


class Host(_Strict):
    name: str
    cpu: float = Field(0.25, gt=0, le=1)
    link: Link | None = None
    role: str | dict[str, int] = ""

    @field_validator("name")
    @classmethod
    def _lower(cls, v: str) -> str:
        if v != v.lower():
            raise ValueError(f"must be lower case, got {v!r}")
        return v


class Lab(_Strict):
    title: str
    hosts: list[Host] = Field(alias="host", min_length=1)
    groups: dict[str, Host] = Field(default_factory=dict)


def message(raw: dict) -> str:
    with pytest.raises(LoaderError) as info:
        validate(Lab, raw, LoaderError)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_a_misspelled_key_is_reported_before_a_bad_value() -> None:
    # The same input has a bad value (cpu = 5) ahead of the typo and a missing key (title):
    # the typo is the cause of the missing key, so it is named first.
    text = message({"titel": "x", "host": [{"name": "a", "cpu": 5}]})
    assert text == "titel: unknown key (did you mean 'title'?)"


def test_a_nested_unknown_key_is_named_by_its_path_with_a_suggestion() -> None:
    text = message({"title": "x", "host": [{"name": "a"}, {"name": "b", "link": {"rat": 5}}]})
    assert text == "host[1].link.rat: unknown key (did you mean 'rate'?)"


def test_an_unknown_key_far_from_any_lists_the_known_ones() -> None:
    text = message({"title": "x", "host": [{"name": "a", "zzz": 1}]})
    assert text == "host[0].zzz: unknown key (known: cpu, link, name, role)"


def test_a_bad_value_names_the_list_item_by_index_and_says_what_it_got() -> None:
    text = message({"title": "x", "host": [{"name": "a"}, {"name": "b", "cpu": 5}]})
    assert text == "host[1].cpu: Input should be less than or equal to 1, got 5"


def test_dict_entries_and_validator_messages_are_kept_as_written() -> None:
    text = message({"title": "x", "host": [{"name": "a"}], "groups": {"g1": {"name": "B"}}})
    assert text == "groups.g1.name: must be lower case, got 'B'"  # no second ", got"


def test_a_missing_key_is_required_and_a_long_value_is_cut() -> None:
    assert message({"host": [{"name": "a"}]}) == "title: required"
    text = message({"title": "x", "host": [{"name": "a", "cpu": "fast" * 50}]})
    assert text.startswith("host[0].cpu: Input should be a valid number") and text.endswith("...")
    assert len(text) < 160


def test_a_union_member_pydantic_tried_is_not_shown_as_a_key() -> None:
    text = message({"title": "x", "host": [{"name": "a", "role": 5}]})
    assert text == "host[0].role: Input should be a valid string, got 5"  # not host[0].role.str


def test_an_alias_and_its_field_name_are_both_known() -> None:
    assert known_keys(Lab, ()) == ["groups", "host", "hosts", "title"]
    assert known_keys(Lab, ("groups", "g1", "link")) == ["rate"]
    assert known_keys(Lab, ("title",)) == []


def test_field_path_joins_names_and_indexes() -> None:
    assert field_path(("workstation", 0, "links", "ws2")) == "workstation[0].links.ws2"
    assert field_path((0, "x")) == "[0].x"
    assert field_path(()) == ""


def test_a_file_prefixes_its_name(tmp_path: Path) -> None:
    path = tmp_path / "lab.toml"
    path.write_text('title = "x"\n[[host]]\nname = "a"\ncpu = 0\n')
    with pytest.raises(LoaderError, match=r"^lab\.toml: host\[0\]\.cpu: Input should be greater than 0, got 0$"):
        load_toml(path, Lab, LoaderError)
    path.write_text('title = "x"\n[[host]]\nname = "a"\n')
    assert load_toml(path, Lab, LoaderError).hosts[0].cpu == 0.25


def test_prepare_errors_are_prefixed_too(tmp_path: Path) -> None:
    path = tmp_path / "lab.toml"
    path.write_text('title = "x"\n')

    def refuse(raw: dict) -> dict:
        raise LoaderError(f"title: {raw['title']!r} is taken")

    with pytest.raises(LoaderError, match=r"^lab\.toml: title: 'x' is taken$"):
        load_toml(path, Lab, LoaderError, prepare=refuse)


@pytest.mark.parametrize("content", [b"title = \n[[host]\n", b'{"title": "x"}\n', b"\x89PNG\r\n\x1a\n\x00\xff"])
def test_a_file_that_is_not_toml_gives_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "lab.toml"
    path.write_bytes(content)
    with pytest.raises(LoaderError) as info:
        load_toml(path, Lab, LoaderError)
    text = str(info.value)
    assert "\n" not in text and text.startswith("lab.toml: not valid TOML (")


def test_a_missing_file_names_the_whole_path_and_a_directory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match=r"/nope\.toml: no such spec file$"):
        read_toml(tmp_path / "nope.toml", LoaderError, kind="spec file")
    with pytest.raises(LoaderError, match=r": cannot read \(Is a directory\)$"):
        read_toml(tmp_path, LoaderError)


def test_the_three_callers_keep_their_error_classes_and_share_the_rules(tmp_path: Path) -> None:
    for cls in (SpecError, ConfigError, StudySpecError):
        assert issubclass(cls, ValueError)
    # The cluster spec: a typo comes before the bad value next to it, with a suggestion.
    with pytest.raises(SpecError, match=r"^workstation\[0\]\.cpus: unknown option \(did you mean 'cpu'\?\)$"):
        from_dict({"workstation": [{"name": "a", "cpus": 0.2, "egress": "fast"}]})
    with pytest.raises(SpecError, match=r"^workstaton: unknown option \(did you mean 'workstation'\?\)$"):
        from_dict({"workstaton": [{"name": "a"}]})
    # The study spec: the same path syntax and the same ', got'.
    with pytest.raises(StudySpecError, match=r"^invalid study spec: loads\[1\]: Input should be greater than 0, got -0\.1$"):
        build_spec(loads=(0.5, -0.1))
    with pytest.raises(StudySpecError, match=r"^invalid study spec: jobs_per_replicaton: unknown key \(did you mean"):
        build_spec(jobs_per_replicaton=10)
    assert isinstance(from_dict({"workstation": [{"name": "a"}]}), ClusterSpec)
