"""Signing up, staying logged in, the person's profile, what the page refuses to do with their text, and deleting the
account."""

import time
import uuid

from selenium.webdriver.common.by import By

from conftest import PASSWORD


def test_sign_up_shows_the_campus_error_then_stays_logged_in_across_reloads_until_logout(browsers):
    anna = browsers("Anna")
    anna.open("/")
    anna.find("form[aria-label='Log in']")
    anna.accessible("the log-in screen")
    anna.screenshot("login")
    anna.click("Sign up")
    anna.type("Name", "Anna")
    anna.type("Campus email", "anna@example.com")
    anna.type("Password", PASSWORD)
    anna.click("Sign up")
    # The problem's detail shows next to the field it names, not a status.
    error = anna.find("input[name='email'][aria-invalid='true'] ~ .field-error")
    assert "example.com is not the email domain of a campus" in error.text and "400" not in error.text
    assert "helsinki.fi" in anna.text_of("section.auth .hint")
    anna.accessible("the sign-up screen with a field's error")
    anna.screenshot("signup-error")

    anna.type("Campus email", anna.email)
    anna.click("Sign up")
    anna.confirm_email()
    anna.wait_live()
    token = anna.js("return JSON.parse(localStorage.getItem('tarrare.session')).refreshToken")

    anna.driver.refresh()
    anna.wait_live()
    anna.tab("me")
    assert anna.field("Name").get_attribute("value") == "Anna"
    anna.accessible("Me")
    # Tokens never travel in the page's address.
    assert "token" not in anna.driver.current_url

    # An access token that has run out is refreshed with rotation: the refresh token changes.
    anna.js("const s = JSON.parse(localStorage.getItem('tarrare.session')); s.expiresAt = 0;"
            "localStorage.setItem('tarrare.session', JSON.stringify(s));")
    anna.driver.refresh()
    anna.wait_live()
    anna.wait(lambda: anna.js("return JSON.parse(localStorage.getItem('tarrare.session')).refreshToken") != token)

    anna.tab("me")
    anna.click("Log out")
    anna.find("form[aria-label='Log in']")
    assert anna.js("return localStorage.getItem('tarrare.session')") is None
    anna.driver.refresh()
    anna.find("form[aria-label='Log in']")

    anna.type("Email", anna.email)
    anna.type("Password", "wrong password")
    anna.click("Log in")
    assert anna.find("form[aria-label='Log in'] .form-error").text
    anna.accessible("the log-in screen with an error")
    anna.type("Password", PASSWORD)
    anna.click("Log in")
    anna.wait_live()


def test_a_name_made_of_markup_shows_as_text_and_runs_nothing(browsers):
    name = "<img src=x onerror=alert(1)>"
    mallory = browsers("Mallory").sign_up(name)
    mallory.tab("me")
    shown = mallory.find("p.name")
    assert shown.text == name
    assert mallory.driver.find_elements(By.CSS_SELECTOR, "main img[src='x']") == []
    assert mallory.js("return window.__alerted === undefined")
    mallory.screenshot("markup-name")


def test_the_gateway_serves_the_page_with_a_strict_content_security_policy(gateway):
    import httpx

    answer = httpx.get(f"{gateway}/")
    policy = answer.headers["content-security-policy"]
    assert answer.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "'unsafe-inline'" not in policy
    assert "frame-ancestors 'none'" in policy
    assert httpx.get(f"{gateway}/vendor/leaflet/leaflet.esm.js").headers["content-type"].startswith("text/javascript")
    missing = httpx.get(f"{gateway}/no-such-page")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("application/problem+json")


def test_a_student_deletes_her_account_with_her_password_and_her_messages_show_as_removed(browsers):
    from test_tutoring import matched_in_chat

    tomas, sofia = matched_in_chat(browsers, "WEB")
    text = f"My number is 040 {uuid.uuid4().int % 10**7}"
    sofia.type("Message", text)
    sofia.click("Send")
    tomas.click("Matches", within=tomas.find(".subnav"))
    tomas.click("Chat", within=tomas.find(".matches li"))
    tomas.wait(lambda: text in [bubble.text.split("\n")[0] for bubble in tomas.all(".messages li")])

    # A wrong password deletes nothing; the field says so.
    sofia.tab("me")
    sofia.press(sofia.find("details.delete-account summary"))
    sofia.accessible("Me with the account's deletion open")
    sofia.type("Your password", "not my password")
    sofia.click("Delete my account")
    error = sofia.find("input[name='password'][aria-invalid='true'] ~ .field-error")
    assert "wrong" in error.text and "nothing was deleted" in error.text
    sofia.accessible("the account's deletion refused")
    sofia.screenshot("delete-refused")
    sofia.type("Your password", PASSWORD)
    sofia.click("Delete my account")
    sofia.find("form[aria-label='Log in']")
    assert sofia.js("return localStorage.getItem('tarrare.session')") is None

    # She can no longer log in; her email signs up again as a new person.
    sofia.type("Email", sofia.email)
    sofia.type("Password", PASSWORD)
    sofia.click("Log in")
    assert sofia.find("form[aria-label='Log in'] .form-error").text

    # Tomas's open chat closes, and what she wrote shows as removed at once (message.removed), without a reload.
    tomas.sees("This chat is closed.")
    tomas.wait(lambda: [bubble.text.split("\n")[0] for bubble in tomas.all(".messages li")]
               == ["This message was removed."])
    assert text not in tomas.find("body").text
    tomas.accessible("a closed chat with a removed message")
    tomas.screenshot("message-removed")

    sofia.click("Sign up")
    sofia.type("Name", "Sofia Again")
    sofia.type("Campus email", sofia.email)
    sofia.type("Password", PASSWORD)
    # NB: her first account's mail is in the inbox too: the code is the one mailed after this sign-up.
    since = time.time_ns()
    sofia.click("Sign up")
    sofia.confirm_email(since)
    sofia.wait_live()
