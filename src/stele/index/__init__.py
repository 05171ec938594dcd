"""The derived index package: everything under `.stele/index/`, rebuilt from the record and the WAL."""
