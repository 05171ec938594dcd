from tests.fakes import fake_model, no_model  # noqa: F401  (fixtures)
