"""What the reports, experiments, calibration and scorecards share, as public names: the statistics
(`stats`: pure functions, each checked against worked examples and oracles), the server-drawn charts
(`charts`), CSV downloads (`export`), figures as a page shows them (`formatting`) and the API's pieces
for them (`api`). Each subpackage imports from here, never another's private names
(`tests/test_layers.py` checks it)."""
