"""Learning-curve plots read rlrun's and rlpyt's progress.csv, prefixed or not."""

from __future__ import annotations

import pytest

from rlrun.utils.plotting import find_column, plot_progress, read_progress

pytestmark = pytest.mark.timeout(60)


def write_progress(path, header, rows):
    path.write_text("\n".join([",".join(header), *(",".join(map(str, r)) for r in rows)]) + "\n")
    return str(path)


def test_a_short_name_finds_the_prefixed_column_and_the_bare_one():
    prefixed = {"Diagnostics/CumSteps": [1.0], "ReturnAverage": [2.0]}
    bare = {"CumSteps": [1.0]}
    assert find_column(prefixed, "CumSteps") == "Diagnostics/CumSteps"
    assert find_column(prefixed, "Diagnostics/CumSteps") == "Diagnostics/CumSteps"
    assert find_column(bare, "Diagnostics/CumSteps") == "CumSteps"
    assert find_column(prefixed, "ReturnAverage") == "ReturnAverage"
    assert find_column(bare, "ReturnAverage") is None


@pytest.mark.parametrize("x_column", ["Diagnostics/CumSteps", "CumSteps"])
def test_plots_are_drawn_from_either_kind_of_file_and_empty_cells_are_skipped(tmp_path, x_column):
    pytest.importorskip("matplotlib")
    csv_path = write_progress(
        tmp_path / "progress.csv",
        [x_column, "ReturnAverage", "ReturnStd"],
        [[100, "", ""], [200, 10.5, 1.0], [300, 20.0, 2.0]],
    )
    assert read_progress(str(tmp_path))[x_column][1] == 200.0
    out = plot_progress(csv_path, str(tmp_path / "curve.png"))
    assert (tmp_path / "curve.png").stat().st_size > 1000 and out.endswith("curve.png")


def test_a_missing_column_names_the_columns_the_file_has(tmp_path):
    pytest.importorskip("matplotlib")
    csv_path = write_progress(tmp_path / "progress.csv", ["Diagnostics/CumSteps", "LossAverage"], [[1, 2]])
    with pytest.raises(KeyError, match="it has: Diagnostics/CumSteps, LossAverage"):
        plot_progress(csv_path, str(tmp_path / "curve.png"))


def test_a_short_last_row_reads_as_nan_and_a_row_wider_than_the_header_is_refused_by_line(tmp_path):
    header = ["Diagnostics/Iteration", "ReturnAverage", "LossAverage"]
    write_progress(tmp_path / "progress.csv", header, [[0, 1.5, 0.1], [1, 2.5]])
    columns = read_progress(str(tmp_path))
    assert columns["ReturnAverage"] == [1.5, 2.5]
    assert columns["LossAverage"][0] == 0.1 and columns["LossAverage"][1] != columns["LossAverage"][1]  # NaN
    # Two writers interleaved: one row holds another's cells too.
    write_progress(tmp_path / "progress.csv", header, [[0, 1.5, 0.1], [1, 2.5, 0.2, 7, 3.0, 0.1], [2, 3.5, 0.3]])
    with pytest.raises(ValueError, match=r"progress.csv, line 3: 6 cells under a header of 3\. Two processes"):
        read_progress(str(tmp_path))


def _legends_drawn(monkeypatch) -> list[list[str]]:
    """Every legend's texts, captured as the plot functions draw them (they close their figures)."""
    import matplotlib.axes

    drawn: list[list[str]] = []
    original = matplotlib.axes.Axes.legend

    def legend(self, *args, **kwargs):
        made = original(self, *args, **kwargs)
        drawn.append([t.get_text() for t in made.get_texts()])
        return made

    monkeypatch.setattr(matplotlib.axes.Axes, "legend", legend)
    return drawn


def test_the_shaded_band_is_named_in_the_legend_once(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from rlrun.utils.plotting import BAND_LABEL, plot_runs

    legends = _legends_drawn(monkeypatch)
    header = ["CumSteps", "CumTime (s)", "ReturnAverage", "ReturnMin", "ReturnMax"]
    rows = [[100, 1, 10, 5, 15], [200, 2, 20, 12, 30]]
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        write_progress(tmp_path / run / "progress.csv", header, rows)
    plot_progress(str(tmp_path / "a"), str(tmp_path / "one.png"))
    assert legends[-1] == ["a", BAND_LABEL]  # one run: the band is explained
    plot_progress([str(tmp_path / "a"), str(tmp_path / "b")], str(tmp_path / "two.png"))
    assert legends[-1] == ["a", BAND_LABEL, "b"]  # the explanation once, whatever the number of bands
    plot_runs({"seeds": [str(tmp_path / "a"), str(tmp_path / "b")]}, str(tmp_path / "seeds.png"))
    assert legends[-1] == ["seeds (mean of 2)", "seeds: lowest to highest run"]
