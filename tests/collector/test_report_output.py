"""Where a report goes (collector.reports.output): files made with their folders,
GitHub's step summary added to and never replaced, paths refused before a screening."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.reports.output import (
    ReportNotWritten,
    check_path,
    same_file,
    step_summary,
    write_report,
)


def test_a_report_replaces_its_file_and_a_summary_is_added_to(tmp_path: Path) -> None:
    report = tmp_path / "new" / "folder" / "report.md"
    write_report(str(report), "first\n")
    write_report(str(report), "second\n")
    assert report.read_text() == "second\n"
    summary = tmp_path / "summary.md"
    summary.write_text("an earlier step\n")
    write_report(str(summary), "ours\n", append=True)
    assert summary.read_text() == "an earlier step\nours\n"


def test_the_step_summary_is_found_by_its_variable_and_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    assert step_summary({"GITHUB_STEP_SUMMARY": str(summary)}) == str(summary)
    assert step_summary({"GITHUB_STEP_SUMMARY": ""}) is None and step_summary({}) is None
    monkeypatch.chdir(tmp_path)
    assert same_file("summary.md", str(summary)) and not same_file("-", str(summary))
    assert not same_file("other.md", str(summary)) and not same_file("x.md", None)


def test_paths_that_cannot_take_a_report_are_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert check_path("--junit", "-") is None and check_path("--junit", None) is None
    assert check_path("--junit", str(tmp_path / "a" / "b.xml")) is None
    assert (tmp_path / "a").is_dir()  # made before the screening, not after it
    assert check_path("--junit", str(tmp_path)) == f"--junit {tmp_path}: is a folder, not a file"
    problem = check_path("--markdown", str(tmp_path / "file" / "x.md"))
    assert problem is not None and problem.startswith(f"--markdown {tmp_path}/file/x.md: cannot")
    with pytest.raises(ReportNotWritten, match="cannot write"):
        write_report(str(tmp_path / "file" / "x.md"), "text")
