"""Scoring for Knowl's `coding-memory-v1` accuracy benchmark: a line-by-line Python port of its
`benchmarks/accuracy/src/score.ts` (`scoreRetrieval`, Apache-2.0, github:dat999zx/knowl at the commit
`bench/knowl_memory.py` pins). This is the only module of the runner that reads the gold labels.

A prediction is `{"questionId", "response": {"decision": "results"|"abstain", "hits": [{"memoryId",
"sourceIds": [...]}, ...]}}`, or `{"questionId", "notApplicableReason"}`, or `{"questionId", "error"}`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

STALE_REASONS = ("superseded", "future", "contradicted", "refuted_temporary")
METRICS = ("applicableCoverage", "temporalCoverage", "abstentionCoverage", "provenanceCoverage",
           "strictAccuracyAtK", "temporalAccuracy", "currentStateAccuracy", "historicalAsOfAccuracy",
           "timelineOrderAccuracy", "contradictionResolutionAccuracy", "failureScenarioAccuracy",
           "failedApproachRetrievalRecall", "recallAt1", "recallAt3", "recallAt5", "recallAt10", "mrr",
           "ndcgAt5", "ndcgAt10", "staleResultRate", "forbiddenResultRate", "duplicateResultRate",
           "abstentionAccuracy")


def metric(numerator: float, denominator: float) -> dict[str, Any]:
    return {"value": numerator / denominator if denominator else None, "numerator": numerator,
            "denominator": denominator}


def ndcg(hit_grades: list[int], ideal_grades: list[int], k: int) -> float:
    def gain(grade: int, index: int) -> float:
        return ((2 ** grade) - 1) / math.log2(index + 2) if grade > 0 else 0.0

    actual = sum(gain(g, i) for i, g in enumerate(hit_grades[:k]))
    ideal = sum(gain(g, i) for i, g in enumerate(sorted(ideal_grades, reverse=True)[:k]))
    return actual / ideal if ideal else 0.0


def _na_row(question_id: str, category: str, reason: str) -> dict[str, Any]:
    return {"questionId": question_id, "category": category, "strictCorrect": None,
            "relevantRetrieved": {"1": 0, "3": 0, "5": 0, "10": 0}, "relevantTotal": 0, "reciprocalRank": 0,
            "ndcgAt5": 0, "ndcgAt10": 0, "forbiddenHits": 0, "staleHits": 0, "retrievedHits": 0,
            "attributedHits": 0, "duplicateHits": 0, "failedApproachRetrieved": 0, "failedApproachTotal": 0,
            "abstentionCorrect": None, "notApplicableReason": reason}


def _inspect(hits: list[dict[str, Any]], project_id: str, gold: dict[str, Any],
             record_projects: dict[str, str]) -> list[dict[str, Any]]:
    relevance = {j["sourceId"]: j["grade"] for j in gold["judgments"]}
    harmful = {h["sourceId"] for h in gold["harmful"]}
    stale = {h["sourceId"] for h in gold["harmful"] if h["reason"] in STALE_REASONS}
    seen_memory: set[str] = set()
    seen_sources: set[str] = set()
    out = []
    for hit in hits:
        sources = list(dict.fromkeys(hit.get("sourceIds") or []))
        new_sources = [s for s in sources if s not in seen_sources]
        invalid = not sources or any(record_projects.get(s) != project_id for s in sources)
        duplicate = hit["memoryId"] in seen_memory or any(s in seen_sources for s in sources)
        seen_memory.add(hit["memoryId"])
        seen_sources.update(sources)
        out.append({"sources": sources, "grade": max([0, *(relevance.get(s, 0) for s in new_sources)]),
                    "forbidden": invalid or any(s in harmful for s in sources),
                    "stale": any(s in stale for s in sources), "duplicate": duplicate})
    return out


def score_retrieval(records: list[dict[str, Any]], queries: list[dict[str, Any]], gold_rows: list[dict[str, Any]],
                    predictions: list[dict[str, Any]], capabilities: dict[str, Any], top_k: int) -> dict[str, Any]:
    """`scoreRetrieval` of score.ts: the metrics, one row per query, and the failures."""
    record_projects = {r["sourceId"]: r["projectId"] for r in records}
    gold = {row["questionId"]: row for row in gold_rows}
    by_question: dict[str, dict[str, Any]] = {}
    for p in predictions:
        if p["questionId"] in by_question:
            raise ValueError(f"Duplicate prediction for {p['questionId']}.")
        by_question[p["questionId"]] = p
    query_ids = {q["questionId"] for q in queries}
    for p in predictions:
        if p["questionId"] not in query_ids:
            raise ValueError(f"Prediction references unknown question {p['questionId']}.")

    per_query: list[dict[str, Any]] = []
    failures: list[dict[str, str]] = []
    for query in queries:
        g = gold.get(query["questionId"])
        if g is None:
            raise ValueError(f"Missing evaluator gold for {query['questionId']}.")
        prediction = by_question.get(query["questionId"])
        capability_reason = ("adapter does not support retrieval abstention"
                             if g["shouldAbstain"] and not capabilities["retrievalAbstention"] else
                             "adapter does not expose source provenance"
                             if not g["shouldAbstain"] and not capabilities["sourceProvenance"] else None)
        na = (prediction or {}).get("notApplicableReason") or capability_reason
        if na:
            per_query.append(_na_row(query["questionId"], g["category"], na))
            continue
        response: dict[str, Any] = (prediction or {}).get("response") or {}
        hits = response.get("hits", [])[:top_k]
        inspected = _inspect(hits, query["projectId"], g, record_projects)
        relevant = {j["sourceId"] for j in g["judgments"] if j["grade"] >= 2}

        def relevant_retrieved(k: int, inspected: list[dict[str, Any]] = inspected,
                               relevant: set[str] = relevant) -> int:
            return len({s for info in inspected[:k] for s in info["sources"]} & relevant)

        first = next((i for i, info in enumerate(inspected) if any(s in relevant for s in info["sources"])), -1)
        all_sources = {s for info in inspected for s in info["sources"]}
        failure = g.get("failure")
        failed_sources = failure["failedApproachSourceIds"] if failure and failure.get("shouldWarn") else []
        failed_retrieved = sum(1 for s in failed_sources if s in all_sources)
        groups_ok = all(any(s in all_sources for s in group) for group in g["requiredEvidenceGroups"])
        forbidden = sum(1 for i in inspected if i["forbidden"])
        stale = sum(1 for i in inspected if i["stale"])
        duplicate = sum(1 for i in inspected if i["duplicate"])
        attributed = sum(1 for i in inspected if i["sources"])
        has_response = bool(response)
        error = (prediction or {}).get("error") or (None if has_response else "missing prediction")
        abstention_correct = (has_response and response["decision"] == "abstain" and not response["hits"]
                              if g["shouldAbstain"] else None)
        strict = (abstention_correct if g["shouldAbstain"] else
                  has_response and response["decision"] == "results" and groups_ok and forbidden == 0)
        if error:
            failures.append({"questionId": query["questionId"], "reason": error})
        elif not strict:
            failures.append({"questionId": query["questionId"], "reason": (
                "incorrect abstention" if g["shouldAbstain"] else
                "forbidden, cross-project, unknown, or unattributed result returned" if forbidden else
                "missing required evidence")})
        ideal = [j["grade"] for j in g["judgments"]]
        grades = [i["grade"] for i in inspected]
        per_query.append({
            "questionId": query["questionId"], "category": g["category"], "strictCorrect": bool(strict),
            "relevantRetrieved": {str(k): relevant_retrieved(k) for k in (1, 3, 5, 10)},
            "relevantTotal": len(relevant),
            "reciprocalRank": 0 if g["shouldAbstain"] or first < 0 else 1 / (first + 1),
            "ndcgAt5": 0 if g["shouldAbstain"] else ndcg(grades, ideal, 5),
            "ndcgAt10": 0 if g["shouldAbstain"] else ndcg(grades, ideal, 10),
            "forbiddenHits": forbidden, "staleHits": stale, "retrievedHits": len(inspected),
            "attributedHits": attributed, "duplicateHits": duplicate, "failedApproachRetrieved": failed_retrieved,
            "failedApproachTotal": len(failed_sources), "abstentionCorrect": abstention_correct})
    return {"metrics": metrics_of(per_query, gold, len(queries)), "perQuery": per_query, "failures": failures}


def metrics_of(per_query: list[dict[str, Any]], gold: dict[str, dict[str, Any]], n_queries: int) -> dict[str, Any]:
    """The metric block of `scoreRetrieval` over `per_query` (all queries, or one category's)."""
    def g(row: dict[str, Any]) -> dict[str, Any]:
        return gold[row["questionId"]]

    applicable = [r for r in per_query if r["strictCorrect"] is not None]
    answerable = [r for r in applicable if not g(r)["shouldAbstain"]]
    abstentions = [r for r in applicable if g(r)["shouldAbstain"]]
    temporal = [r for r in per_query if g(r).get("temporalKind") is not None]
    all_abstentions = [r for r in per_query if g(r)["shouldAbstain"]]

    def applicable_for(pred: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        return [r for r in applicable if pred(g(r))]

    def accuracy(rows: list[dict[str, Any]]) -> dict[str, Any]:
        return metric(sum(1 for r in rows if r["strictCorrect"]), len(rows))

    failure_rows = applicable_for(lambda x: x.get("failure") is not None)
    total_relevant = sum(r["relevantTotal"] for r in answerable)
    retrieved = sum(r["retrievedHits"] for r in applicable)
    temporal_applicable = [r for r in temporal if r["strictCorrect"] is not None]
    return {
        "applicableCoverage": metric(len(applicable), n_queries),
        "temporalCoverage": metric(len(temporal_applicable), len(temporal)),
        "abstentionCoverage": metric(len(abstentions), len(all_abstentions)),
        "provenanceCoverage": metric(sum(r["attributedHits"] for r in applicable), retrieved),
        "strictAccuracyAtK": metric(sum(1 for r in applicable if r["strictCorrect"]), len(applicable)),
        "temporalAccuracy": accuracy(temporal_applicable),
        "currentStateAccuracy": accuracy(applicable_for(lambda x: x.get("temporalKind") == "current")),
        "historicalAsOfAccuracy": accuracy(applicable_for(lambda x: x.get("temporalKind") == "as_of")),
        "timelineOrderAccuracy": accuracy(applicable_for(
            lambda x: x.get("temporalKind") in ("change_point", "timeline"))),
        "contradictionResolutionAccuracy": accuracy(applicable_for(
            lambda x: x.get("temporalKind") == "contradiction")),
        "failureScenarioAccuracy": accuracy(failure_rows),
        "failedApproachRetrievalRecall": metric(sum(r["failedApproachRetrieved"] for r in failure_rows),
                                                sum(r["failedApproachTotal"] for r in failure_rows)),
        **{f"recallAt{k}": metric(sum(r["relevantRetrieved"][str(k)] for r in answerable), total_relevant)
           for k in (1, 3, 5, 10)},
        "mrr": metric(sum(r["reciprocalRank"] for r in answerable), len(answerable)),
        "ndcgAt5": metric(sum(r["ndcgAt5"] for r in answerable), len(answerable)),
        "ndcgAt10": metric(sum(r["ndcgAt10"] for r in answerable), len(answerable)),
        "staleResultRate": metric(sum(r["staleHits"] for r in applicable), retrieved),
        "forbiddenResultRate": metric(sum(r["forbiddenHits"] for r in applicable), retrieved),
        "duplicateResultRate": metric(sum(r["duplicateHits"] for r in applicable), retrieved),
        "abstentionAccuracy": metric(sum(1 for r in abstentions if r["abstentionCorrect"]), len(abstentions)),
    }
