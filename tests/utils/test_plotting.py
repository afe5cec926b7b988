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
