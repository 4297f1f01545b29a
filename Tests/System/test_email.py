"""Email through the gateway, against a real mail server that asks for STARTTLS and a password (mailserver.py, which
scripts/test starts and points accounts at): the mailed code proves an address, a forgotten password is set anew, no
answer tells whether an address has an account, and mail waits for a mail server that is down."""

import json
import os
import signal
import socket
import subprocess
import time
import uuid
from email.utils import parseaddr
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from conftest import GATEWAY, Student, database, eventually
from inbox import code_in, mail_to, mails_to, text_of

CONFIRM = "Confirm your email for Tarrare"
RESET = "Reset your Tarrare password"
PASSWORD = Student.password


@pytest.fixture(scope="module")
def api(system):
    with httpx.Client(base_url=GATEWAY, timeout=30) as client:
        yield client


def new_email(name):
    return f"{name}.{uuid.uuid4().hex[:10]}@helsinki.fi"


def sign_up(api, email):
    """Signs `email` up, which must then prove it; answers when (time.time_ns()), for mail_to's `after`."""
    since = time.time_ns()
    answer = api.post("/v1/auth/signup", json={"email": email, "password": PASSWORD, "name": "Mia"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["verificationRequired"] is True and answer.json().get("accessToken") is None, answer.text
    return since


def verify(api, email, code):
    return api.post("/v1/auth/verify", json={"email": email, "code": code})


def log_in(api, email, password=PASSWORD):
    return api.post("/v1/auth/login", json={"email": email, "password": password})


def is_problem(answer):
    return answer.headers.get("content-type", "").startswith("application/problem+json")


def test_the_mailed_code_came_over_tls_with_a_password_and_proves_the_address(api):
    email = new_email("mia")

    since = sign_up(api, email)
    refused = log_in(api, email)
    mail = mail_to(email, CONFIRM, after=since)
    code = code_in(mail)

    assert refused.status_code == 403 and is_problem(refused), refused.text
    # STARTTLS, then AUTH: what RFC 3848 names ESMTPSA.
    assert "with ESMTPSA (TLSv1." in mail["Received"] and "user tarrare" in mail["Received"], mail["Received"]
    assert mail["Subject"] == CONFIRM and parseaddr(mail["From"])[1] == "noreply@tarrare.test", mail
    campus = next(c["name"] for c in api.get("/v1/campuses").json()["campuses"] if c["domain"] == "helsinki.fi")
    assert campus in text_of(mail)
    assert f"{GATEWAY}/#/verify/{quote(email, safe='')}/{code}" in text_of(mail)

    verified = verify(api, email, code)
    session = log_in(api, email)

    assert verified.status_code == 200 and verified.json()["emailVerified"] is True, verified.text
    assert session.status_code == 200, session.text
    me = api.get("/v1/me", headers={"Authorization": f"Bearer {session.json()['accessToken']}"})
    assert me.status_code == 200 and me.json()["emailVerified"] is True, me.text


def test_a_wrong_code_or_the_code_of_another_address_proves_nothing(api):
    mine, theirs = new_email("ilmari"), new_email("kaisa")
    my_code = code_in(mail_to(mine, CONFIRM, after=sign_up(api, mine)))
    their_code = code_in(mail_to(theirs, CONFIRM, after=sign_up(api, theirs)))
    wrong = next(code for code in ("000000", "000001", "000002") if code not in (my_code, their_code))

    refused = [verify(api, mine, code) for code in (wrong, their_code)]

    assert all(answer.status_code == 400 and is_problem(answer) for answer in refused), [a.text for a in refused]
    assert log_in(api, mine).status_code == 403
    # Their code was good, for them; and mine still is.
    assert verify(api, theirs, their_code).status_code == 200
    assert verify(api, mine, my_code).status_code == 200
    assert log_in(api, mine).status_code == 200


def test_a_code_sent_again_proves_the_address_and_a_second_within_the_minute_is_throttled(api):
    email = new_email("veikko")
    mail_to(email, CONFIRM, after=sign_up(api, email))
    since = time.time_ns()

    first = api.post("/v1/auth/verify/resend", json={"email": email})
    second = api.post("/v1/auth/verify/resend", json={"email": email})
    code = code_in(mail_to(email, CONFIRM, after=since))

    assert first.status_code == 202, first.text
    assert second.status_code == 429 and is_problem(second), second.text
    assert verify(api, email, code).status_code == 200
    # NB: mail goes out in the order it was asked for: once a later one is here, the throttled resend would be too.
    later = time.time_ns()
    assert api.post("/v1/auth/password-reset", json={"email": email}).status_code == 202
    mail_to(email, RESET, after=later)
    assert len(mails_to(email, CONFIRM, after=since)) == 1


def test_a_password_reset_sets_a_new_password_and_ends_every_session(api):
    student = Student("Reino")
    new_password = "a new horse for the battery"
    since = time.time_ns()

    asked = api.post("/v1/auth/password-reset", json={"email": student.email})
    code = code_in(mail_to(student.email, RESET, after=since))
    wrong = api.post("/v1/auth/password-reset/confirm", json={
        "email": student.email, "code": "000000" if code != "000000" else "000001", "password": new_password})
    done = api.post("/v1/auth/password-reset/confirm", json={
        "email": student.email, "code": code, "password": new_password})

    assert asked.status_code == 202, asked.text
    assert wrong.status_code == 400 and is_problem(wrong), wrong.text
    assert done.status_code == 204, done.text
    assert api.post("/v1/auth/refresh", json={"refreshToken": student.refresh_token}).status_code == 401
    assert log_in(api, student.email).status_code == 401
    assert log_in(api, student.email, new_password).status_code == 200


def test_an_unknown_address_is_answered_as_a_known_one_and_gets_no_mail(api):
    unknown, known = new_email("nobody"), Student("Kalle").email
    since = time.time_ns()

    answers = [api.post(path, json={"email": unknown}) for path in ("/v1/auth/password-reset", "/v1/auth/verify/resend")]
    asked = api.post("/v1/auth/password-reset", json={"email": known})

    assert [answer.status_code for answer in answers + [asked]] == [202, 202, 202], [a.text for a in answers]
    # NB: mail goes out in the order it was asked for: once the known address's is here, any to the unknown one would be.
    mail_to(known, RESET, after=since)
    assert mails_to(unknown, after=since) == []


# --- The mail server away -------------------------------------------------------------------------------------------

# Servers this module started: kept, so that they outlive their Popen objects quietly; scripts/test stops the one
# running by its pid file.
started = []


def mail_server():
    """How scripts/test started the mail server (its command line, pid file, log, address)."""
    path = os.environ.get("TARRARE_MAIL_SERVER")
    if not path:
        pytest.skip("the mail server is not this run's own to stop (TARRARE_MAIL_SERVER, set by scripts/test)")
    return json.loads(Path(path).read_text())


def listening(server):
    try:
        socket.create_connection((server["host"], server["port"]), timeout=1).close()
        return True
    except OSError:
        return False


def stop(server):
    os.kill(int(Path(server["pidFile"]).read_text()), signal.SIGTERM)
    assert eventually(lambda: not listening(server), timeout=30), "the mail server did not stop"


def start(server):
    with open(server["log"], "ab") as log:
        process = subprocess.Popen(server["argv"], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    started.append(process)
    Path(server["pidFile"]).write_text(f"{process.pid}\n")
    eventually(lambda: listening(server) or process.poll() is not None, timeout=30)
    assert process.poll() is None and listening(server), f"the mail server did not start again (see {server['log']})"


def test_mail_waits_for_a_mail_server_that_is_down_and_comes_once_when_it_is_back(api, system):
    server = mail_server()
    email = new_email("odotus")
    tried = "SELECT count(*) FROM mail_outbox WHERE recipient = %s AND attempts > 0 AND last_error IS NOT NULL"

    stop(server)
    try:
        since = sign_up(api, email)
        with database(system, "accounts") as accounts:
            assert eventually(lambda: accounts.execute(tried, (email,)).fetchone()[0], timeout=60), \
                "accounts never tried the mail while the server was down"
    finally:
        start(server)
    mail_to(email, CONFIRM, after=since, timeout=120)
    later = time.time_ns()
    assert api.post("/v1/auth/password-reset", json={"email": email}).status_code == 202
    mail_to(email, RESET, after=later)

    assert len(mails_to(email, CONFIRM, after=since)) == 1
