"""The page by keyboard alone: a student signs up, goes to Snack Exchange and lists a snack at a building found by
typing, with Tab, Enter, Space and Escape only (and the text typed into the focused field); each control reached shows
the focus, and a question asked gives the focus back when Escape closes it."""

import time
import uuid

from selenium.webdriver.common.keys import Keys

from conftest import CONFIRM_FORM, PASSWORD, TABS
from inbox import code_in, mail_to


def sign_up_by_keyboard(person):
    """From the log-in screen to the app's tabs: the sign-up form filled and sent with the keyboard, and the mailed
    code typed where the system asks for one."""
    person.tab_to("Sign up")
    person.keys(Keys.ENTER)
    person.find("form[aria-label='Sign up']")
    # The page puts the focus in the form's first field; Tab goes from one field to the next, Enter sends.
    person.wait(lambda: person.focused() == "Name", message="the sign-up form did not take the focus")
    since = time.time_ns()
    person.keys(person.name, Keys.TAB, person.email, Keys.TAB, PASSWORD, Keys.ENTER)
    screen = person.wait(lambda: "confirm" if person.all(CONFIRM_FORM) else "tabs" if person.all(TABS) else None,
                         message="neither the email's confirmation nor the app showed after sign-up")
    if screen == "confirm":
        person.wait(lambda: person.focused() == "Code", message="the confirmation did not take the focus")
        person.keys(code_in(mail_to(person.email, "Confirm your email", after=since)), Keys.ENTER)
    person.find(TABS)


def test_a_student_signs_up_and_lists_a_snack_by_keyboard_alone(browsers):
    offered = f"Karl Fazer {uuid.uuid4().hex[:6]} mints"
    kalle = browsers("Kalle")
    kalle.open("/")
    kalle.find("form[aria-label='Log in']")
    sign_up_by_keyboard(kalle)

    # To the Exchange tab, and its New listing screen.
    kalle.tab_to("Exchange")
    kalle.keys(Keys.ENTER)
    kalle.find("form[aria-label='Find listings']")
    kalle.tab_to("New listing")
    kalle.keys(Keys.ENTER)
    kalle.find("form[aria-label='New listing']")

    # The form filled field by field; the building is found by typing and picked from the buildings found.
    kalle.tab_to("What you offer")
    kalle.keys(offered, Keys.TAB, "Oat milk")
    kalle.tab_to("Building")
    kalle.keys("Porthania")
    kalle.find("ul.places button")
    kalle.tab_to("Porthania")
    kalle.keys(Keys.ENTER)
    kalle.sees("Place: Porthania")
    assert kalle.focused() == "Building"
    kalle.screenshot("keyboard-listing-form")
    kalle.tab_to("Create listing")
    kalle.keys(Keys.SPACE)

    # The listing made shows; withdrawing it asks first, and Escape takes the question back to the button.
    kalle.wait(lambda: kalle.all(".listing h3") and kalle.text_of(".listing h3") == offered,
               message="the listing made never showed")
    assert "At Porthania" in kalle.text_of(".listing")
    kalle.tab_to("Withdraw")
    kalle.keys(Keys.ENTER)
    kalle.sees("Withdraw this listing?")
    assert kalle.focused() == "Keep it"
    kalle.accessible("exchange: withdrawing asked, by keyboard")
    kalle.keys(Keys.ESCAPE)
    kalle.wait(lambda: not kalle.all(".confirm"), message="Escape left the question open")
    assert kalle.focused() == "Withdraw"
    kalle.screenshot("keyboard-listing")
