"""`stele doctor`: every check of the committed record, as findings with a file and a line.

Errors make `doctor` exit 1; warnings exit 0 unless `--strict`. Each check has a stable name (the
`check` of a finding, the `--json` key, the docs' heading) so CI output can be filtered and tests can
assert that every check both fires and stays quiet. The checks live in small modules by what they
need: the record alone (`checks`), the working tree and git history (`anchorcheck`), a base revision
(`basecheck`).
"""
