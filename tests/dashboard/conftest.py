from tests.scorecards.conftest import teams_data  # noqa: F401  (the scorecards' hand-built calls)
