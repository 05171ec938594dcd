"""Team session memory on object storage (moves into stele.session with the package layout)."""
