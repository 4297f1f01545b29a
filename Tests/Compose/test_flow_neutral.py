"""The platform knows no flow: no word of any flow (delivery, tutoring, exchange, rides) in messaging, chat,
notifications or what the flows of matching share (MatchingCore).

Migrations that ran before a word left them (chat's from an orderer and a deliverer to a member list, matching's
timers that were delivery's alone) are history and exempt. "Delivery" and "exchange" alone are words of the broker
(a message's delivery, a topic exchange), so each flow is known by the words only it uses.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = [ROOT / "Shared/Messaging", ROOT / "Services/Chat", ROOT / "Services/Notifications", ROOT / "Services/Matching/Core"]
HISTORY = {
    ROOT / "Services/Chat/Migrations/0001_create_chat.sql", ROOT / "Services/Chat/Migrations/0002_conversation_members.sql",
    ROOT / "Services/Matching/Core/Migrations/0002_timers_by_flow.sql",
}
DELIVERY_WORDS = re.compile(
    r"orderer|deliverer|restaurant|run[_ ]?id|order[_ ]?id|offer[_ ]?id|\boffer\.|match\.(accepted|cancelled|completed)"
    r"|order\.(placed|expired)|run\.(opened|closed)|MatchAccepted|MatchCancelled|MatchCompleted|OfferMade|OrderExpired",
    re.IGNORECASE,
)
FLOW_WORDS = re.compile(
    r"delivery flow|(?-i:\bDELIVERY_)|tutor|swipe|mentormate|snack|listing|exchange\.(agreed|cancelled|completed)"
    r"|ExchangeAgreed|\brides?\b|rider|driver|my driver",
    re.IGNORECASE,
)


def test_messaging_chat_notifications_and_the_matching_core_name_no_word_of_any_flow():
    found = []
    for folder in PLATFORM:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path not in HISTORY and path.suffix in {".swift", ".sql", ".yaml"}:
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if DELIVERY_WORDS.search(line) or FLOW_WORDS.search(line):
                        found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


# The web client's shell: the page, its start, its own screens (logging in, the person, the chats) and the parts every
# flow's screens use. A flow's screens live in web/js/flows/<flow>/ and register themselves in web/js/flows.js.
WEB_SHELL = [ROOT / "web/index.html", ROOT / "web/css/app.css", ROOT / "web/sw.js", ROOT / "web/manifest.webmanifest"] + [
    ROOT / "web/js" / name for name in (
        "main.js", "api.js", "feed.js", "dom.js", "images.js", "lifetime.js", "map.js", "places.js", "position.js", "routes.js",
        "views/auth.js", "views/me.js", "views/chats.js",
    )
]
FLOW_NAMES = re.compile(r"\b(delivery|tutoring|exchange|rides)\b", re.IGNORECASE)


def test_the_web_clients_shell_names_no_flow():
    found = []
    for path in WEB_SHELL:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FLOW_NAMES.search(line) or DELIVERY_WORDS.search(line) or FLOW_WORDS.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
