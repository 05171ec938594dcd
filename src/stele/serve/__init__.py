"""`stele serve`: a local, read-only JSON API over the record and session memory, and the web page
that shows it (`static/`, plain HTML/JS/CSS served by the same process, nothing fetched from the
network). `api.py` answers requests as plain functions; `server.py` is the HTTP shell around it."""
