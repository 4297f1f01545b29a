"""Tutoring (MentorMate) in the browser: profiles made through the page, cards liked both ways, the match shown to
both (to the first liker through the socket), the chat it opens, and unmatching, asked first."""

import uuid

import httpx
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from conftest import GATEWAY




def make_profile(browser, role, course, description):
    browser.tab("tutoring")
    # Without a profile the cards screen asks for one first.
    browser.find("form[aria-label='Tutoring profile']")
    browser.choose("I am", role)
    browser.type("Courses", course)
    browser.type("Description", description)
    browser.type("Rate (€ per hour)", "18.50")
    browser.type("Availability", "Weekday evenings")


def matched_in_chat(browsers, prefix):
    """Tomas (a tutor) and Sofia (a student) of a course of their own who liked each other's cards; Sofia on their
    chat, Tomas on his cards."""
    course = f"{prefix}-{uuid.uuid4().int % 10**6}"
    tomas = browsers("Tomas").sign_up()
    sofia = browsers("Sofia").sign_up()
    make_profile(tomas, "tutor", course, "Topology")
    tomas.click("Save profile")
    tomas.sees("No more cards for now")
    make_profile(sofia, "student", course, "Open sets")
    sofia.click("Save profile")
    sofia.click("Like", within=sofia.find(".tutoring-card"))
    tomas.click("Look again")
    tomas.wait(lambda: tomas.find(".tutoring-card h3").text == "Sofia")
    tomas.click("Like", within=tomas.find(".tutoring-card"))
    sofia.click("Open chat", within=sofia.find(".match"))
    sofia.wait(lambda: sofia.text_of("#chat-title") == "Tomas")
    return tomas, sofia


def test_a_student_and_a_tutor_like_each_others_cards_see_the_match_and_chat(browsers):
    course = f"WEB-{uuid.uuid4().int % 10**6}"
    tomas = browsers("Tomas").sign_up()
    sofia = browsers("Sofia").sign_up()

    make_profile(tomas, "tutor", course.lower().replace("-", " "), "Linear algebra, patiently")
    tomas.click("Save profile")
    tomas.sees("No more cards for now")

    make_profile(sofia, "student", course, "Stuck on eigenvalues")
    sofia.accessible("tutoring: the profile asked for")
    sofia.screenshot("profile")
    sofia.click("Save profile")

    # Sofia's card shows Tomas with their shared course, however each of them spelled it.
    card = sofia.find(".tutoring-card")
    assert card.find_element("css selector", "h3").text == "Tomas"
    assert card.find_element("css selector", ".tag.shared").text.startswith(course)
    assert "€18.50 per hour" in card.text and "Linear algebra, patiently" in card.text
    sofia.accessible("tutoring: a card")
    sofia.screenshot("card")
    sofia.wait_live()
    sofia.js("window.__sameDocument = true")
    sofia.click("Like", within=card)
    sofia.sees("No more cards for now")
    assert sofia.all(".match") == []

    # Tomas finds Sofia's card and likes it with the keyboard: both see the match, Sofia without a reload.
    tomas.click("Look again")
    tomas.wait(lambda: tomas.find(".tutoring-card h3").text == "Sofia")
    ActionChains(tomas.driver).send_keys(Keys.ARROW_RIGHT).perform()
    tomas.find(".match")
    banner = sofia.find(".match")
    assert "It's a match!" in banner.text and "Tomas" in banner.text and course in banner.text
    assert sofia.js("return window.__sameDocument === true")
    sofia.accessible("tutoring: it's a match")
    sofia.screenshot("match")

    # Sofia opens the chat from the match; Tomas finds her among his matches and reads what she wrote.
    sofia.click("Open chat", within=banner)
    sofia.wait(lambda: sofia.text_of("#chat-title") == "Tomas")
    text = "Could we meet at Kaisa-talo on Tuesday?"
    sofia.type("Message", text)
    sofia.click("Send")
    tomas.click("Matches", within=tomas.find(".subnav"))
    match = tomas.find(".matches li")
    assert "Sofia" in match.text and course in match.text
    tomas.click("Profile", within=match)
    tomas.wait(lambda: match.find_elements("css selector", ".match-profile dl"))
    tomas.accessible("tutoring: the matches, a profile open")
    tomas.click("Chat", within=match)
    tomas.wait(lambda: text in [bubble.text.split("\n")[0] for bubble in tomas.all(".messages li")])

    # His own profile, as the My profile tab shows it for changes.
    tomas.tab("tutoring")
    tomas.click("My profile", within=tomas.find(".subnav"))
    assert tomas.field("Courses").get_attribute("value")
    tomas.accessible("tutoring: my profile")

    # Tomas unmatches: asked first, he keeps the match once, then says yes; the chat closes for Sofia.
    tomas.click("Matches", within=tomas.find(".subnav"))
    match = tomas.find(".matches li")
    tomas.click("Unmatch", within=match)
    tomas.sees("Unmatch Sofia? The chat closes and neither of you sees the other again.")
    tomas.accessible("tutoring: unmatching asked")
    tomas.screenshot("unmatch-asked")
    tomas.click("Keep", within=match)
    assert tomas.js("return document.activeElement.getAttribute('aria-label')") == "Unmatch Sofia"
    tomas.click("Unmatch", within=match)
    tomas.click("Yes, unmatch", within=match)
    tomas.sees("No matches yet")
    sofia.sees("This chat is closed.")


def test_a_student_blocks_a_tutor_from_the_card_and_neither_sees_the_other_again(browsers):
    course = f"WEB-{uuid.uuid4().int % 10**6}"
    tomas = browsers("Tomas").sign_up()
    sofia = browsers("Sofia").sign_up()
    make_profile(tomas, "tutor", course, "Statistics")
    tomas.click("Save profile")
    tomas.sees("No more cards for now")
    make_profile(sofia, "student", course, "Regression")
    sofia.click("Save profile")

    # Sofia reports Tomas from his card: the report asks why first.
    card = sofia.find(".tutoring-card")
    assert card.find_element("css selector", "h3").text == "Tomas"
    sofia.click("Report Tomas", within=card)
    sofia.click("Send report", within=card)
    sofia.sees("Say why: spam, harassment, unsafe, fake or other.")
    sofia.accessible("safety: the report form with its error")
    sofia.choose("Why", "harassment")
    sofia.type("What happened", "Asked for my address")
    sofia.click("Send report", within=card)
    sofia.sees("your campus's moderators will look at it")

    # Then she blocks him, asked first; the card goes.
    sofia.click("Block Tomas", within=card)
    sofia.sees("Block Tomas? Neither of you will see the other in any app")
    sofia.accessible("safety: blocking asked")
    sofia.click("Block", within=card.find_element("css selector", ".confirm"))
    sofia.sees("No more cards for now")
    sofia.screenshot("blocked")

    # Neither finds the other among the cards again, once matching has heard of the block; Sofia's Me lists it.
    session = tomas.js("return JSON.parse(localStorage.getItem('tarrare.session'))")
    with httpx.Client(base_url=GATEWAY, timeout=30, headers={"Authorization": f"Bearer {session['accessToken']}"}) as api:
        tomas.wait(lambda: api.get("/v1/tutoring/feed", params={"course": course}).json().get("cards") == [])
    tomas.click("Look again")
    tomas.sees("No more cards for now")
    assert tomas.all(".tutoring-card") == []
    sofia.click("Look again")
    sofia.sees("No more cards for now")
    sofia.tab("me")
    assert "Tomas" in sofia.find("ul.blocked").text
    sofia.accessible("Me with a person blocked")
