"""Per-user memory in one namespace: a user's queries with filters={"user": ...} against a namespace of that user alone.

Indexes --users synthetic users x 5 short passages (metadata user=u0, u1, ...) into `bench-users-shared` with the
offline extractor, and the same 5 passages of one user (--user) alone into `bench-users-alone`; then asks that
user's --queries questions --rounds times in each namespace, per mode (the two namespaces taking turns, round by
round), and prints per mode the query p50 in each, their ratio, how many rankings are identical (the passage ids
in order) and how many passages the filter left. Run it on a server of its own (`HIPPO_NEO4J_PORT` ...).
"""

from __future__ import annotations

import random

from common import parser, percentile, say, table, timed, write_json

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import ConnectionSettings
from hippo_neo4j.db import connect
from hippo_neo4j.extract import make_extractor
from hippo_neo4j.models import PassageIn

FIRST = ["Ada", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kemi", "Luca",
         "Mira", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zofia", "Anders", "Beatriz", "Cyrus", "Daria"]
LAST = ["Abara", "Bergstrom", "Castillo", "Dubois", "Eriksen", "Fontaine", "Gallo", "Haddad", "Ivanova", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Sato", "Tanaka",
        "Ueda", "Varga", "Weber", "Xu", "Yilmaz", "Zhang", "Almeida", "Brennan", "Costa", "Delgado", "Eze", "Ferrari",
        "Grant", "Horvat", "Ibsen", "Jovanovic", "Kline", "Laurent", "Mendes", "Novak"]
CITIES = ["Lisbon", "Oslo", "Nairobi", "Osaka", "Toronto", "Lyon", "Krakow", "Valencia", "Austin", "Seoul", "Porto",
          "Tallinn", "Accra", "Leeds", "Hamburg", "Quito"]
COMPANIES = ["Northwind Labs", "Bluefin Robotics", "Cedar Health", "Orbit Freight", "Lumen Foods", "Granite Bank",
             "Kestrel Games", "Harbor Energy"]
JOBS = ["nurse", "architect", "chemist", "pilot", "teacher", "surgeon", "lawyer", "baker"]
PETS = ["Biscuit", "Pepper", "Mochi", "Rufus", "Juniper", "Olive", "Comet", "Toffee"]
SPORTS = ["tennis", "chess", "volleyball", "squash", "rowing", "badminton"]
BOOKS = [("Middlemarch", "George Eliot"), ("The Overstory", "Richard Powers"), ("Beloved", "Toni Morrison"),
         ("Solaris", "Stanislaw Lem"), ("Kindred", "Octavia Butler"), ("Dune", "Frank Herbert")]


def user_passages(u: int) -> tuple[list[PassageIn], list[str]]:
    """User ``u``'s 5 passages (metadata user=u<u>) and 5 questions about them (the last one two hops)."""
    r = random.Random(u)
    name = f"{FIRST[u % len(FIRST)]} {LAST[(u // len(FIRST)) % len(LAST)]}"
    sister = f"{r.choice(FIRST)} {name.split()[1]}"
    city, far = r.sample(CITIES, 2)
    company, job, pet, sport, friend = r.choice(COMPANIES), r.choice(JOBS), r.choice(PETS), r.choice(SPORTS), r.choice(FIRST)
    book, author = r.choice(BOOKS)
    texts = [
        f"{name} moved to {city} in {r.randint(2010, 2024)} to work at {company}.",
        f"{name}'s sister {sister} is a {job} in {far}.",
        f"{name} adopted a dog named {pet} from a shelter in {city}.",
        f"{name} plays {sport} every Sunday with {friend}.",
        f"{name} is reading {book} by {author} for a book club.",
    ]
    passages = [PassageIn(id=f"u{u}-{i}", title="", text=t, metadata={"user": f"u{u}"}) for i, t in enumerate(texts)]
    questions = [f"Where does {name} work?", f"What is the name of {name}'s dog?", f"Which sport does {name} play?",
                 f"Who wrote the book {name} is reading?", f"In which city does the sister of {name} work?"]
    return passages, questions


MODES = ("dense", "bm25", "hipporag1", "hipporag2", "entity-ppr", "hybrid")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--users", type=int, default=1000)
    p.add_argument("--user", type=int, default=500, help="the user whose queries are timed")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--top-k", type=int, default=5)
    p.add_argument("--cold", type=int, default=10, help="then the first query of this many other users, per mode")
    p.add_argument("--keep", action="store_true", help="keep the namespaces (and reuse them on the next run)")
    p.add_argument("--json", default="bench/out/users.json")
    args = p.parse_args()
    connection = ConnectionSettings.from_env()
    driver = connect(connection)
    extractor = make_extractor("offline")
    shared = HippoRAG(connection, namespace="bench-users-shared", driver=driver, extractor=extractor)
    alone = HippoRAG(connection, namespace="bench-users-alone", driver=driver, extractor=extractor)
    mine, questions = user_passages(args.user)
    everyone = [x for u in range(args.users) for x in (user_passages(u)[0] if u != args.user else mine)]
    result: dict = {"users": args.users, "passages": len(everyone), "user": f"u{args.user}", "rounds": args.rounds}
    result["index_shared_s"] = timed(lambda: shared.index(everyone)) / 1000
    result["index_alone_s"] = timed(lambda: alone.index(mine)) / 1000
    say(f"indexed {len(everyone)} passages in {result['index_shared_s']:.0f} s, the user's {len(mine)} alone in "
        f"{result['index_alone_s']:.1f} s")
    asked = [(q, list(extractor.query_entities(q))) for q in questions]
    filters = {"user": f"u{args.user}"}
    runs = {"shared": lambda q, e, mode: shared.query(q, mode=mode, top_k=args.top_k, entities=e, filters=filters),
            "alone": lambda q, e, mode: alone.query(q, mode=mode, top_k=args.top_k, entities=e)}
    for q, e in asked:  # warm: models, projections, passage vectors
        for mode in MODES:
            for run in runs.values():
                run(q, e, mode)
    modes: dict = {}
    for mode in MODES:
        ms: dict = {"shared": [], "alone": []}
        same, left = 0, set()
        for _ in range(args.rounds):
            for q, e in asked:
                found = {}
                for where, run in runs.items():
                    r = []
                    ms[where].append(timed(lambda: r.append(run(q, e, mode))))
                    found[where] = [x.id for x in r[0].passages]
                    left.add(r[0].filtered_passages)
                same += found["shared"] == found["alone"]
        p50 = {where: percentile(v, 50) for where, v in ms.items()}
        modes[mode] = {"shared_p50_ms": p50["shared"], "alone_p50_ms": p50["alone"],
                       "ratio": p50["shared"] / p50["alone"], "identical": same, "rankings": args.rounds * len(asked),
                       "filtered_passages": sorted(x for x in left if x is not None)}
        say(f"{mode}: {modes[mode]}")
    result["modes"] = modes
    # a user's first graph query projects the graph the user's passages induce, kept until they change: the first
    # question of --cold other users, each mode in turn, the same again at once, and again after a write of
    # another user's passage
    cold: dict = {mode: {"first": [], "again": [], "after_a_write": []} for mode in MODES}
    users = [x for x in range(args.users) if x != args.user][: args.cold]
    shared.index([PassageIn(id="bench-users-write", title="", text="A write that moves the namespace's version.")])
    for step in ("first", "again", "after_a_write"):
        if step == "after_a_write":
            shared.index([PassageIn(id="bench-users-write-2", title="", text="Another user's write.",
                                    metadata={"user": "someone else"})])
        for u in users:
            question = user_passages(u)[1][0]
            entities = list(extractor.query_entities(question))
            for mode in MODES:
                cold[mode][step].append(timed(lambda: shared.query(question, mode=mode, top_k=args.top_k,
                                                                     entities=entities, filters={"user": f"u{u}"})))
    shared.delete(["bench-users-write", "bench-users-write-2"])
    result["cold"] = {mode: {step: percentile(v, 50) for step, v in steps.items()} for mode, steps in cold.items()}
    say("a user's first query / the same again / again after another user's write, p50 ms: " + ", ".join(
        f"{m} {v['first']:.1f} / {v['again']:.1f} / {v['after_a_write']:.1f}" for m, v in result["cold"].items()))
    lines = table(["mode", "p50 shared + filter (ms)", "p50 alone (ms)", "ratio", "identical rankings"],
                  [[m, v["shared_p50_ms"], v["alone_p50_ms"], f"{v['ratio']:.2f}", f"{v['identical']} / {v['rankings']}"]
                   for m, v in modes.items()])
    say("\n".join(lines))
    write_json(args.json, result)
    if not args.keep:
        shared.drop_namespace()
        alone.drop_namespace()
    driver.close()


if __name__ == "__main__":
    main()
