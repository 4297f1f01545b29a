"""The screens of the mailed codes: confirming the email with a code sent again (and throttled), with the link in the
mail, and setting a new password with the code of a reset mail."""

import re
import time

import httpx

from conftest import CONFIRM_FORM, GATEWAY, PASSWORD, TABS, signed_up
from inbox import code_in, mail_to, mails_to, text_of

CONFIRM = "Confirm your email for Tarrare"
RESET = "Reset your Tarrare password"
LOG_IN = "form[aria-label='Log in']"
STATUS = "section.auth [role='status']"


def up_to_the_confirm_screen(person):
    """Signs up through the page and stops where the page asks for the mailed code."""
    person.open("/")
    person.click("Sign up")
    person.type("Name", person.name)
    person.type("Campus email", person.email)
    person.type("Password", PASSWORD)
    person.click("Sign up")
    return person.find(CONFIRM_FORM)


def test_a_code_sent_again_is_throttled_and_only_the_newest_confirms(browsers):
    ella = browsers("Ella")
    up_to_the_confirm_screen(ella)
    assert ella.email in ella.text_of("section.auth .hint")
    ella.accessible("the email's confirmation")
    # NB: the sign-up's mail first, so that the one asked for next is the only one after `since`.
    first = code_in(mail_to(ella.email, CONFIRM))
    since = time.time_ns()
    ella.screenshot("confirm")

    ella.click("Send the code again")
    ella.wait(lambda: ella.text_of(STATUS) == "A new code is on its way.", message="the resend was not acknowledged")
    ella.click("Send the code again")
    ella.wait(lambda: "Try again in" in ella.text_of(STATUS), message="the second resend was not throttled")
    ella.accessible("the email's confirmation, a resend throttled")
    ella.screenshot("resend-throttled")
    mail_to(ella.email, CONFIRM, after=since)
    newest = code_in(mails_to(ella.email, CONFIRM, after=since)[-1])

    # The first mail's code was replaced by the newest (unless chance drew the same six digits twice).
    if first != newest:
        ella.type("Code", first)
        ella.click("Confirm", within=ella.find(CONFIRM_FORM))
        assert "wrong" in ella.find("input[name='code'][aria-invalid='true'] ~ .field-error").text
        ella.accessible("the email's confirmation, a wrong code")
    ella.type("Code", newest)
    ella.click("Confirm", within=ella.find(CONFIRM_FORM))
    ella.find(TABS)


def test_the_link_in_the_mail_confirms_the_address_and_the_page_asks_to_log_in(browsers):
    lauri = browsers("Lauri")
    up_to_the_confirm_screen(lauri)
    body = text_of(mail_to(lauri.email, CONFIRM))
    link = re.search(r"https?://\S+?(/#/verify/\S+)", body)
    assert link, f"no confirmation link in the mail:\n{body}"

    # As a person opening the mail's link in the browser: the page loads anew, at the gateway it is served from here.
    lauri.driver.get("about:blank")
    lauri.open(link[1])
    assert lauri.find("section.auth .notice").text == "Your email is confirmed. Log in."
    assert lauri.field("Email").get_attribute("value") == lauri.email
    assert "verify" not in lauri.driver.current_url
    lauri.accessible("the log-in screen after the mail's link")
    lauri.screenshot("link-confirmed")
    lauri.type("Password", PASSWORD)
    lauri.click("Log in")
    lauri.find(TABS)


def test_a_student_who_forgot_her_password_sets_a_new_one_with_the_mailed_code(browsers):
    new_password = "a new horse for the battery"
    kaisa = browsers("Kaisa")
    with httpx.Client(base_url=GATEWAY, timeout=30) as http:
        signed_up(http, kaisa.email, "Kaisa")
    kaisa.open("/")
    kaisa.click("Forgot your password?")
    kaisa.find("form[aria-label='Reset your password']")
    kaisa.accessible("the forgotten password")
    kaisa.type("Email", kaisa.email)
    since = time.time_ns()
    kaisa.click("Send the code")
    kaisa.find("form[aria-label='Set a new password']")
    assert kaisa.email in kaisa.text_of("section.auth .hint")
    kaisa.accessible("the new password")
    kaisa.screenshot("reset")
    kaisa.type("Code", code_in(mail_to(kaisa.email, RESET, after=since)))
    kaisa.type("New password", new_password)
    kaisa.click("Set password")
    kaisa.find(TABS)

    kaisa.tab("me")
    kaisa.click("Log out")
    kaisa.find(LOG_IN)
    kaisa.type("Email", kaisa.email)
    kaisa.type("Password", PASSWORD)
    kaisa.click("Log in")
    assert kaisa.find(f"{LOG_IN} .form-error").text
    kaisa.type("Password", new_password)
    kaisa.click("Log in")
    kaisa.find(TABS)
