"""The base map without a third-party tile server: a map in the page shows the campus from the tiles the gateway
serves at /tiles/ (rendered by the import from the bundled OpenStreetMap extract), up to the zoom they were rendered
at, with OpenStreetMap's attribution, and nothing the page loads leaves the machine. The tiles are served with long
caching, and a missing one is the gateway's 404."""

import math
import re
import struct
from urllib.parse import urlsplit

import httpx
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By

from conftest import GATEWAY

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# A blank tile is one colour; a drawn one has streets, buildings, green, names and their antialiased edges.
FEW_COLOURS = 8

# The addresses of the page's loaded tiles: cheap enough to ask for while the page zooms.
LOADED_TILE_SOURCES = """
return [...document.querySelectorAll(".leaflet-tile-pane img.leaflet-tile-loaded")].map((tile) => tile.src);
"""

# Each loaded tile whose address starts with arguments[0], drawn on a canvas: its address, natural size and how many
# colours it has. NB: drawing every pixel keeps the page busy, so it is asked once the tiles are there, never in a wait.
DRAWN_TILES = """
return [...document.querySelectorAll(".leaflet-tile-pane img.leaflet-tile-loaded")]
  .filter((tile) => tile.src.startsWith(arguments[0]))
  .map((tile) => {
    const canvas = document.createElement("canvas");
    canvas.width = tile.naturalWidth;
    canvas.height = tile.naturalHeight;
    const context = canvas.getContext("2d");
    context.drawImage(tile, 0, 0);
    const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const colours = new Set();
    for (let i = 0; i < pixels.length; i += 4) colours.add(pixels.slice(i, i + 4).join());
    return { src: tile.src, width: tile.naturalWidth, height: tile.naturalHeight, colours: colours.size };
  });
"""

# Every address the page has loaded anything from: the page itself and each resource (scripts, styles, images,
# fetches).
LOADED_ADDRESSES = """
return [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")].map((e) => e.name);
"""


def tile_of(latitude, longitude, zoom):
    """The (x, y) of the Web Mercator tile holding a point."""
    scale = 2**zoom
    x = (longitude + 180) / 360 * scale
    y = (1 - math.asinh(math.tan(math.radians(latitude))) / math.pi) / 2 * scale
    return int(x), int(y)


def campus_centre():
    campuses = httpx.get(f"{GATEWAY}/v1/campuses", timeout=30).json()["campuses"]
    centre = next(campus for campus in campuses if campus["domain"] == "helsinki.fi")["center"]
    return centre["latitude"], centre["longitude"]


def tiles_prefix(zoom):
    return f"{GATEWAY}/tiles/{zoom}/"


def loaded_tiles(browser, zoom):
    """The addresses of the page's loaded tiles that came from the gateway's /tiles/ at `zoom`."""
    return [source for source in browser.js(LOADED_TILE_SOURCES) if source.startswith(tiles_prefix(zoom))]


def drawn_tiles(browser, zoom):
    """The page's loaded tiles from the gateway's /tiles/ at `zoom`, each with its size and how many colours it has."""
    return browser.js(DRAWN_TILES, tiles_prefix(zoom))


def test_the_map_shows_the_campus_from_the_gateways_own_tiles_and_nothing_leaves_the_machine(browsers):
    mia = browsers("Mia").sign_up()
    mia.click("Delivering")
    # A building chosen puts its marker on the check-in's map, over the tiles.
    mia.type("Heading to", "porthan")
    mia.press(mia.find("button.suggestion"))
    shown = mia.find("div.map")
    mia.scroll_to(shown)
    mia.wait(lambda: shown.find_elements(By.CSS_SELECTOR, "path.leaflet-interactive"), message="no marker")

    mia.wait(lambda: loaded_tiles(mia, 16), message="no tile of /tiles/16/ loaded on the check-in's map")

    for tile in drawn_tiles(mia, 16):
        assert (tile["width"], tile["height"]) == (256, 256), tile
        assert tile["colours"] > FEW_COLOURS, f"a blank tile: {tile}"
    assert "© OpenStreetMap contributors" in mia.text_of(".leaflet-control-attribution")
    mia.screenshot("map-z16")

    # Zooming in goes as far as the tiles were rendered, and no further.
    zoom_in = mia.find("a.leaflet-control-zoom-in")
    for zoom in (17, 18):
        mia.press(zoom_in)
        # NB: Leaflet takes a click on + during its zoom's animation as one to the zoom it is going to.
        try:
            mia.wait(lambda: not shown.find_elements(By.CSS_SELECTOR, ".leaflet-zoom-anim") and loaded_tiles(mia, zoom))
        except TimeoutException:
            # What the map shows instead says whether the press was lost, the tiles did not come, or they failed.
            shown_zooms = sorted({urlsplit(source).path.split("/")[2] for source in mia.js(LOADED_TILE_SOURCES)})
            failed = mia.js("return document.querySelectorAll('.leaflet-tile-pane img:not(.leaflet-tile-loaded)')"
                            ".length")
            raise AssertionError(f"no tile of /tiles/{zoom}/ loaded: tiles loaded at zooms {shown_zooms}, {failed} "
                                 f"not (yet), + is {zoom_in.get_attribute('class')!r}") from None
    # NB: Leaflet disables + on the zoom's end, an animation frame after the tiles of 18 may have loaded.
    mia.wait(lambda: "leaflet-disabled" in zoom_in.get_attribute("class"), message="the map zooms in past 18")
    closest = drawn_tiles(mia, 18)
    assert closest and all(tile["colours"] > FEW_COLOURS for tile in closest), closest
    mia.screenshot("map-z18")

    gateway = urlsplit(GATEWAY).netloc
    elsewhere = [address for address in mia.js(LOADED_ADDRESSES) if urlsplit(address).netloc != gateway]
    assert not elsewhere, f"the page loaded from beyond the gateway: {elsewhere}"
    assert not mia.driver.find_elements(By.CSS_SELECTOR, "img[src*='openstreetmap.org']")


def test_a_tile_is_a_256_pixel_png_cached_for_long_and_a_missing_one_is_the_gateways_404(gateway):
    x, y = tile_of(*campus_centre(), 16)

    tile = httpx.get(f"{gateway}/tiles/16/{x}/{y}.png", timeout=30)
    outside = httpx.get(f"{gateway}/tiles/16/0/0.png", timeout=30)
    stray = httpx.get(f"{gateway}/tiles/source.sha256", timeout=30)

    assert tile.status_code == 200
    assert tile.headers["content-type"] == "image/png"
    assert tile.content.startswith(PNG_SIGNATURE)
    # The first chunk, IHDR, starts with the width and height.
    assert struct.unpack(">II", tile.content[16:24]) == (256, 256)
    cache = tile.headers["cache-control"]
    assert "public" in cache and int(re.search(r"max-age=(\d+)", cache)[1]) >= 7 * 24 * 3600, cache
    for missing in (outside, stray):
        assert missing.status_code == 404
        assert missing.headers["content-type"] == "application/problem+json", "a missing tile is not the page"
        assert "max-age" not in missing.headers.get("cache-control", ""), "a missing tile may be rendered later"


def test_the_page_takes_its_tiles_from_the_gateway_settings_and_allows_no_other_tile_server(gateway):
    settings = httpx.get(f"{gateway}/config.js", timeout=30)
    page = httpx.get(f"{gateway}/", timeout=30)

    assert settings.headers["content-type"].startswith("text/javascript")
    assert 'export const tileUrl = "/tiles/{z}/{x}/{y}.png";' in settings.text
    policy = page.headers["content-security-policy"]
    assert re.search(r"img-src 'self' blob: data:\s*;", policy), policy
