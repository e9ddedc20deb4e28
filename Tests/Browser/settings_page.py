"""The settings page in a real browser: Playwright for Python driving Debian's chromium, headless.

Run by LoupeSettingsPageTests (BrowserTests.swift), which starts the page's server on the example daemon's
settings and passes: the page's address (with its token), the settings file, the lock file, the vendor
layer's file, the message `loupe` prints for ticker.intervalSeconds = -1, where to save screenshots, the
address and file of a second page, over a JSON document no settings type describes, and the address and
file of a third, over a root that is a dictionary of endpoints (a JSONC file).
Prints one line per check and `N passed, N failed`; exits 1 when any failed.
"""
import json
import os
import re
import sys
import time
import traceback
from urllib.parse import urlsplit, urlunsplit

from playwright.sync_api import expect, sync_playwright

url, settings_file, lock_file, vendor_file, refusal, shots, untyped_url, untyped_file, endpoints_url, endpoints_file = sys.argv[1:11]
chromium = os.environ.get("LOUPE_CHROMIUM", "/usr/bin/chromium")
os.makedirs(shots, exist_ok=True)
expect.set_options(timeout=10_000)
passed, failed = [], []


def check(name):
    def run(body):
        try:
            body()
            passed.append(name)
            print(f"ok: {name}", flush=True)
        except Exception:  # noqa: BLE001 -- every failure is reported, then the next check runs
            failed.append(name)
            print(f"FAILED: {name}\n{traceback.format_exc()}", flush=True)
        return body
    return run


def read(path):
    with open(path, encoding="utf-8") as file:
        return file.read()


# Keys and the paths that name them: in quotes where a key is empty or holds a dot, a bracket, a quote, a
# backslash or a space.
QUOTED_KEYS = {
    "api": "api", "plain-key_1": "plain-key_1", "ünï": "ünï", "web.internal": '"web.internal"',
    "a b": '"a b"', 'q"t': '"q\\"t"', "back\\slash": '"back\\\\slash"', "": '""', "x[0]": '"x[0]"',
}


def setting(page, path):
    # The path as a CSS string (a path may hold quotes: "web.internal".port).
    return page.locator(f".setting[data-path={json.dumps(path)}]")


with sync_playwright() as playwright:
    browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"])
    page = browser.new_page(viewport={"width": 1000, "height": 1300})
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")

    @check("the page shows every setting of the example daemon with its provenance")
    def _():
        for path in ["logLevel", "ticker.intervalSeconds", "ticker.greeting", "upstream.url", "upstream.timeoutSeconds", "upstream.token"]:
            expect(setting(page, path)).to_be_visible()
        expect(setting(page, "logLevel")).to_contain_text(f"From {settings_file} line 4")
        expect(setting(page, "upstream.timeoutSeconds")).to_contain_text(f"From {vendor_file} line 1 (overrides the default)")
        expect(setting(page, "ticker.intervalSeconds")).to_contain_text("From the default")
        expect(setting(page, "logLevel")).to_contain_text("How much the daemon logs.")
        expect(page.get_by_label("logLevel", exact=True)).to_have_value('"debug"')
        expect(page.get_by_label("ticker.greeting", exact=True)).to_have_value("hi")
        expect(page.locator("#live")).to_contain_text("Live")
        page.screenshot(path=os.path.join(shots, "settings-page.png"), full_page=True)

    @check("a secret is masked")
    def _():
        expect(setting(page, "upstream.token")).to_contain_text('"********"')
        assert "s3cret" not in page.content()

    @check("a locked setting cannot be edited, and names its lock")
    def _():
        expect(setting(page, "upstream.url")).to_contain_text(f"Locked by {lock_file} line 2")
        expect(page.get_by_label("upstream.url", exact=True)).to_be_disabled()
        expect(setting(page, "upstream.url").get_by_role("button", name="Save upstream.url")).to_have_count(0)

    @check("editing a value writes the file in place: the comments are still there")
    def _():
        page.get_by_label("ticker.greeting", exact=True).fill("bonjour")
        page.get_by_role("button", name="Save ticker.greeting").click()
        expect(setting(page, "ticker.greeting").locator(".message")).to_have_text("Saved.")
        text = read(settings_file)
        assert '"bonjour"' in text and "// said every tick" in text and "// Chatty while we debug." in text, text

    @check("a choice is saved from its list, by keyboard")
    def _():
        choice = page.get_by_label("logLevel", exact=True)
        choice.focus()
        choice.select_option('"warning"')
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        expect(setting(page, "logLevel").locator(".message")).to_have_text("Saved.")
        assert '"warning"' in read(settings_file)

    @check("a value the rules refuse shows the message loupe prints and changes nothing")
    def _():
        before = read(settings_file)
        field = page.get_by_label("ticker.intervalSeconds", exact=True)
        field.fill("-1")
        # The schema's rule, checked as one types.
        expect(setting(page, "ticker.intervalSeconds").locator(".message")).to_contain_text("must be greater than 0")
        page.get_by_role("button", name="Save ticker.intervalSeconds").click()
        expect(setting(page, "ticker.intervalSeconds").locator(".message")).to_have_text(refusal)
        page.screenshot(path=os.path.join(shots, "refused.png"))
        assert read(settings_file) == before

    @check("an outside edit appears on the open page")
    def _():
        text = read(settings_file).replace('"bonjour"', '"from an editor"')
        temporary = settings_file + ".editor"
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, settings_file)
        expect(page.get_by_label("ticker.greeting", exact=True)).to_have_value("from an editor")

    @check("rollback from the history works")
    def _():
        page.get_by_role("button", name="History").click()
        change = page.locator("#changes > li").filter(has_text='"hi" → "bonjour"')
        expect(change).to_have_count(1)
        expect(change).to_contain_text("ticker.greeting")
        page.screenshot(path=os.path.join(shots, "history.png"), full_page=True)
        change.get_by_role("button").click()
        expect(page.locator("#history-status")).to_contain_text("Rolled back")
        page.get_by_role("button", name="Settings").click()
        expect(page.get_by_label("ticker.greeting", exact=True)).to_have_value("bonjour")
        text = read(settings_file)
        assert '"bonjour"' in text and "// said every tick" in text, text

    @check("the page is usable with the keyboard and readable on a phone")
    def _():
        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        phone.goto(url)
        phone.wait_for_selector("body[data-ready=true]")
        phone.keyboard.press("Tab")
        expect(phone.locator(":focus")).to_have_text("Skip to the settings")
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width} px wide on a 390 px screen"
        phone.screenshot(path=os.path.join(shots, "phone.png"), full_page=False)
        phone.close()

    @check("a request without the token is refused")
    def _():
        parts = urlsplit(url)
        bare = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        other = browser.new_page()
        response = other.goto(bare)
        assert response.status == 401, response.status
        expect(other.get_by_role("alert")).to_contain_text("needs its token")
        wrong = other.goto(bare + "?token=guess")
        assert wrong.status == 401, wrong.status
        other.close()

    @check("a document no type describes shows its values; a key added or removed in the file comes and goes")
    def _():
        other = browser.new_page()
        other.goto(untyped_url)
        other.wait_for_selector("body[data-ready=true]")
        expect(other.locator("#title")).to_have_text("Settings")
        expect(other.get_by_label("port", exact=True)).to_have_value("8080")
        expect(setting(other, "server.host")).to_be_visible()
        expect(setting(other, "legacy.mode")).to_be_visible()
        temporary = untyped_file + ".editor"
        with open(temporary, "w", encoding="utf-8") as file:
            file.write('{"port": 8080, "server": {"host": "a.example", "tls": true}}')
        os.replace(temporary, untyped_file)
        expect(setting(other, "server.tls")).to_be_visible()
        expect(setting(other, "legacy.mode")).to_have_count(0)
        expect(other.locator("section").filter(has_text="legacy")).to_have_count(0)
        # No default to go back to: a value is removed, not reset.
        expect(other.get_by_role("button", name="Reset port to its default")).to_have_count(0)
        other.get_by_role("button", name="Remove server.tls").click()
        expect(setting(other, "server.tls")).to_have_count(0)
        assert "tls" not in read(untyped_file) and '"host": "a.example"' in read(untyped_file), read(untyped_file)
        other.close()

    @check("a root that is a dictionary: an entry added on the page is written in the file, and removed again")
    def _():
        other = browser.new_page()
        other.goto(endpoints_url)
        other.wait_for_selector("body[data-ready=true]")
        original = read(endpoints_file)
        entries = other.locator("#dictionary")
        expect(entries.locator("#dictionary-keys")).to_have_text("api Remove")
        expect(setting(other, "api.port")).to_be_visible()
        # A part of an entry has no default, and goes only with its whole entry.
        expect(setting(other, "api.port").get_by_role("button", name=re.compile("Reset|Remove"))).to_have_count(0)
        expect(other.get_by_label("Its value")).to_have_value('{\n  "host": "",\n  "port": 0\n}')
        other.get_by_label("New entry's key").fill("web.internal")
        other.get_by_label("Its value").fill('{"host": "web", "port": 80}')
        other.get_by_role("button", name="Add entry").click()
        expect(other.locator("#dictionary-status")).to_have_text("Added web.internal.")
        expect(setting(other, '"web.internal".port')).to_be_visible()
        text = read(endpoints_file)
        assert '"web.internal"' in text and "// Where each service is." in text, text
        # A key that is there already is not added again.
        other.get_by_label("New entry's key").fill("api")
        other.get_by_role("button", name="Add entry").click()
        expect(other.locator("#dictionary-status")).to_have_text("an entry named api exists already: edit it below")
        other.screenshot(path=os.path.join(shots, "dictionary.png"), full_page=True)
        other.get_by_role("button", name="Remove entry web.internal").click()
        expect(other.locator("#dictionary-status")).to_have_text("Removed web.internal.")
        expect(setting(other, '"web.internal".port')).to_have_count(0)
        expect(entries.locator("#dictionary-keys")).to_have_text("api Remove")
        assert read(endpoints_file) == original, read(endpoints_file)
        # The page names a new key as Loupe's paths do (SettingsPageTests checks that Loupe reads these back).
        for key, path in QUOTED_KEYS.items():
            named = other.evaluate("pathOf", key)
            assert named == path, f"{key!r}: {named!r}, not {path!r}"
        other.close()

    browser.close()

print(f"{len(passed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
