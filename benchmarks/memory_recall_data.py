"""Build ``benchmarks/data/memory_recall.json``: long multi-session conversations with questions and their evidence.

LoCoMo, the public long-conversation benchmark, carries no licence, so this set is built here instead, in its
format (see ``benchmarks/memory_recall.py``), deterministically from a seed: the same command writes the same file.

Each conversation is two friends talking over 16 sessions a week or two apart. A session mixes small talk (greetings,
reactions, questions back: most of the turns, as in real chat) with life events told in the speaker's own words
("I finally adopted a dog! His name is Pepper.") and later follow-ups on them ("Pepper chewed my shoes again").
Questions are asked the way a person asks about someone else, in the third person and in other words than the turn
("What is the name of Ana's pet?"), in four LoCoMo categories:

- single-hop (4): one turn holds the answer;
- temporal (2): when something happened; the answer is the session's date, the evidence the turn that told it;
- multi-hop (1): the answer spans turns of several sessions (every hobby a person took up, every city visited);
- open-domain (3): a question about the person that the turns imply without stating ("What might Ana do on a
  free weekend?" over the turns about her hobbies).

The templates below are the data, not a tuning of junior: nothing in the plugin reads them.

    python benchmarks/memory_recall_data.py [--conversations 6] [--seed 20261203] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "memory_recall.json"
SESSIONS = 16

NAMES = ["Ana", "Bruno", "Chloe", "Dmitri", "Esther", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Keisha", "Luca",
         "Mei", "Nikolai", "Olu", "Priya"]
PETS = [("dog", ["Pepper", "Biscuit", "Rocky"]), ("cat", ["Miso", "Luna", "Tiger"]),
        ("rabbit", ["Clover", "Thumper"]), ("parrot", ["Kiwi", "Mango"])]
HOBBIES = [("pottery", "a pottery class", "my first bowl came out lopsided but I love it"),
           ("climbing", "a bouldering gym", "my forearms are sore from the wall"),
           ("violin", "violin lessons", "my neighbours are being patient with the squeaks"),
           ("baking", "a sourdough course", "my starter is finally bubbling"),
           ("chess", "a chess club", "I lost every game but learned a lot"),
           ("gardening", "a community garden plot", "the tomatoes are coming in nicely"),
           ("running", "a running group", "we did ten kilometres along the river"),
           ("painting", "a watercolour workshop", "I painted the harbour at sunset")]
CITIES = [("Lisbon", "the tiled streets and the custard tarts"), ("Kyoto", "the temples and the quiet gardens"),
          ("Montreal", "the bagels and the old port"), ("Marrakesh", "the markets and the mint tea"),
          ("Oslo", "the fjord ferries and the museums"), ("Mexico City", "the murals and the tacos"),
          ("Edinburgh", "the castle and the hills"), ("Hanoi", "the scooters and the noodle soup")]
JOBS = [("nurse", "the children's hospital"), ("teacher", "a primary school"), ("engineer", "a wind farm company"),
        ("librarian", "the city library"), ("chef", "a small bistro"), ("designer", "a furniture studio")]
FAMILY = [("sister", "Lena"), ("brother", "Omar"), ("grandmother", "Rosa"), ("cousin", "Tariq"), ("aunt", "Maya")]
FOODS = ["spicy ramen", "lemon cake", "mushroom risotto", "fish tacos", "lentil soup", "pistachio ice cream"]
BOOKS = [("a mystery novel", "The Lighthouse Keeper"), ("a book about birds", "Wings Over Water"),
         ("a memoir", "Salt and Stone"), ("a science fiction novel", "The Ninth Orbit")]

SMALL_TALK = [
    "Hey {other}! Good to hear from you.", "Hi {other}, how have you been?", "That sounds amazing!",
    "Oh wow, I didn't expect that.", "Haha, that's so you.", "I know what you mean.", "Tell me more!",
    "That must have been tiring.", "I'm so happy for you.", "Same here, honestly.", "Things have been busy lately.",
    "Work has been a lot this week.", "I need a holiday soon.", "Let's catch up again soon!", "Talk soon, take care!",
    "Thanks for listening, it means a lot.", "You always know what to say.", "How is everyone at home?",
    "The weather has been strange lately.", "I slept badly last night.", "Good luck with everything!",
]


def _dates(rng: random.Random) -> list[datetime]:
    day = datetime(2023, 1, 9, 10, 0) + timedelta(days=rng.randrange(0, 60))
    out = []
    for _ in range(SESSIONS):
        day += timedelta(days=rng.randint(7, 16), hours=rng.randint(-3, 8))
        out.append(day)
    return out


def _date_text(day: datetime) -> str:
    hour = day.hour % 12 or 12
    return f"{hour}:{day.minute:02d} {'am' if day.hour < 12 else 'pm'} on {day.day} {day:%B}, {day.year}"


def _day(day: datetime) -> str:
    return f"{day.day} {day:%B} {day.year}"


class Person:
    """What one speaker will tell over the conversation, drawn from the seed."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name = name
        kind, names = rng.choice(PETS)
        self.pet = (kind, rng.choice(names))
        self.hobbies = rng.sample(HOBBIES, 3)
        self.cities = rng.sample(CITIES, 2)
        self.job = rng.choice(JOBS)
        self.relative = rng.choice(FAMILY)
        self.food = rng.choice(FOODS)
        self.book = rng.choice(BOOKS)


def _events(person: Person, rng: random.Random) -> list[tuple[int, str, list[tuple[str, str, int]]]]:
    """(session, text, questions) of everything ``person`` tells: each question as (question, answer, category);
    the session is where the turn goes. Multi-hop and open-domain questions are added by the caller."""
    n = person.name
    kind, pet = person.pet
    job, place = person.job
    relative, rname = person.relative
    book_kind, title = person.book
    sessions = rng.sample(range(SESSIONS), 10)
    after = max(sessions[3], sessions[0]) + 1
    next_trip = after if after < SESSIONS else sessions[3]
    return [
        (sessions[0], f"Big news: I adopted a {kind} last weekend! I named him {pet}.",
         [(f"What is the name of {n}'s pet?", pet, 4), (f"When did {n} get a new animal at home?", "", 2)]),
        (sessions[1], f"I started {person.hobbies[0][1]} this month, {person.hobbies[0][2]}.",
         [(f"When did {n} take up {person.hobbies[0][0]}?", "", 2)]),
        (sessions[2], f"I finally signed up for {person.hobbies[1][1]}; {person.hobbies[1][2]}.",
         [(f"How is {n} getting on with {person.hobbies[1][0]}?", person.hobbies[1][2], 4)]),
        (sessions[3], f"I just got back from {person.cities[0][0]}! I loved {person.cities[0][1]}.",
         [(f"What did {n} enjoy on the trip to {person.cities[0][0]}?", person.cities[0][1], 4),
          (f"When did {n} travel to {person.cities[0][0]}?", "", 2)]),
        (sessions[4], f"I got the job! I'm going to work as a {job} at {place}.",
         [(f"Where does {n} work now?", place, 4), (f"When did {n} start the new position?", "", 2)]),
        (sessions[5], f"My {relative} {rname} is staying with me for two weeks, it's been lovely.",
         [(f"Who came to stay with {n}?", f"{relative} {rname}", 4)]),
        (sessions[6], f"{pet} learned a new trick, he fetches my slippers now!",
         [(f"What trick did {n}'s {kind} learn?", "fetching slippers", 4)]),
        (sessions[7], f"I'm reading {book_kind} called {title}, I can't put it down.",
         [(f"Which book is {n} reading?", title, 4)]),
        (sessions[8], f"I cooked {person.food} for the first time and it was a hit.",
         [(f"What dish did {n} make?", person.food, 4)]),
        (sessions[9], f"I also picked up {person.hobbies[2][0]} recently: {person.hobbies[2][2]}.",
         [(f"What new activity did {n} pick up most recently?", person.hobbies[2][0], 4)]),
        (next_trip, f"Next I'm off to {person.cities[1][0]}: I want to see {person.cities[1][1]}.",
         [(f"Which city did {n} plan to visit next?", person.cities[1][0], 4)]),
    ]


def conversation(number: int, rng: random.Random) -> dict[str, Any]:
    a, b = rng.sample(NAMES, 2)
    people = {a: Person(a, rng), b: Person(b, rng)}
    dates = _dates(rng)
    told: dict[int, list[tuple[str, str, list[tuple[str, str, int]], str]]] = {i: [] for i in range(SESSIONS)}
    tags: dict[str, list[str]] = {}
    for name, person in people.items():
        for session, text, qs in _events(person, rng):
            tag = f"{name}:{len(tags.setdefault(name, []))}"
            tags[name].append(tag)
            told[session].append((name, text, qs, tag))
    out: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    where: dict[str, tuple[str, int]] = {}
    qa: list[dict[str, Any]] = []
    for s in range(SESSIONS):
        turns: list[dict[str, Any]] = []
        speakers = [a, b] if s % 2 == 0 else [b, a]

        def say(speaker: str, text: str, turns: list[dict[str, Any]] = turns, s: int = s) -> str:
            dia = f"D{s + 1}:{len(turns) + 1}"
            turns.append({"speaker": speaker, "dia_id": dia, "text": text})
            return dia

        say(speakers[0], rng.choice(SMALL_TALK[:2]).format(other=speakers[1]))
        say(speakers[1], rng.choice(SMALL_TALK[:2]).format(other=speakers[0]))
        for name, text, qs, tag in told[s]:
            other = b if name == a else a
            for _ in range(rng.randint(1, 3)):
                say(rng.choice(speakers), rng.choice(SMALL_TALK[2:]).format(other=other))
            dia = say(name, text)
            where[tag] = (dia, s)
            say(other, rng.choice(SMALL_TALK[2:10]).format(other=name))
            for question, answer, category in qs:
                qa.append({"question": question, "answer": answer or _day(dates[s]), "evidence": [dia],
                           "category": category})
        for _ in range(rng.randint(2, 5)):
            say(rng.choice(speakers), rng.choice(SMALL_TALK[2:]).format(other=speakers[1]))
        say(speakers[0], rng.choice(SMALL_TALK[-8:-6]).format(other=speakers[1]))
        out[f"session_{s + 1}_date_time"] = _date_text(dates[s])
        out[f"session_{s + 1}"] = turns
    for name, person in people.items():
        hobbies = [where[f"{name}:{i}"][0] for i in (1, 2, 9)]
        qa.append({"question": f"Which hobbies has {name} taken up?",
                   "answer": ", ".join(h[0] for h in person.hobbies), "evidence": hobbies, "category": 1})
        cities = [where[f"{name}:{i}"][0] for i in (3, 10)]
        qa.append({"question": f"Which places has {name} travelled to or planned to visit?",
                   "answer": ", ".join(c[0] for c in person.cities), "evidence": cities, "category": 1})
        qa.append({"question": f"What might {name} enjoy doing on a free weekend?",
                   "answer": f"{person.hobbies[0][0]} or {person.hobbies[1][0]}", "evidence": hobbies[:2],
                   "category": 3})
        qa.append({"question": f"Would {name} be a good person to ask for animal care advice?",
                   "answer": f"probably, they have a {person.pet[0]}", "evidence": [where[f"{name}:0"][0],
                                                                                   where[f"{name}:6"][0]],
                   "category": 3})
    out["qa"] = qa
    out["sample_id"] = f"junior-recall-{number + 1}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=6)
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    data = [conversation(i, rng) for i in range(args.conversations)]
    args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    turns = sum(len(v) for c in data for k, v in c.items() if k.startswith("session_") and isinstance(v, list))
    print(f"wrote {args.out}: {len(data)} conversations, {turns} turns, {sum(len(c['qa']) for c in data)} questions")


if __name__ == "__main__":
    main()
