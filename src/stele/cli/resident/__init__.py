"""The resident server: one process per repository that answers hooks, `recall` and `search` by
forking, so a call pays neither the interpreter's imports nor a stat of every source file. Off by
default (`residency.py` says when it may run; docs/hooks.md, "The resident process").

A hook runs in a fresh process on every prompt and edit. On a large record most of its time was
spent before any retrieval: importing Stele and tantivy, and stat-ing every source file for
freshness. The server imports all of it once, keeps the sources' scan live with inotify
(`index/watch.py`), and for each call forks a child that runs the very same code a fresh process
would (`cli.entry.here`, handed to the server as `run`), with the caller's arguments, working
directory, umask, its stdin, stdout and stderr (passed over the socket as file descriptors) and the
part of its environment a call may decide (`policy.py`).

The modules, in the order a call meets them:
- `protocol.py`: what both sides share (the socket's name, the messages, the constants); imports only
  os and sys, because the caller pays for every import on every call;
- `policy.py`: what the server runs, for whom, and with which environment (the security rules);
- `client.py`: the caller's side (`delegate`, first thing in `stele hook ...`, `recall`, `search`),
  starting a server (`start`), status and stop requests;
- `server.py`: the server's process (the loop, accepting and refusing calls, its lifecycle);
- `child.py`: a forked child answering one call over the caller's descriptors;
- `spare.py`: the child forked ahead of the next call, warmed up on the record.

Linux only (abstract sockets, inotify, pidfd); elsewhere every command runs in its own process.
"""
