"""What the test mail server (mailserver.py) received, as the tests read it: the folder TARRARE_MAIL_DIR names, one
<time_ns>-<random>.eml file a message. The system and web tests both use it."""

import os
import re
import time
from email import policy
from email.parser import BytesParser
from email.utils import getaddresses
from pathlib import Path

CODE = re.compile(r"Your code: (\d{6})\b")


def mail_dir():
    folder = os.environ.get("TARRARE_MAIL_DIR")
    assert folder, "TARRARE_MAIL_DIR names no inbox: the system sends mail, so the tests must read it (scripts/test)"
    return Path(folder)


# A message file never changes once it has its name: each is parsed once.
_parsed = {}


def _message(path):
    if path not in _parsed:
        message = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        recipients = {address.lower() for _, address in getaddresses(
            message.get_all("X-Envelope-To", []) + message.get_all("To", []))}
        _parsed[path] = (recipients, message)
    return _parsed[path]


def mails_to(address, subject_contains="", after=None):
    """Every message for `address` whose subject holds `subject_contains`, kept at or after `after` (time.time_ns()),
    oldest first."""
    found = []
    for kept, path in sorted((int(path.name.split("-")[0]), path) for path in mail_dir().glob("*.eml")):
        if after is not None and kept < after:
            continue
        recipients, message = _message(path)
        if address.lower() in recipients and subject_contains in str(message["Subject"]):
            found.append(message)
    return found


def mail_to(address, subject_contains="", after=None, timeout=60.0):
    """The first message for `address` with `subject_contains` in its subject, waiting up to `timeout` s for it."""
    deadline = time.monotonic() + timeout
    while True:
        found = mails_to(address, subject_contains, after)
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"no mail to {address} about {subject_contains!r} in {timeout:.0f} s"
        time.sleep(0.2)


def text_of(message):
    return message.get_body(preferencelist=("plain",)).get_content()


def code_in(message):
    """The six-digit code the message carries."""
    found = CODE.search(text_of(message))
    assert found, f"no code in the mail:\n{text_of(message)}"
    return found[1]
