"""The platform knows no flow: no name of the delivery flow in messaging, chat or notifications.

Chat's migrations that moved conversations from an orderer and a deliverer to a member list name the old
columns; they are history and exempt.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = [ROOT / "Shared/Messaging", ROOT / "Services/Chat", ROOT / "Services/Notifications"]
HISTORY = {ROOT / "Services/Chat/Migrations/0001_create_chat.sql", ROOT / "Services/Chat/Migrations/0002_conversation_members.sql"}
DELIVERY_WORDS = re.compile(
    r"orderer|deliverer|restaurant|run[_ ]?id|order[_ ]?id|offer[_ ]?id|\boffer\.|match\.(accepted|cancelled|completed)"
    r"|order\.(placed|expired)|run\.(opened|closed)|MatchAccepted|MatchCancelled|MatchCompleted|OfferMade|OrderExpired",
    re.IGNORECASE,
)


def test_messaging_chat_and_notifications_name_no_delivery_word():
    found = []
    for folder in PLATFORM:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path not in HISTORY and path.suffix in {".swift", ".sql", ".yaml"}:
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if DELIVERY_WORDS.search(line):
                        found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
