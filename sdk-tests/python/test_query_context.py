"""What a query reads of its container and of the emulator while it runs (issue 38, point 2):
the container's vector embedding policy (the distance function of `VectorDistance`), its
full-text policy (the language `FullTextContains` and `FullTextScore` stem with) and the
clock (`GetCurrent*`). A query that also calls a user-defined function runs its page on
another thread (outside the store's lock, bounded in time): it must read the same policies
and the same instant, so that adding `udf.ident(c.id)` to a query changes nothing else in
its answer. In one physical partition and across five; across partitions and in one.

Expected values are computed here, from the documentation's definitions (Euclidean
distance, dot product, Okapi BM25 with Lucene's idf), not read back from the emulator."""

import datetime
import math

import pytest
from azure.cosmos import PartitionKey

from conftest import unique

UDF = {"id": "ident", "body": "function (x) { return x; }"}

# Distinct Euclidean distances, dot products and cosine similarities to [1, 1], so that
# every distance function orders them differently and none ties.
VECTORS = {
    "a": [1, 0],
    "b": [3, 4],
    "c": [-2, 1],
    "d": [2, 2.5],
    "e": [0, -2],
    "f": [1, 1.5],
}
QUERY_VECTOR = [1, 1]

LAYOUTS = {"one range": {}, "five ranges": {"offer_throughput": 30000}}


def euclidean(v, w):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(v, w)))


def dotproduct(v, w):
    return sum(x * y for x, y in zip(v, w))


DISTANCES = {"euclidean": euclidean, "dotproduct": dotproduct}
# Closer first: the smallest Euclidean distance, the greatest dot product.
CLOSER_FIRST = {"euclidean": False, "dotproduct": True}


def with_udf(query):
    """The same query with a user-defined function called in its projection."""
    select, rest = query.split(" FROM c", 1)
    return f"{select}, udf.ident(c.id) AS u FROM c{rest}"


def without_udf_column(rows):
    for row in rows:
        assert row.pop("u") == row["id"]
    return rows


def made(database, layout, **policies):
    container = database.create_container(
        unique("c"), partition_key=PartitionKey(path="/pk"), **LAYOUTS[layout], **policies
    )
    container.scripts.create_user_defined_function(UDF)
    return container


def ranges(container):
    return list(container.client_connection._ReadPartitionKeyRanges(container.container_link))


def both_ways(container, query, **kwargs):
    """(rows without the UDF, rows with it, the UDF's column checked and removed)."""
    plain = list(container.query_items(query, **kwargs))
    called = without_udf_column(list(container.query_items(with_udf(query), **kwargs)))
    return plain, called


def vector_container(database, layout, distance):
    container = made(
        database,
        layout,
        vector_embedding_policy={"vectorEmbeddings": [
            {"path": "/v", "dataType": "float32", "dimensions": 2, "distanceFunction": distance}
        ]},
        indexing_policy={"vectorIndexes": [{"path": "/v", "type": "flat"}]},
    )
    for i, (id, v) in enumerate(VECTORS.items()):
        container.create_item({"id": id, "pk": f"p{i}", "v": v})
    return container


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("distance", DISTANCES)
def test_vector_distance_reads_the_policy_with_or_without_a_udf(database, layout, distance):
    container = vector_container(database, layout, distance)
    assert len(ranges(container)) == (5 if layout == "five ranges" else 1)
    expected = {id: DISTANCES[distance](v, QUERY_VECTOR) for id, v in VECTORS.items()}

    query = "SELECT c.id, VectorDistance(c.v, [1, 1]) AS d FROM c"
    plain, called = both_ways(container, query, enable_cross_partition_query=True)
    for rows in (plain, called):
        assert {r["id"]: r["d"] for r in rows} == pytest.approx(expected, rel=1e-6)
    assert sorted(plain, key=lambda r: r["id"]) == sorted(called, key=lambda r: r["id"])

    # In one logical partition (a query the gateway answers without a plan).
    for i, id in enumerate(VECTORS):
        plain, called = both_ways(container, query, partition_key=f"p{i}")
        assert plain == called
        assert [r["d"] for r in called] == pytest.approx([expected[id]], rel=1e-6)

    # Ordered by the distance: the policy's function decides the order too.
    ordered = (
        "SELECT TOP 4 c.id, VectorDistance(c.v, [1, 1]) AS d FROM c "
        "ORDER BY VectorDistance(c.v, [1, 1])"
    )
    nearest = sorted(expected, key=expected.get, reverse=CLOSER_FIRST[distance])[:4]
    plain, called = both_ways(container, ordered, enable_cross_partition_query=True)
    assert [r["id"] for r in plain] == nearest
    assert called == plain
    assert [r["d"] for r in called] == pytest.approx([expected[i] for i in nearest], rel=1e-6)


# German stems "Haus", "Häuser" and "Hause" alike ("haus"); English keeps "häuser" apart
# from "haus". The documents' words, in the German analysis: which are the term.
TEXTS = {
    "t1": "Das Haus und das Haus und das Hause",
    "t2": "Häuser bauen",
    "t3": "Kein Treffer hier",
    "t4": "Ein Garten hinter dem Haus und vor dem See",
}
MATCHES = {id: sum(w in ("Haus", "Häuser", "Hause") for w in text.split()) for id, text in TEXTS.items()}


def bm25(tf, words, documents, total_words, hits):
    """Okapi BM25 of one term, Lucene's idf, k1 = 1.2, b = 0.75."""
    if tf == 0:
        return 0.0
    idf = math.log(1 + (documents - hits + 0.5) / (hits + 0.5))
    length = 1 - 0.75 + 0.75 * words / (total_words / documents)
    return idf * tf * 2.2 / (tf + 1.2 * length)


def text_container(database, layout):
    container = made(
        database,
        layout,
        full_text_policy={
            "defaultLanguage": "de-DE",
            "fullTextPaths": [{"path": "/text", "language": "de-DE"}],
        },
        indexing_policy={"fullTextIndexes": [{"path": "/text"}]},
    )
    for i, (id, text) in enumerate(TEXTS.items()):
        container.create_item({"id": id, "pk": f"p{i}", "text": text})
    return container


@pytest.mark.parametrize("layout", LAYOUTS)
def test_full_text_functions_read_the_language_with_or_without_a_udf(database, layout):
    container = text_container(database, layout)
    found = sorted(id for id, n in MATCHES.items() if n > 0)
    assert found == ["t1", "t2", "t4"]

    contains = "SELECT c.id FROM c WHERE FullTextContains(c.text, 'Häuser')"
    plain, called = both_ways(container, contains, enable_cross_partition_query=True)
    assert sorted(r["id"] for r in plain) == found
    assert sorted(r["id"] for r in called) == found
    for i, id in enumerate(TEXTS):
        plain, called = both_ways(container, contains, partition_key=f"p{i}")
        assert plain == called == ([{"id": id}] if id in found else [])

    # Ranked by BM25 over every document in scope (German stems).
    words = {id: len(text.split()) for id, text in TEXTS.items()}
    total, hits = sum(words.values()), len(found)
    score = {id: bm25(MATCHES[id], words[id], len(TEXTS), total, hits) for id in TEXTS}
    ranked = sorted(found, key=score.get, reverse=True)
    assert ranked == ["t1", "t2", "t4"], score  # distinct scores: t1 3 hits, t2 short
    query = "SELECT TOP 3 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'Häuser')"
    plain, called = both_ways(container, query, enable_cross_partition_query=True)
    assert [r["id"] for r in plain] == ranked
    assert [r["id"] for r in called] == ranked

    # In one logical partition the statistics are that partition's: one document.
    for i, id in enumerate(TEXTS):
        plain, called = both_ways(container, query, partition_key=f"p{i}")
        assert plain == called == [{"id": id}]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_clock_is_the_same_with_or_without_a_udf(database, clock, layout):
    container = made(database, layout)
    for i in range(4):
        container.create_item({"id": f"i{i}", "pk": f"p{i}"})
    now = clock.advance(12_345)
    at = datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
    query = (
        "SELECT c.id, GetCurrentTimestamp() AS ms, GetCurrentDateTime() AS dt, "
        "GetCurrentTicks() AS ticks FROM c"
    )
    plain, called = both_ways(container, query, enable_cross_partition_query=True)
    expected = {
        "ms": now * 1000,
        "dt": at.strftime("%Y-%m-%dT%H:%M:%S.0000000Z"),
        "ticks": now * 10_000_000,
    }
    for rows in (plain, called):
        assert sorted(r["id"] for r in rows) == ["i0", "i1", "i2", "i3"]
        for row in rows:
            assert {k: row[k] for k in expected} == expected
    plain, called = both_ways(container, query, partition_key="p2")
    assert plain == called == [{"id": "i2", **expected}]
