"""AsyncHippoRAG: the synchronous client's methods as coroutines on a bounded pool. Concurrent queries in one
event loop give the synchronous client's results, the loop keeps running while they wait, a write to another
namespace runs beside them, and errors are the synchronous client's."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from hippo_neo4j import AsyncHippoRAG
from hippo_neo4j.errors import ConfigError, HippoError
from hippo_neo4j.extract import LockedExtractor
from hippo_neo4j.extract.offline import OfflineExtractor
from hippo_neo4j.retrieve import MODES

from .test_core import PATH_CORPUS


def comparable(result):
    """A result as the synchronous client returns it, but its time."""
    return result.model_dump(exclude={"elapsed_ms"})


def test_50_concurrent_queries_and_an_index_in_one_loop_equal_the_sync_client(on_musique10, musique10, connection, driver):
    small, _ = musique10
    memory = on_musique10(extractor=OfflineExtractor())  # query entities from spaCy: called from several threads
    questions = [q.question for q in small.questions]
    calls = [(questions[i % len(questions)], name) for i, name in enumerate(list(MODES) * 4)][:50]
    assert {name for _, name in calls} == set(MODES)
    for text, name in calls[: len(MODES.names())]:  # the first query of a namespace scores passages on the server, the
        memory.query(text, mode=name, top_k=5)  # next ones with the vectors the client then holds (1e-9 apart)
    expected = [comparable(memory.query(text, mode=name, top_k=5)) for text, name in calls]
    other = f"t-async-{uuid.uuid4().hex[:8]}"

    async def main():
        in_flight, most, ticks_while_waiting = 0, 0, 0
        done = asyncio.Event()

        async def heartbeat():
            nonlocal ticks_while_waiting
            while not done.is_set():
                await asyncio.sleep(0.005)
                ticks_while_waiting += in_flight > 0

        async def query(text, name):
            nonlocal in_flight, most
            in_flight += 1
            most = max(most, in_flight)
            try:
                return await hippo.query(text, mode=name, top_k=5)
            finally:
                in_flight -= 1

        async with AsyncHippoRAG(memory=memory, workers=4) as hippo, \
                AsyncHippoRAG(connection, namespace=other, driver=driver, extractor=None) as writer:
            beat = asyncio.create_task(heartbeat())
            try:
                *results, report = await asyncio.gather(*(query(t, n) for t, n in calls), writer.index(PATH_CORPUS))
            finally:
                done.set()
                await beat
            stats = await writer.stats()
            await writer.drop_namespace()
        assert isinstance(memory.extractor, LockedExtractor)
        return results, report, stats, most, ticks_while_waiting

    results, report, stats, most, ticks = asyncio.run(main())
    assert [comparable(r) for r in results] == expected
    assert report.indexed == len(PATH_CORPUS) and stats["passages"] == len(PATH_CORPUS)
    assert most > 1  # the queries overlapped
    assert ticks > 0  # and the loop ran other work while they waited


def test_errors_are_the_sync_clients_and_a_write_lock_is_shared(on_musique10):
    memory = on_musique10()

    async def main():
        async with AsyncHippoRAG(memory=memory) as hippo:
            with pytest.raises(ConfigError, match="Unknown mode 'nope'"):
                await hippo.query("anything", mode="nope")
            with pytest.raises(ConfigError, match="top_k must be an integer from 1 to 200"):
                await hippo.query("anything", top_k=0)
            assert (await hippo.stats())["passages"] == memory.stats()["passages"]
            assert [link.phrase for link in await hippo.link_entities(["Beatles"])] == \
                [link.phrase for link in memory.link_entities(["Beatles"])]

    asyncio.run(main())
    with pytest.raises(ConfigError, match="not both"):
        AsyncHippoRAG(memory=memory, namespace="other")
    assert issubclass(ConfigError, HippoError)
