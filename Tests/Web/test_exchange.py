"""Snack Exchange in the browser: a listing made with a photo at a building, found by typing part of its name, its
photo seen by another student who agrees to swap, the owner told live, both marking it done, and a review."""

import uuid

from conftest import ROOT

PHOTO = ROOT / "Tests" / "MediaTests" / "Fixtures" / "phone-photo.jpg"




def photo_shown(browser, css):
    """The image matching `css` once it shows a photo fetched with the token (a blob: URL) that has loaded."""
    image = browser.find(css)
    loaded = browser.js("const i = arguments[0]; return i.src.startsWith('blob:') && i.complete && i.naturalWidth > 0", image)
    return image if loaded else None


def test_a_listing_with_a_photo_is_found_agreed_to_completed_by_both_and_reviewed(browsers):
    word = f"Fazer{uuid.uuid4().hex[:6]}"
    offered = f"{word} Sininen chocolate bars"
    liisa = browsers("Liisa").sign_up()
    tuomas = browsers("Tuomas").sign_up()

    # Liisa lists her chocolate with a photo from her phone, at a building she finds by typing.
    liisa.tab("exchange")
    liisa.click("New listing", within=liisa.find(".subnav"))
    liisa.type("What you offer", offered)
    liisa.type("What you would take", "Karl Fazer mints, oat milk")
    liisa.choose("Category", "sweet")
    liisa.field("Photo").send_keys(str(PHOTO))
    liisa.type("Building", "Porthania")
    liisa.click("Porthania", within=liisa.find("ul.places"))
    liisa.sees("Place: Porthania")
    liisa.screenshot("listing-form")
    liisa.click("Create listing")
    liisa.wait(lambda: photo_shown(liisa, "img.listing-photo"))
    assert liisa.text_of(".listing h3") == offered and "At Porthania" in liisa.text_of(".listing")
    liisa.wait_live()
    liisa.js("window.__sameDocument = true")

    # Tuomas finds it by typing part of its unique name, and sees its photo.
    tuomas.tab("exchange")
    tuomas.type("Search", word[:-2].lower())
    def only_hers():
        items = tuomas.all("a.listing-item")
        return items[0] if len(items) == 1 and offered in items[0].text else None
    found = tuomas.wait(only_hers)
    assert "Liisa" in found.text and "Karl Fazer mints, oat milk" in found.text
    tuomas.wait(lambda: photo_shown(tuomas, "a.listing-item .thumb img"))
    tuomas.screenshot("browse")
    found.click()
    tuomas.wait(lambda: photo_shown(tuomas, "img.listing-photo"))
    assert "Liisa" in tuomas.text_of(".listing .owner") and "No reviews yet" in tuomas.text_of(".listing .owner")
    tuomas.screenshot("listing-with-photo")
    tuomas.type("What you bring (optional)", "a bag of mints")
    tuomas.click("Agree to swap")
    tuomas.wait(lambda: tuomas.text_of(".swap .status") == "In progress")

    # Liisa's listing shows the agreement as it happens, without a reload.
    agreed = liisa.find(".notice.agreed")
    assert "Tuomas agreed to swap, bringing a bag of mints" in agreed.text
    assert liisa.js("return window.__sameDocument === true")
    liisa.click("Open the swap", within=agreed)
    liisa.wait(lambda: liisa.text_of(".swap .status") == "In progress")
    assert liisa.button("Open chat").get_attribute("href").lower().endswith(
        tuomas.driver.current_url.rsplit("/", 1)[1].lower())

    # Both mark it done; Liisa's screen turns to the review when Tuomas's mark completes it.
    liisa.click("Complete")
    liisa.sees("You marked it done. Waiting for Tuomas.")
    tuomas.click("Complete")
    tuomas.wait(lambda: tuomas.text_of(".swap .status") == "Swapped")
    liisa.wait(lambda: liisa.text_of(".swap .status") == "Swapped")
    liisa.choose("Stars", "4")
    liisa.type("Review (optional)", "Friendly and on time")
    liisa.click("Send review")
    liisa.sees("Thanks for reviewing Tuomas.")
    liisa.screenshot("exchange")
    assert tuomas.all("form[aria-label='Review']")
