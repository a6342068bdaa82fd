"""run_row() puts every value of a Run in the runs column of the same meaning."""

from __future__ import annotations

import json

from collector.runs.run_rows import run_row
from collector.storage.rows import RUN_COLUMNS
from tests.collector.trees import Tree, genai_agent

NOT_ON_RUN = {"owner", "terminal_at", "tool_calls", "updated_at", "evaluation"}


def test_every_value_lands_in_its_column() -> None:
    tree = Tree()
    root = tree.add(
        "badge.run",
        {
            "badge.task.id": "t",
            "badge.cost.usd": 0.5,
            "badge.screening.id": "s-1",
            "badge.screening.round": 2,
            "badge.suite.name": "smoke",
            "badge.suite.digest": "ab" * 32,
        },
    )
    agent = genai_agent(tree, root)
    tree.add("execute_tool x", {"gen_ai.operation.name": "execute_tool"}, parent=agent)
    chat = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 3}
    tree.add("chat", chat, parent=agent)
    run = tree.run()
    row = dict(zip(RUN_COLUMNS, run_row("owner-x", run, 5.0, 9.0), strict=True))
    for column in set(RUN_COLUMNS) - NOT_ON_RUN:
        assert row[column] == getattr(run, column), column
    assert (row["screening_id"], row["screening_round"]) == ("s-1", 2)
    assert (row["owner"], row["terminal_at"], row["updated_at"]) == ("owner-x", 5.0, 9.0)
    [call] = json.loads(row["tool_calls"])
    assert call["name"] == run.tool_calls[0].name and call["span_id"] == run.tool_calls[0].span_id
