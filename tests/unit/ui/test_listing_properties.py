"""Properties of the memory list that a plausible change could break unseen (issue 36, item 17).

- ``ResultsModel.extend`` takes a full id list only when it continues the first page shown; any
  other list is refused and leaves the model as it was, and the Memories tab then asks again, so the
  list ends as a fresh read of the vault says.
- ``FilterBar.set_projects`` keeps the choice in force (a project, "Global only", "All projects")
  when the counts are read again, whatever names are added or removed around it; a chosen project
  that is gone falls back to all projects and says so (``changed``).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vodou_desktop.data.sample_vault import fill_vault
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui.browser import search_controller
from vodou_desktop.ui.browser.filters import GLOBAL_ONLY_LABEL, FilterBar
from vodou_desktop.ui.browser.results_model import PAGE, Listing, ResultsModel
from vodou_desktop.ui.browser.window import MemoryBrowser
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.query import ProjectCounts, Scope

QT = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
ids_lists = st.lists(st.integers(1, 60), min_size=0, max_size=25, unique=True)


@QT
@given(first=ids_lists, full=ids_lists)
def test_extend_takes_only_a_list_that_continues_the_first_page(qtbot, first, full):
    model = ResultsModel()
    listing = Listing(list(first), {}, len(first) + 5, False, generation=7)
    model.set_listing(listing)
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    continues = full[: len(first)] == first
    assert model.extend(7, list(full)) is continues
    if continues:
        assert model.listing.ids == full and model.rowCount() == len(full) and model.listing.complete
        assert model.total == len(full)
        assert inserted == ([(len(first), len(full) - 1)] if len(full) > len(first) else [])
    else:  # the vault changed between the two reads: nothing of the stale list is taken
        assert model.listing.ids == first and model.rowCount() == len(first) and not model.listing.complete
        assert model.total == len(first) + 5 and inserted == []


@QT
@given(first=ids_lists, full=ids_lists)
def test_extend_ignores_a_list_for_another_listing(qtbot, first, full):
    model = ResultsModel()
    model.set_listing(Listing(list(first), {}, len(first) + 5, False, generation=3))
    assert model.extend(2, list(full)) is True  # an older query's answer: nothing to ask again
    assert model.listing.ids == first and not model.listing.complete


def test_the_tab_asks_again_when_the_vault_changed_between_the_first_page_and_the_rest(
        qtbot, services, monkeypatch):
    vault = services.runtime.vault
    fill_vault(vault, PAGE + 50)
    real_all_ids = search_controller.all_ids
    written: list[int] = []
    cli = Vault.open(vault.path)  # another program on the same vault (`vodou mem add`): no event here

    def all_ids_after_a_write(v, query):  # type: ignore[no-untyped-def]
        if not written:  # a memory saved between the two reads, once
            written.append(remember(cli, "Saved between the first page and the rest", Origin("cli")))
        return real_all_ids(v, query)

    monkeypatch.setattr(search_controller, "all_ids", all_ids_after_a_write)
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    model = browser.memories.model
    qtbot.waitUntil(lambda: bool(written) and model.listing.complete and services.ops.pending == 0, timeout=10_000)
    fresh = vault.read(lambda conn: q.ordered_fact_ids(conn, FactFilter(project=ALL_PROJECTS), "newest"))
    assert model.listing.ids == fresh and model.rowCount() == PAGE + 51
    assert model.listing.ids[0] == written[0]  # the newest first, as a fresh read lists it
    assert browser.count_label.text() == f"{PAGE + 51} memories"
    cli.close()


names = st.text("abcdefghij", min_size=1, max_size=4)
counts = st.dictionaries(names, st.integers(1, 5000), min_size=1, max_size=8)


@QT
@given(before=counts, after=counts, pick=st.integers(0, 100))
def test_set_projects_keeps_the_chosen_project_when_counts_are_read_again(qtbot, before, after, pick):
    bar = FilterBar()
    bar.set_projects(ProjectCounts(before, 7))
    chosen = sorted(before)[pick % len(before)]
    scope = Scope.PROJECT_AND_GLOBAL if pick % 2 else Scope.PROJECT_ONLY
    assert bar.choose_project(chosen, scope) and bar.current_filter().project == chosen
    assert bar.current_filter().global_too == (scope is Scope.PROJECT_AND_GLOBAL)
    told: list[bool] = []
    bar.changed.connect(lambda: told.append(True))
    kept = dict(after)
    kept[chosen] = before[chosen] + 1  # the same project, another count, new names around it
    bar.set_projects(ProjectCounts(kept, 9))
    assert bar.current_filter().project == chosen and told == []
    assert bar.current_filter().global_too == (scope is Scope.PROJECT_AND_GLOBAL)  # its scope kept too
    assert bar.shown_count() == kept[chosen] + (9 if scope is Scope.PROJECT_AND_GLOBAL else 0)
    assert sorted(bar.projects()) == sorted(kept)
    gone = {k: v for k, v in kept.items() if k != chosen} or {"zzzzz": 1}
    bar.set_projects(ProjectCounts(gone, 9))  # now it is gone
    assert bar.current_filter().project == ALL_PROJECTS and told == [True]


@QT
@given(before=counts, after=counts)
def test_set_projects_keeps_global_only_and_all_projects(qtbot, before, after):
    bar = FilterBar()
    bar.set_projects(ProjectCounts(before, 3))
    bar.project.setCurrentIndex(bar.project.findText(f"{GLOBAL_ONLY_LABEL} (3)"))
    bar.set_projects(ProjectCounts(after, 4))
    assert bar.current_filter().project is None  # global memories only
    assert bar.project.currentText() == f"{GLOBAL_ONLY_LABEL} (4)" and bar.shown_count() == 4
    bar.project.setCurrentIndex(0)
    bar.set_projects(ProjectCounts(before, 3))
    assert bar.current_filter().project == ALL_PROJECTS


