"""The CLI prints a library's warning as one line, without its source line."""
import warnings

from nowlab import cli


def test_a_warning_prints_as_one_line_without_its_source(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        old, warnings.showwarning = warnings.showwarning, cli._one_line
        try:
            warnings.warn("core 1: thin headroom", UserWarning)
        finally:
            warnings.showwarning = old
    err = capsys.readouterr().err
    assert err == "warning: core 1: thin headroom\n"
