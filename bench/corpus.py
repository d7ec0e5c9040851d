"""Seeded synthetic conversational memory: short bullets a person's AI would remember.

Texts combine many templates with names, places, tools, dates and numbers. Slot values are drawn
with Zipf-like weights over a long-tail vocabulary (common words recur everywhere, rare names and
identifiers in a handful of chunks), so FTS terms have the skewed frequency of real memory.
The same seed always gives the same chunks and the same queries.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate

FIRST = ("Ana Ben Chloe Dmitri Elena Farid Grace Hiro Ines Jonas Kemi Lars Maya Nadia Omar Priya Quentin Rosa "
         "Sven Tomas Uma Victor Wen Ximena Yusuf Zoe Alice Bruno Carmen Diego Emma Felix Hana Ivan Julia Kai "
         "Leila Marco Nina Oscar Paula Raj Sara Theo Vera Will Yara Zaid Mateo Aiko").split()
PLACES = ("Lisbon Berlin Nairobi Osaka Toronto Lyon Porto Denver Austin Seoul Lagos Quito Oslo Krakow Hanoi "
          "Dublin Bogota Tallinn Accra Valencia Montreal Zurich Bristol Leeds Kyoto Cairo Lima Perth Tbilisi "
          "Riga Sofia Gdansk Bordeaux Nantes Turin Seville Malmo Bergen Utrecht Ghent").split()
TOOLS = ("Postgres SQLite Redis Kafka Django Flask FastAPI React Svelte Vue Terraform Ansible Kubernetes Docker "
         "Grafana Prometheus Sentry Figma Notion Linear Jira Slack Rust Go TypeScript Python Elixir Pandas Polars "
         "DuckDB Airflow dbt Vite Webpack Nginx Caddy Stripe Twilio Supabase Firebase Vercel Netlify pytest "
         "Playwright Cypress Celery RabbitMQ Elasticsearch Meilisearch ClickHouse Tailwind Qt GTK").split()
TOPICS = ("billing onboarding search checkout analytics invoices dashboard migration pricing roadmap hiring "
          "payroll reporting notifications permissions auth caching backups logging export import sync "
          "newsletter accessibility localisation refunds subscriptions telemetry deployment staging "
          "inventory shipping scheduling calendar chat mobile offline").split()
FOODS = ("ramen tacos sushi falafel pho dumplings curry paella risotto pizza bibimbap shakshuka ceviche "
         "croissants bagels kimchi tapas empanadas").split()
HOBBIES = ("climbing bouldering cycling sailing pottery chess running swimming photography gardening "
           "woodworking baking knitting surfing hiking birdwatching").split()
MONTHS = "January February March April May June July August September October November December".split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
ADJ = ("slow flaky fast cheaper expensive reliable broken stable noisy quiet urgent tricky simple "
       "verbose strict lenient stale fresh brittle solid").split()
SYLL = "ka lo mi ra ben tor vel an is qu el dor fin gar hol jun kes lum mar nor pel ros sul tam vin wey zor".split()
KINDS = ("fact", "fact", "fact", "fact", "preference", "plan", "decision")

TEMPLATES = (
    "{name} prefers {tool} over {tool2} for {topic} work because it is less {adj}.",
    "Decided with {name} on {day} to move the {topic} service from {tool} to {tool2}.",
    "The {topic} job in {tool} has been {adj} since {month} {date}; ticket {ticket} tracks it.",
    "{name} {surname} lives in {place} and is usually online after {hour} local time.",
    "Meeting with {name} about {topic} moved to {day} {month} {date} at {hour}:00.",
    "Remember that {name} is allergic to {food}; book somewhere else for the team dinner in {place}.",
    "User likes {food} and goes {hobby} most weekends near {place}.",
    "The staging database for {topic} runs {tool} {version} on port {port}.",
    "{name} said the {topic} budget for Q{quarter} is {amount} euros, down from {amount2}.",
    "Prefer short answers with code first; {name} asked for {tool} examples, not {tool2}.",
    "Flight to {place} on {month} {date}, booking reference {code}, seat {seat}.",
    "Bug {ticket}: {topic} export fails when the file is larger than {size} MB in {tool}.",
    "{name} recommended the book {surname} wrote about {topic}; borrow it before {month}.",
    "We agreed the {topic} API returns at most {limit} items per page and uses cursor pagination.",
    "The {tool} cluster in {place} was upgraded to {version} on {month} {date} without downtime.",
    "{name} is the owner of the {topic} roadmap and wants a review every {day}.",
    "Use {tool} for {topic} experiments; the {tool2} prototype was too {adj} at {amount} requests per second.",
    "Password rotation for the {topic} service is due every {limit} days; {name} handles it.",
    "The user's daughter {name} started {hobby} lessons in {place} this {month}.",
    "Note from the call with {name} {surname}: {topic} launch slips to week {week} because of {tool}.",
    "Latency of the {topic} endpoint dropped from {amount} ms to {amount2} ms after adding {tool}.",
    "{name} moved from {place} to {place2} in {year} and now works on {topic} at a startup.",
    "Keep {topic} invoices in the shared folder {code}; {name} reconciles them monthly.",
    "Reminder: renew the {tool} licence before {month} {date}, it costs {amount} per seat.",
    "The {adj} test in {tool} is test_{topic}_{ticketnum}; rerun it twice before blaming the code.",
)


TAILS = (
    " Follow up with {name} next {day}.",
    " {name} thinks the {tool} docs explain this better than the {topic} wiki does, and wants a short summary"
    " before the review on {month} {date}.",
    " Context: this came up while debugging {topic} in {place} with {name} {surname}.",
    " Not urgent.",
    " Also mentioned that the {topic} team in {place2} is hiring {limit} people next year and that {tool2}"
    " knowledge is a plus for every one of those roles.",
)


def _zipf_weights(n: int, s: float = 1.05) -> list[float]:
    return list(accumulate(1.0 / (rank ** s) for rank in range(1, n + 1)))


class Vocabulary:
    """Slot values with Zipf weights; ``surnames`` is a long synthetic tail (rare terms)."""

    def __init__(self, rng: random.Random, tail: int = 20_000) -> None:
        self.surnames = sorted({self._word(rng) for _ in range(tail)})
        rng.shuffle(self.surnames)
        self.lists = {"name": FIRST, "place": PLACES, "tool": TOOLS, "topic": TOPICS, "food": FOODS,
                      "hobby": HOBBIES, "month": MONTHS, "day": DAYS, "adj": ADJ, "surname": self.surnames}
        self._cum = {key: _zipf_weights(len(values)) for key, values in self.lists.items()}

    @staticmethod
    def _word(rng: random.Random) -> str:
        return "".join(rng.choice(SYLL) for _ in range(rng.randint(2, 4))).capitalize()

    def pick(self, rng: random.Random, key: str) -> str:
        return rng.choices(self.lists[key], cum_weights=self._cum[key])[0]


def _slots(rng: random.Random, vocab: Vocabulary) -> dict[str, str]:
    slots = {key: vocab.pick(rng, key) for key in vocab.lists}
    slots.update(
        tool2=vocab.pick(rng, "tool"), place2=vocab.pick(rng, "place"),
        date=str(rng.randint(1, 28)), hour=str(rng.randint(7, 21)), quarter=str(rng.randint(1, 4)),
        week=str(rng.randint(1, 52)), year=str(rng.randint(2015, 2025)), port=str(rng.randint(1024, 65000)),
        version=f"{rng.randint(1, 17)}.{rng.randint(0, 12)}", amount=str(rng.randint(2, 900) * 10),
        amount2=str(rng.randint(2, 900) * 10), size=str(rng.choice((5, 10, 25, 50, 100, 250, 500))),
        limit=str(rng.choice((20, 30, 50, 90, 100, 200))), seat=f"{rng.randint(1, 40)}{rng.choice('ABCDEF')}",
        ticketnum=str(rng.randint(100, 99999)),
        ticket=f"{rng.choice(('INC', 'BUG', 'OPS', 'WEB'))}-{rng.randint(100, 99999)}",
        code="".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6)),
    )
    return slots


@dataclass(frozen=True)
class Chunk:
    text: str
    kind: str
    project: str | None
    tier: str


MAX_WORDS = 40
PROJECTS = tuple(f"project-{i:02d}" for i in range(24))
TIERS = ("first_party",) * 6 + ("capture",) * 3 + ("import",) * 2 + ("pinned",)


def chunks(n: int, seed: int = 7) -> Iterator[Chunk]:
    """``n`` memory bullets: ~20% global (project NULL), ~3% exact duplicates of earlier ones."""
    rng = random.Random(seed)
    vocab = Vocabulary(random.Random(seed + 1))
    recent: list[str] = []
    for i in range(n):
        if recent and rng.random() < 0.03:
            text = rng.choice(recent)
        else:
            slots = _slots(rng, vocab)
            text = rng.choice(TEMPLATES).format(**slots)
            tail = rng.choice(TAILS).format(**slots) if rng.random() < 0.4 else ""
            if len((text + tail).split()) <= MAX_WORDS:
                text += tail
            recent = (recent + [text])[-500:]
        project = None if rng.random() < 0.2 else PROJECTS[min(int(rng.paretovariate(1.2)) - 1, 23)]
        yield Chunk(text, rng.choice(KINDS), project, TIERS[i % len(TIERS)])


PARAPHRASES = (
    "what food should we avoid for the team dinner",
    "which database did we pick for the service",
    "when is my next flight and what seat",
    "who owns the product plan",
    "how fast did the endpoint get after the change",
    "what does my kid do after school",
    "what sport does the user do on weekends",
    "where did my colleague relocate",
    "how much money is left for next quarter",
    "which flaky tests should be rerun",
    "how often must credentials be changed",
    "what format should answers have",
    "when does the software subscription expire",
    "how many results does the api send back per page",
    "which server version runs in the test environment",
)


QUERY_SHAPES = ("rare", "common", "mixed", "paraphrase")


def query_shapes(n: int = 200) -> list[str]:
    return [QUERY_SHAPES[i % len(QUERY_SHAPES)] for i in range(n)]


def queries(n: int = 200, seed: int = 11) -> list[str]:
    """Rare-term, common-term and mixed keyword queries plus natural-language paraphrases."""
    rng = random.Random(seed)
    vocab = Vocabulary(random.Random(7 + 1))  # the corpus vocabulary: rare terms really occur
    out: list[str] = []
    for shape in query_shapes(n):
        if shape == "rare":
            out.append(f"{rng.choice(vocab.surnames[200:6000])} {vocab.pick(rng, 'topic')}")
        elif shape == "common":
            out.append(" ".join(vocab.pick(rng, k) for k in rng.sample(("tool", "topic", "name", "adj"), 3)))
        elif shape == "mixed":
            out.append(f"{vocab.pick(rng, 'name')} {vocab.pick(rng, 'place')} {vocab.pick(rng, 'topic')} meeting")
        else:
            out.append(rng.choice(PARAPHRASES))
    return out
