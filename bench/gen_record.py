#!/usr/bin/env python3
"""Generate a synthetic Stele record: N facts with realistic kinds, edges, anchors, lifecycle and a WAL.

    python bench/gen_record.py 10000 bench/out/rec-10k      # a git repo with docs/memory/ and .stele/wal/

Deterministic (seeded). Shapes follow the public evaluation record: about a fifth decisions and a fifth
risks, tasks that block epics, facts that are part of components, causal chains between decisions,
lessons and risks, a few superseded, retired and expired facts; bodies of 30-120 words mixing prose,
identifiers (CamelCase, snake_case, dotted paths) and error codes; anchors on files, globs and symbols.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

KINDS = [("decision", "DEC", 18), ("risk", "RISK", 16), ("task", "TASK", 16), ("lesson", "LSN", 10),
         ("architecture", "ARCH", 5), ("constraint", "CON", 5), ("instruction", "INS", 4),
         ("document", "DOC", 3), ("note", "NOTE", 4), ("fyi", "FYI", 3), ("gap", "GAP", 3),
         ("opportunity", "OPP", 3), ("priority", "PRI", 2), ("goal", "GOAL", 1), ("diagram", "DIAG", 1),
         ("component", "COMP", 3), ("epic", "EPIC", 2), ("objective", "OBJ", 0.5), ("milestone", "MS", 0.5)]
WORDS = [
    "account", "address", "alert", "alias", "allocation", "analytics", "api", "archive", "attempt", "audit",
    "auth", "backoff", "backup", "balance", "batch", "billing", "bucket", "budget", "buffer", "build",
    "cache", "capacity", "capture", "card", "cart", "catalog", "certificate", "channel", "charge",
    "checkout", "client", "cluster", "column", "commit", "compute", "config", "connection", "consumer",
    "container", "cookie", "cost", "coupon", "cron", "currency", "customer", "dashboard", "database",
    "deadline", "delivery", "deploy", "dispute", "disk", "dns", "domain", "email", "endpoint", "error",
    "event", "expiry", "export", "failover", "feature", "fee", "filter", "flag", "flood", "fraud",
    "gateway", "header", "health", "hook", "idempotency", "image", "import", "index", "inventory",
    "invoice", "job", "key", "latency", "ledger", "limit", "listing", "lock", "log", "login", "mail",
    "merchant", "message", "metric", "migration", "mobile", "monitor", "network", "notification", "oauth",
    "order", "outage", "outbox", "partner", "password", "payload", "payment", "peak", "permission",
    "pipeline", "policy", "pool", "pricing", "product", "profile", "provider", "proxy", "queue", "quota",
    "rate", "receipt", "reconciliation", "redis", "refund", "region", "release", "replica", "report",
    "request", "reservation", "resource", "response", "retry", "revenue", "role", "rollback", "rotation",
    "route", "runbook", "schema", "search", "secret", "segment", "session", "shard", "shipment",
    "signature", "sku", "snapshot", "spike", "stock", "storage", "stripe", "subscription", "sync", "tax",
    "template", "tenant", "threshold", "throttle", "ticket", "timeout", "token", "traffic", "transaction",
    "trigger", "upload", "user", "vendor", "verification", "warehouse", "webhook", "worker", "zone",
    "after", "before", "during", "every", "never", "always", "only", "must", "should", "fails", "breaks",
    "blocks", "slows", "leaks", "drops", "retries", "expires", "rejects", "duplicates", "overloads",
    "stalls"
]
IDENT = ["RetryPolicy", "TaxCalculator", "IdempotencyStore", "RateLimiter", "OrderService", "CartItem",
         "send_receipt", "mark_processed", "rotate_session", "reserve_stock", "processed_events_pkey",
         "APIConnectionError", "UniqueViolation", "LockTimeout", "TS2769", "TS2345", "E11000", "HTTP 429"]
RELATIONS = [("relates-to", 40), ("caused-by", 22), ("part-of", 12), ("mentions", 0), ("contradicts", 4),
             ("supersedes", 3), ("blocks", 8), ("fulfills", 5), ("embeds", 3), ("expires-on", 3)]
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.4:
        words.insert(rng.randrange(len(words)), f"`{rng.choice(IDENT)}`")
    text = " ".join(words)
    return text[:1].upper() + text[1:] + "."


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("facts", type=int)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    dest: Path = args.dest
    if dest.exists() and any(dest.iterdir()):
        raise SystemExit(f"{dest} is not empty")
    mem = dest / "docs" / "memory"
    mem.mkdir(parents=True)
    files = [f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{n}.py" for n in range(max(50, args.facts // 5))]
    kinds = list(KINDS)
    weights = [w for *_, w in KINDS]
    taken: set[str] = set()
    facts: list[tuple[str, str]] = []
    for _ in range(args.facts):
        kind, prefix, _ = rng.choices(kinds, weights)[0]
        while True:
            fid = f"{prefix}-" + "".join(rng.choice(CROCKFORD) for _ in range(5))
            if fid not in taken:
                taken.add(fid)
                break
        title = sentence(rng, rng.randint(5, 11)).rstrip(".")
        body = " ".join(sentence(rng, rng.randint(6, 14)) for _ in range(rng.randint(3, 8)))
        meta = [f"id: {fid}", f"kind: {kind}", f"title: {json.dumps(title)}"]
        r = rng.random()
        if kind != "task" and r < 0.03:
            meta.append("status: superseded")
        elif kind != "task" and r < 0.05:
            meta.append("status: retired")
        elif kind == "task":
            meta.append(f"status: {rng.choice(['open', 'in-progress', 'done', 'blocked'])}")
        if rng.random() < 0.03:
            meta.append("expires: 2025-01-31")
        if rng.random() < 0.5:
            anchors = []
            for _ in range(rng.randint(1, 2)):
                f = rng.choice(files)
                a = rng.random()
                anchors.append(f"{f.rsplit('/', 1)[0]}/**/*.py" if a < 0.05 else
                               f"{f}::{rng.choice(IDENT[:10])}" if a < 0.35 else f)
            meta.append("anchors:\n" + "".join(f"  - {a}\n" for a in anchors).rstrip("\n"))
        if facts:
            links: dict[str, list[str]] = {}
            for _ in range(rng.choices([0, 1, 2, 3], [20, 40, 28, 12])[0]):
                rel = rng.choices([r for r, _ in RELATIONS], [w for _, w in RELATIONS])[0]
                target = rng.choice(facts[-2000:])[0]
                if rel == "mentions":
                    continue
                if kind == "task" and rng.random() < 0.3:
                    epics = [f for f, k in facts[-500:] if k in ("epic", "objective", "milestone")]
                    if epics:
                        rel, target = "blocks", rng.choice(epics)
                if target not in links.get(rel, []):
                    links.setdefault(rel, []).append(target)
            if links:
                meta.append("links:\n" + "\n".join(f"  {rel}: [{', '.join(t)}]" for rel, t in links.items()))
            if rng.random() < 0.2:
                body += f" See {rng.choice(facts)[0]}."
        meta.append(f"tags: [{', '.join(rng.sample(WORDS[:60], rng.randint(1, 3)))}]")
        meta.append(f"created: 2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}")
        folder = mem / f"{kind}s"
        folder.mkdir(exist_ok=True)
        text = "---\n" + "\n".join(meta) + "\n---\n" + body + "\n"
        (folder / f"{fid}.md").write_text(text, encoding="utf-8")
        facts.append((fid, kind))
    wal = dest / ".stele" / "wal"
    wal.mkdir(parents=True)
    for s in range(10):
        lines = []
        for e in range(30):
            ts = f"2026-11-{1 + s:02d}T{e // 2:02d}:{(e * 7) % 60:02d}:00Z"
            eid = "S-01J" + "".join(rng.choice(CROCKFORD) for _ in range(23))
            kind = rng.choice(["note", "decision", "outcome", "prompt", "stage"])
            entry = {"v": 1, "id": eid, "ts": ts, "session": f"sess-{s}", "type": kind,
                     "text": sentence(rng, rng.randint(8, 20))}
            if rng.random() < 0.3:
                entry["task"] = rng.choice([f for f, k in facts if k == "task"] or [facts[0][0]])
            lines.append(json.dumps(entry))
        (wal / f"sess-{s}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                 "commit", "-qm", "record"]):
        subprocess.run(cmd, cwd=dest, check=True, capture_output=True)
    print(f"{args.facts} facts, 300 session entries in {dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
