from tests.disputes.conftest import ana, bruno, care, lead, sup, workspace  # noqa: F401  (fixtures)
