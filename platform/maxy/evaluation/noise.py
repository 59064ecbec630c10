"""Queries that nothing in a graph answers, to measure "no relevant results".

Four kinds, each built deterministically (seeded), so every run asks the same questions:

- ``punctuation``: symbols, Lucene syntax and emoji with no words in them;
- ``random-words``: three to six words drawn at random from another corpus's vocabulary, and
  made-up words;
- ``language``: everyday questions in languages other than English;
- ``off-topic``: real questions of another public corpus (SciFact claims asked of a
  conversation memory, LoCoMo questions asked of scientific abstracts).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SEED = 20261123
KINDS = ("punctuation", "random-words", "language", "off-topic")

_SYMBOLS = (
    "?!.,;:",
    "[a TO z]",
    "***",
    "&& || !",
    "(((",
    ")))",
    "~~~",
    "^2",
    "\\/\\/",
    "<>",
    "{}",
    "@#$%",
    "...",
    "--",
    "??",
    "!!!",
    "''",
    '""',
    "+-+-",
    "===",
    "|||",
    "::",
    "/* */",
    "<!-- -->",
    "%%",
    "#",
    "$$$",
    "[]",
    "()",
    "{[()]}",
    "*?",
    "~0.5",
    "\\",
    "/",
    "__",
    "¿¡",
    "§¶",
    "«»",
    "…",
    "•",
)
_EMOJI = ("🙂", "🚀", "🔥", "👍", "🎉", "🤔", "🌍", "💡", "🐍", "☕")

# Everyday questions in sixteen languages (none of them English).
LANGUAGE_QUERIES = (
    "明日の天気はどうなりますか",
    "駅までの道を教えてください",
    "この近くに美味しいラーメン屋はありますか",
    "週末は何をする予定ですか",
    "日本語を勉強するのは難しいですか",
    "今天晚上我们吃什么",
    "请问图书馆几点开门",
    "你喜欢看什么样的电影",
    "这个周末北京会下雨吗",
    "火车站离这里远吗",
    "오늘 저녁에 뭐 먹을까요",
    "가장 가까운 지하철역이 어디예요",
    "주말에 보통 뭐 하세요",
    "Как пройти к ближайшей аптеке?",
    "Сколько стоит билет на поезд до Москвы?",
    "Какую музыку ты любишь слушать?",
    "Где можно купить свежий хлеб?",
    "متى يفتح المتحف يوم السبت؟",
    "ما هو أفضل مطعم في المدينة؟",
    "كيف حالك اليوم يا صديقي؟",
    "आज मौसम कैसा रहेगा?",
    "सबसे नज़दीकी बस स्टॉप कहाँ है?",
    "Τι ώρα κλείνει το σούπερ μάρκετ;",
    "Πού βρίσκεται η παραλία;",
    "מה השעה עכשיו בבקשה?",
    "איפה התחנה המרכזית?",
    "วันนี้อากาศร้อนมากไหม",
    "ร้านกาแฟที่ใกล้ที่สุดอยู่ที่ไหน",
    "Wie komme ich am schnellsten zum Hauptbahnhof?",
    "Wann schließt die Bäckerei am Sonntag?",
    "Welches Buch liest du gerade?",
    "Hast du Lust, morgen wandern zu gehen?",
    "Où se trouve la boulangerie la plus proche ?",
    "À quelle heure part le dernier train pour Lyon ?",
    "Qu'est-ce que tu as mangé ce midi ?",
    "Tu veux aller au cinéma ce soir ?",
    "¿Dónde está la parada de autobús más cercana?",
    "¿Cuánto cuesta un café con leche aquí?",
    "¿Qué hiciste el fin de semana pasado?",
    "¿A qué hora abre el mercado mañana?",
    "Onde fica a farmácia mais próxima?",
    "Quanto custa o bilhete de metrô?",
    "Você gosta de futebol ou de vôlei?",
    "Dove posso comprare un biglietto dell'autobus?",
    "Che tempo farà domani a Roma?",
    "Ti piace cucinare la pasta fatta in casa?",
    "Gdzie jest najbliższy przystanek tramwajowy?",
    "Ile kosztuje bilet do kina?",
    "En yakın eczane nerede?",
    "Yarın hava nasıl olacak?",
    "Quán cà phê gần nhất ở đâu?",
    "Hôm nay bạn có rảnh không?",
    "Di mana stasiun kereta terdekat?",
    "Berapa harga tiket bus ke Bandung?",
    "Hvor ligger det nærmeste bibliotek?",
    "Hoe laat gaat de winkel dicht vandaag?",
)

_SYLLABLES = ("bl", "or", "va", "qu", "ez", "ni", "kr", "ut", "zo", "pl", "ax", "fr", "im", "gl", "ep", "sn", "ur")
_WORD = re.compile(r"[a-z]{4,12}")


@dataclass(frozen=True)
class NoiseQuery:
    kind: str
    text: str


def punctuation(n: int, rng: random.Random) -> list[NoiseQuery]:
    out = [NoiseQuery("punctuation", s) for s in _SYMBOLS]
    pool = _SYMBOLS + _EMOJI
    while len(out) < n:
        out.append(NoiseQuery("punctuation", " ".join(rng.sample(pool, rng.randint(2, 4)))))
    return out[:n]


def vocabulary(texts: Iterable[str], limit: int = 20_000) -> list[str]:
    """Distinct lower-case words of four to twelve letters, in order of first use."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text.lower()):
            seen.setdefault(word, None)
            if len(seen) >= limit:
                return list(seen)
    return list(seen)


def random_words(n: int, words: Sequence[str], rng: random.Random) -> list[NoiseQuery]:
    """Half from ``words`` (another corpus), half made up from syllables."""
    out = []
    for i in range(n):
        if words and i % 2 == 0:
            text = " ".join(rng.sample(list(words), rng.randint(3, 6)))
        else:
            made_up = (
                "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(rng.randint(2, 4))
            )
            text = " ".join(made_up)
        out.append(NoiseQuery("random-words", text))
    return out


def build(other_questions: Sequence[str], other_texts: Iterable[str], *, per_kind: int = 80) -> list[NoiseQuery]:
    """The noise set for a graph: ``other_questions`` and ``other_texts`` come from a corpus
    the graph knows nothing about."""
    rng = random.Random(SEED)
    questions = list(dict.fromkeys(q.strip() for q in other_questions if q.strip()))
    off_topic = rng.sample(questions, min(per_kind, len(questions)))
    return [
        *punctuation(per_kind // 2, rng),
        *random_words(per_kind, vocabulary(other_texts), rng),
        *(NoiseQuery("language", q) for q in LANGUAGE_QUERIES),
        *(NoiseQuery("off-topic", q) for q in off_topic),
    ]
